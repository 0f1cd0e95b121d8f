package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	"gds/api/admin"
	"gds/indexer"
	"gds/indexer/affcol"
	"gds/indexer/fleet"
	"gds/indexer/nametable"
	"gds/indexer/recstore"
	"gds/indexer/valuecol"
	"gds/snapshots"
)

// version is the release version, set at link time by make release and
// make image (go build -ldflags "-X main.version=v1.2.3"). Empty, the
// module version Go stamped from the repository stands in, or "devel".
var version string

func init() {
	register("version", "prints the release version, revision, Go version and file formats of this binary", runVersion)
}

func runVersion(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "version", "[--json]")
	asJSON := fs.Bool("json", false, "print the build as JSON (the \"build\" of /admin/status)")
	if _, err := parseFlags(env, fs, args); err != nil {
		return err
	}
	b := currentBuild()
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(b)
	}
	return printVersion(env, b)
}

// currentBuild describes this binary from its build information (what
// `go version -m` shows) and the versions each format package declares.
func currentBuild() admin.Build {
	b := admin.Build{Version: "devel", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, Formats: formats()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			b.Version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.time":
				if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
					b.RevisionTime = &t
				}
			case "vcs.modified":
				b.Dirty = s.Value == "true"
			case "-tags":
				b.Tags = strings.Split(s.Value, ",")
			}
		}
	}
	if version != "" {
		b.Version = version
	}
	return b
}

// formats gathers the versions the format packages declare.
func formats() []admin.Format {
	f := func(name string, versions func() (string, []string)) admin.Format {
		w, r := versions()
		return admin.Format{Name: name, Writes: w, Reads: r}
	}
	return []admin.Format{
		f("snapshot", snapshots.FormatVersions),
		f("name table", nametable.FormatVersions),
		f("name folding", nametable.FoldVersions),
		f("record store", recstore.FormatVersions),
		f("record index delta", recstore.DeltaFormatVersions),
		f("value columns", valuecol.FormatVersions),
		f("affiliation columns", affcol.FormatVersions),
		f("analysts' fields", indexer.FieldsVersions),
		f("fleet manifest", fleet.FormatVersions),
	}
}

// printVersion writes b as Prometheus prints its --version, then the formats.
func printVersion(env *Env, b admin.Build) error {
	w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "gds, version %s\n", b.Version)
	if b.Revision != "" {
		rev := b.Revision
		if b.Dirty {
			rev += " (modified)"
		}
		fmt.Fprintf(w, "  revision:\t%s\n", rev)
	}
	if b.RevisionTime != nil {
		fmt.Fprintf(w, "  revision time:\t%s\n", b.RevisionTime.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "  go version:\t%s\n", b.GoVersion)
	fmt.Fprintf(w, "  platform:\t%s\n", b.Platform)
	if len(b.Tags) > 0 {
		fmt.Fprintf(w, "  tags:\t%s\n", strings.Join(b.Tags, ","))
	}
	fmt.Fprintln(w, "formats:\twrites\treads")
	for _, f := range b.Formats {
		fmt.Fprintf(w, "  %s\t%s\t%s\n", f.Name, f.Writes, strings.Join(f.Reads, " "))
	}
	return w.Flush()
}
