package snapshots

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/klauspost/compress/zstd"

	"gds/snapshots/disk"
)

// CreateOptions configure a new snapshot.
type CreateOptions struct {
	// Source describes where the data came from (shown in the manifest).
	Source string
	// Gzip writes .jsonl.gz files instead of plain .jsonl.
	Gzip bool
	// Zstd writes .jsonl.zst files (zstd, about twice as fast to read as
	// gzip); it wins over Gzip.
	Zstd bool
	// Created is the creation time recorded in the manifest; zero means now.
	Created time.Time
}

// Writer writes a snapshot under a temporary name; Commit makes it appear
// at its final path at once, complete, or not at all.
type Writer struct {
	final, tmp string
	opts       CreateOptions
	files      map[Kind]*fileWriter
}

type fileWriter struct {
	path    string
	f       *os.File
	hash    hash.Hash
	buf     *bufio.Writer
	gz      io.WriteCloser // gzip or zstd, when compressing
	enc     io.Writer
	records int64
	lastKey int64
}

// Create starts a snapshot that Commit will place at dir.
func Create(dir string, opts CreateOptions) (*Writer, error) {
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return nil, err
	}
	// MkdirTemp makes the directory private; a snapshot is meant to be read.
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	if opts.Created.IsZero() {
		opts.Created = time.Now().UTC()
	}
	return &Writer{final: dir, tmp: tmp, opts: opts, files: map[Kind]*fileWriter{}}, nil
}

// Add validates rec and appends it to its kind's file. Records of a kind
// must come in strictly ascending key order.
func (w *Writer) Add(k Kind, rec Record) error {
	if err := rec.Validate(); err != nil {
		return fmt.Errorf("%s id %d: %w", k, rec.Key(), err)
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("%s id %d: %w", k, rec.Key(), err)
	}
	return w.AddRaw(k, rec.Key(), raw)
}

// AddRaw appends an already encoded and validated record (as read from
// another snapshot) to its kind's file.
func (w *Writer) AddRaw(k Kind, key int64, raw []byte) error {
	fw, err := w.file(k)
	if err != nil {
		return err
	}
	if fw.records > 0 && key <= fw.lastKey {
		return fmt.Errorf("%s: id %d written after %d; records must be added in ascending id order", k, key, fw.lastKey)
	}
	fw.lastKey = key
	fw.records++
	if _, err := fw.enc.Write(raw); err != nil {
		return err
	}
	_, err = fw.enc.Write([]byte{'\n'})
	return err
}

func (w *Writer) file(k Kind) (*fileWriter, error) {
	if fw, ok := w.files[k]; ok {
		return fw, nil
	}
	if k.New() == nil {
		return nil, fmt.Errorf("unknown snapshot kind %q", k)
	}
	name := string(k) + ".jsonl"
	switch {
	case w.opts.Zstd:
		name += ".zst"
	case w.opts.Gzip:
		name += ".gz"
	}
	f, err := os.Create(filepath.Join(w.tmp, name))
	if err != nil {
		return nil, err
	}
	fw := &fileWriter{path: name, f: f, hash: sha256.New()}
	fw.buf = bufio.NewWriterSize(io.MultiWriter(f, fw.hash), 1<<16)
	fw.enc = fw.buf
	switch {
	case w.opts.Zstd:
		zw, err := zstd.NewWriter(fw.buf, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(256<<10))
		if err != nil {
			f.Close()
			return nil, err
		}
		fw.gz, fw.enc = zw, zw
	case w.opts.Gzip:
		zw, _ := gzip.NewWriterLevel(fw.buf, gzip.BestSpeed)
		fw.gz, fw.enc = zw, zw
	}
	w.files[k] = fw
	return fw, nil
}

// Touch makes sure the snapshot holds a (possibly empty) file of kind k.
func (w *Writer) Touch(k Kind) error { _, err := w.file(k); return err }

func (fw *fileWriter) close() error {
	if fw.gz != nil {
		if err := fw.gz.Close(); err != nil {
			return err
		}
	}
	if err := fw.buf.Flush(); err != nil {
		return err
	}
	if err := fw.f.Sync(); err != nil {
		return err
	}
	return fw.f.Close()
}

// Commit finishes every file, writes the manifest, syncs and renames the
// directory into place, replacing an earlier snapshot at the same path.
func (w *Writer) Commit() (*Snapshot, error) {
	m := Manifest{Format: FormatVersion, Created: w.opts.Created, Source: w.opts.Source, Files: map[Kind]FileInfo{}}
	for k, fw := range w.files {
		if err := fw.close(); err != nil {
			w.Abort()
			return nil, fmt.Errorf("snapshot %s: %s: %w", w.final, fw.path, err)
		}
		m.Files[k] = FileInfo{Path: fw.path, SHA256: hex.EncodeToString(fw.hash.Sum(nil)), Records: fw.records}
	}
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		w.Abort()
		return nil, err
	}
	if err := disk.WriteFileAtomic(filepath.Join(w.tmp, ManifestName), append(raw, '\n'), 0o644); err != nil {
		w.Abort()
		return nil, err
	}
	if err := disk.SyncDir(w.tmp); err != nil {
		w.Abort()
		return nil, err
	}
	var old string
	if _, err := os.Stat(w.final); err == nil {
		old = w.tmp + ".old"
		if err := os.Rename(w.final, old); err != nil {
			w.Abort()
			return nil, err
		}
	}
	if err := os.Rename(w.tmp, w.final); err != nil {
		if old != "" {
			_ = os.Rename(old, w.final)
		}
		w.Abort()
		return nil, err
	}
	if err := disk.SyncDir(filepath.Dir(w.final)); err != nil {
		return nil, err
	}
	if old != "" {
		_ = os.RemoveAll(old)
	}
	return openManifest(w.final)
}

// Abort discards everything written so far.
func (w *Writer) Abort() {
	for _, fw := range w.files {
		_ = fw.f.Close()
	}
	_ = os.RemoveAll(w.tmp)
}
