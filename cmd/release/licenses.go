package main

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// module is one module linked into a binary, with where its source is.
type module struct {
	Path, Version string
	Dir           string
	files         []licenseFile
}

type licenseFile struct {
	name string
	text []byte
}

// linkedModules are the modules a binary links, as its build information
// lists them (replacements followed), with their directories in the
// module cache (dirs: module path and version → directory).
func linkedModules(bin string, dirs map[string]string) ([]module, string, error) {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return nil, "", err
	}
	var mods []module
	var missing []string
	for _, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		m := module{Path: d.Path, Version: d.Version, Dir: dirs[d.Path+"@"+d.Version]}
		if m.Dir == "" {
			missing = append(missing, d.Path+"@"+d.Version)
		}
		mods = append(mods, m)
	}
	if len(missing) > 0 {
		return nil, "", fmt.Errorf("not in the module cache (go mod download): %s", strings.Join(missing, ", "))
	}
	slices.SortFunc(mods, func(a, b module) int { return strings.Compare(a.Path, b.Path) })
	return mods, bi.GoVersion, nil
}

// moduleDirs maps path@version to directory for every module of the
// build list of the module in dir (go list -m -json all).
func moduleDirs(out []byte) (map[string]string, error) {
	dirs := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var m struct {
			Path, Version, Dir string
			Replace            *struct{ Path, Version, Dir string }
		}
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return dirs, nil
		} else if err != nil {
			return nil, fmt.Errorf("go list -m -json all: %w", err)
		}
		if m.Replace != nil {
			m.Path, m.Version, m.Dir = m.Replace.Path, m.Replace.Version, m.Replace.Dir
		}
		if m.Dir != "" {
			dirs[m.Path+"@"+m.Version] = m.Dir
		}
	}
}

// licenseName matches the files that carry a module's license terms.
var licenseName = regexp.MustCompile(`(?i)^(licen[cs]e|copying|notice|patents)([.-].*)?$`)

// readLicenses reads the license files at the root of dir.
func readLicenses(dir string) ([]licenseFile, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var fs []licenseFile
	for _, de := range des {
		if de.Type().IsRegular() && licenseName.MatchString(de.Name()) {
			b, err := os.ReadFile(filepath.Join(dir, de.Name()))
			if err != nil {
				return nil, err
			}
			fs = append(fs, licenseFile{name: de.Name(), text: b})
		}
	}
	return fs, nil
}

// classify names the license a text most likely is (an SPDX identifier),
// for the summary table; the full texts follow it in the notes.
func classify(text []byte) string {
	t := strings.Join(strings.Fields(string(text)), " ")
	has := func(s ...string) bool {
		for _, x := range s {
			if !strings.Contains(t, x) {
				return false
			}
		}
		return true
	}
	switch {
	case has("Apache License", "Version 2.0"):
		return "Apache-2.0"
	case has("Mozilla Public License", "2.0"):
		return "MPL-2.0"
	case has("Permission is hereby granted, free of charge"):
		return "MIT"
	case has("Permission to use, copy, modify, and/or distribute this software for any purpose"),
		has("Permission to use, copy, modify, and distribute this software for any purpose"):
		return "ISC"
	case has("Redistribution and use in source and binary forms", "Neither the name"),
		has("Redistribution and use in source and binary forms", "names of its contributors may be used"):
		return "BSD-3-Clause"
	case has("Redistribution and use in source and binary forms"):
		return "BSD-2-Clause"
	}
	return "see text"
}

// licenseNotes writes the notes: a table of every module and its license,
// then each module's license files in full.
func licenseNotes(w io.Writer, version, platform, goVersion, goroot string, mods []module) error {
	goFiles, err := readLicenses(goroot)
	if err != nil {
		return fmt.Errorf("Go's license: %w", err)
	}
	mods = append([]module{{Path: "Go (standard library and runtime)", Version: goVersion, files: goFiles}}, mods...)
	var none []string
	for i := range mods {
		if mods[i].files != nil {
			continue
		}
		if mods[i].files, err = readLicenses(mods[i].Dir); err != nil {
			return err
		}
		if len(mods[i].files) == 0 {
			none = append(none, mods[i].Path)
		}
	}
	if len(none) > 0 {
		return fmt.Errorf("no license file at the root of %s", strings.Join(none, ", "))
	}
	fmt.Fprintf(w, "# Licenses of the software in gds %s (%s)\n\n", version, platform)
	fmt.Fprintf(w, "The gds binary is built with Go and links the modules below. Each is used under its\n")
	fmt.Fprintf(w, "license, whose full text follows the table (as found at the root of the module).\n\n")
	fmt.Fprintf(w, "| module | version | license |\n|---|---|---|\n")
	for _, m := range mods {
		fmt.Fprintf(w, "| %s | %s | %s |\n", m.Path, m.Version, classify(m.files[0].text))
	}
	for _, m := range mods {
		fmt.Fprintf(w, "\n## %s %s\n", m.Path, m.Version)
		for _, f := range m.files {
			fmt.Fprintf(w, "\n### %s\n\n````text\n%s\n````\n", f.name, bytes.TrimRight(f.text, "\n"))
		}
	}
	return nil
}
