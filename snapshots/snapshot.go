// Package snapshots reads and writes snapshots: the files every other part
// of the service is built from. A snapshot is a directory holding
// manifest.json and one JSON Lines file (plain, gzip or zstd) per kind of
// record.
// Reading streams and validates every record; writing is atomic.
package snapshots

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/klauspost/compress/zstd"
)

// FormatVersion is the snapshot format this code reads and writes.
const FormatVersion = 1

// FormatVersions are the snapshot format this code writes and those it
// reads, for `gds version`.
func FormatVersions() (writes string, reads []string) {
	v := strconv.Itoa(FormatVersion)
	return v, []string{v}
}

// ManifestName is the name of the manifest file inside a snapshot directory.
const ManifestName = "manifest.json"

// Manifest describes a snapshot and lets a reader check it before use.
type Manifest struct {
	Format  int               `json:"format"`
	Created time.Time         `json:"created"`
	Source  string            `json:"source"`
	Files   map[Kind]FileInfo `json:"files"`
}

// FileInfo describes one file of a snapshot.
type FileInfo struct {
	// Path is relative to the snapshot directory: "<kind>.jsonl",
	// "<kind>.jsonl.gz" or "<kind>.jsonl.zst".
	Path string `json:"path"`
	// SHA256 is the hex digest of the file's bytes as stored.
	SHA256 string `json:"sha256"`
	// Records is the number of records (non-empty lines).
	Records int64 `json:"records"`
}

// Snapshot is an opened, checked snapshot directory.
type Snapshot struct {
	Dir      string
	Manifest Manifest
	// Hash is the SHA-256 of manifest.json; it identifies the snapshot's
	// content, since the manifest holds every file's digest.
	Hash string
}

// Open reads dir's manifest and checks every file it lists: present, with
// the recorded SHA-256 and record count, and every record decoding and
// valid in ascending id order. Nothing of a snapshot that fails these
// checks is used. Each file is read once, streaming.
func Open(dir string) (*Snapshot, error) {
	s, err := openManifest(dir)
	if err != nil {
		return nil, err
	}
	for _, k := range Kinds {
		fi, ok := s.Manifest.Files[k]
		if !ok {
			continue
		}
		if err := s.verify(k, fi); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// OpenManifest reads dir's manifest without reading the files: for a
// consumer that streams every record anyway, since Each checks each file's
// digest and count when it reaches the file's end.
func OpenManifest(dir string) (*Snapshot, error) { return openManifest(dir) }

func openManifest(dir string) (*Snapshot, error) {
	raw, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", dir, err)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("snapshot %s: %s: %w", dir, ManifestName, err)
	}
	if m.Format != FormatVersion {
		return nil, fmt.Errorf("snapshot %s: %s: format %d is not supported (want %d)", dir, ManifestName, m.Format, FormatVersion)
	}
	for k, fi := range m.Files {
		if k.New() == nil {
			return nil, fmt.Errorf("snapshot %s: %s: unknown kind %q", dir, ManifestName, k)
		}
		if fi.Path != string(k)+".jsonl" && fi.Path != string(k)+".jsonl.gz" && fi.Path != string(k)+".jsonl.zst" {
			return nil, fmt.Errorf("snapshot %s: %s: file of %s must be %s.jsonl, %s.jsonl.gz or %s.jsonl.zst, got %q", dir, ManifestName, k, k, k, k, fi.Path)
		}
	}
	sum := sha256.Sum256(raw)
	return &Snapshot{Dir: dir, Manifest: m, Hash: hex.EncodeToString(sum[:])}, nil
}

func (s *Snapshot) verify(k Kind, fi FileInfo) error {
	return s.read(fi, k, nil, func(Record, Line) error { return nil })
}

// read streams one file through Decode while its raw bytes feed the
// digest, then checks digest and record count against the manifest: a file
// that does not match fails at its end, so a consumer that builds something
// from the records (and makes it visible only when complete) reads each file
// once and still uses nothing of a bad snapshot. The digest is computed on
// another goroutine, beside decompression and decoding.
func (s *Snapshot) read(fi FileInfo, k Kind, skip func(key int64, raw []byte) bool, fn func(rec Record, line Line) error) error {
	f, err := os.Open(filepath.Join(s.Dir, fi.Path))
	if err != nil {
		return fmt.Errorf("snapshot %s: %s: %w", s.Dir, fi.Path, err)
	}
	defer f.Close()
	hr := newAheadReader(f, sha256.New())
	defer hr.Close()
	var r io.Reader = hr
	// A decompressor runs on a goroutine of its own (an aheadReader),
	// deferred last so that it stops first.
	zr, err := decompressor(fi.Path, r)
	if err != nil {
		return fmt.Errorf("snapshot %s: %s: %w", s.Dir, fi.Path, err)
	}
	if zr != nil {
		defer zr.Close()
		ar := newAheadReader(zr, nil)
		defer ar.Close()
		r = ar
	}
	var records int64
	var fnErr error
	err = decode(r, k, fi.Path, skip, func(rec Record, line Line) error {
		records++
		fnErr = fn(rec, line)
		return fnErr
	})
	if fnErr != nil {
		return fnErr // the consumer's own error, as it made it
	}
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", s.Dir, err)
	}
	// Drain whatever the decompressor did not need (trailing bytes still
	// count for the digest).
	if _, err := io.Copy(io.Discard, hr); err != nil {
		return fmt.Errorf("snapshot %s: %s: %w", s.Dir, fi.Path, err)
	}
	if got := hex.EncodeToString(hr.Sum()); got != fi.SHA256 {
		return fmt.Errorf("snapshot %s: %s: checksum mismatch: manifest says %s, file has %s", s.Dir, fi.Path, fi.SHA256, got)
	}
	if records != fi.Records {
		return fmt.Errorf("snapshot %s: %s: record count mismatch: manifest says %d, file has %d", s.Dir, fi.Path, fi.Records, records)
	}
	return nil
}

// decompressor returns a reader of the decompressed bytes of r, a file
// compressed as its path's ending says (.gz, .zst); nil for a plain file.
// zstd decodes synchronously (read calls it on a goroutine of its own),
// and skips the frames' checksums: the file's SHA-256 covers every byte.
func decompressor(path string, r io.Reader) (io.ReadCloser, error) {
	switch {
	case strings.HasSuffix(path, ".gz"):
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, err
		}
		return zr, nil
	case strings.HasSuffix(path, ".zst"):
		zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.IgnoreChecksum(true), zstd.WithDecoderMaxWindow(64<<20))
		if err != nil {
			return nil, err
		}
		return zr.IOReadCloser(), nil
	}
	return nil, nil
}

// Has reports whether the snapshot holds a file of kind k.
func (s *Snapshot) Has(k Kind) bool { _, ok := s.Manifest.Files[k]; return ok }

// Count returns the number of records of kind k (0 when absent).
func (s *Snapshot) Count(k Kind) int64 { return s.Manifest.Files[k].Records }

// Records returns the number of records of every kind.
func (s *Snapshot) Records() int64 {
	var n int64
	for _, fi := range s.Manifest.Files {
		n += fi.Records
	}
	return n
}

// Line is one raw record as read from a file.
type Line struct {
	// Number is the 1-based line number in the file.
	Number int64
	// Key is the record's key (its id).
	Key int64
	// Raw is the line's JSON, valid until the callback returns.
	Raw []byte
}

// Each streams the records of kind k in file order (ascending key), decoding
// and validating each; fn receives the decoded record and its raw line. A
// bad record stops the walk with an error naming the file, line and reason.
// A kind the snapshot does not hold yields no records.
func (s *Snapshot) Each(k Kind, fn func(rec Record, line Line) error) error {
	return s.EachWith(k, EachOptions{}, fn)
}

// EachOptions change how EachWith reads a file.
type EachOptions struct {
	// Skip, when set, is offered every line whose key can be read without
	// decoding it (the line starts {"<key field>":<digits>, as every file
	// this package writes does). When it returns true the line is neither
	// decoded nor validated, and fn receives a nil Record with the line:
	// the caller vouches that it has seen these very bytes validated
	// before (an incremental build comparing record hashes). Order, count
	// and digest are checked for every line all the same. Skip is called
	// in file order but on another goroutine than fn, ahead of it: it must
	// not share unsynchronised state with fn.
	Skip func(key int64, raw []byte) bool
}

// EachWith is Each with options.
func (s *Snapshot) EachWith(k Kind, opts EachOptions, fn func(rec Record, line Line) error) error {
	fi, ok := s.Manifest.Files[k]
	if !ok {
		return nil
	}
	return s.read(fi, k, opts.Skip, fn)
}

// Decode streams JSON Lines records of kind k from r. name is used in
// errors. It is the one parser of snapshot records (and a fuzz target).
func Decode(r io.Reader, k Kind, name string, fn func(rec Record, line Line) error) error {
	return decode(r, k, name, nil, fn)
}

// keyPrefix is how a record of kind k written by this package starts: its
// key field first.
func keyPrefix(k Kind) string {
	switch k {
	case Roles:
		return `{"character_id":`
	case Documents:
		return `{"seq":`
	}
	return `{"id":`
}

// QuickKey reads the key of a record line that starts with prefix followed
// by a decimal integer and a comma or closing brace, without decoding the
// line. ok is false for any other shape (the line must then be decoded).
func QuickKey(line []byte, prefix string) (key int64, ok bool) {
	if len(line) <= len(prefix) || string(line[:len(prefix)]) != prefix {
		return 0, false
	}
	digits := line[len(prefix):]
	n := 0
	for n < len(digits) && n < 18 && '0' <= digits[n] && digits[n] <= '9' {
		key = key*10 + int64(digits[n]-'0')
		n++
	}
	if n == 0 || n == len(digits) || (digits[n] != ',' && digits[n] != '}') || (digits[0] == '0' && n > 1) {
		return 0, false
	}
	return key, true
}

// decodeStrict decodes one JSON object, refusing unknown fields and
// trailing data so typos in a file are reported rather than ignored.
func decodeStrict(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return cleanJSONError(err)
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON object")
	}
	return nil
}

func cleanJSONError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := jsonPath(te.Field)
		if field == "" {
			return fmt.Errorf("record is %s, want a JSON object", te.Value)
		}
		return fmt.Errorf("%s: %s is not a valid %s", field, te.Value, te.Type)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, se)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated JSON record")
	}
	return err
}

// jsonPath drops the Go names of embedded structs (e.g. "Entity.id" becomes
// "id") from a decoding error's field path, so errors speak the file's names.
func jsonPath(field string) string {
	parts := strings.Split(field, ".")
	out := parts[:0]
	for _, p := range parts {
		if p != "" && unicode.IsUpper(rune(p[0])) {
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, ".")
}
