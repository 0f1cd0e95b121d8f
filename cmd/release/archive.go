package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// entry is one file or directory of an archive: its name inside, and its
// content from a file on disk (src) or from memory (data).
type entry struct {
	name string
	dir  bool
	exec bool
	src  string
	data []byte
}

// dirEntries lists dir's files and directories under prefix. Modes are
// normalized (0755 for directories and, with keepExec, for files with an
// execute bit, 0644 for the rest), so a checkout's umask does not show.
func dirEntries(dir, prefix string, keepExec bool) ([]entry, error) {
	var es []entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		name := path.Join(prefix, filepath.ToSlash(rel))
		switch {
		case d.IsDir():
			es = append(es, entry{name: name, dir: true})
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			es = append(es, entry{name: name, src: p, exec: keepExec && fi.Mode()&0o111 != 0})
		default:
			return fmt.Errorf("%s: neither a file nor a directory", p)
		}
		return nil
	})
	return es, err
}

// withParents adds an entry for every directory the entries are in.
func withParents(es []entry) []entry {
	have := map[string]bool{}
	for _, e := range es {
		have[e.name] = true
	}
	for _, e := range es {
		for d := path.Dir(e.name); d != "." && d != "/" && !have[d]; d = path.Dir(d) {
			have[d] = true
			es = append(es, entry{name: d, dir: true})
		}
	}
	return es
}

// writeArchive writes the entries, sorted by name, as a tar (gzipped when
// gz) whose every byte follows from the entries and mtime: owners root,
// no user or group names, normalized modes, PAX records only where a
// name needs them, and a gzip header without name or time. The file is
// written beside path and renamed into place.
func writeArchive(dst string, es []entry, mtime time.Time, gz bool) error {
	es = withParents(es)
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	var buf bytes.Buffer
	var w io.Writer = &buf
	var zw *gzip.Writer
	if gz {
		zw, _ = gzip.NewWriterLevel(&buf, gzip.BestCompression)
		w = zw
	}
	tw := tar.NewWriter(w)
	for _, e := range es {
		if err := writeEntry(tw, e, mtime); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return err
		}
	}
	tmp := dst + ".part"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

func writeEntry(tw *tar.Writer, e entry, mtime time.Time) error {
	h := &tar.Header{Name: e.name, ModTime: mtime, Mode: 0o644, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	var data []byte
	switch {
	case e.dir:
		h.Name += "/"
		h.Mode, h.Typeflag = 0o755, tar.TypeDir
	case e.src != "":
		b, err := os.ReadFile(e.src)
		if err != nil {
			return err
		}
		data = b
	default:
		data = e.data
	}
	if e.exec {
		h.Mode = 0o755
	}
	h.Size = int64(len(data))
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("%s: %w", e.name, err)
	}
	_, err := tw.Write(data)
	return err
}
