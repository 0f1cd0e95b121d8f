// Package fleet publishes index generations to object storage and follows
// them: one indexer uploads every generation it makes live, replicas
// download and serve them. Buckets are reached through gocloud.dev/blob, so
// one URL names S3 (s3://), Google Cloud Storage (gs://), Azure Blob
// (azblob://), a directory (file://) or memory (mem://, tests).
//
// Layout of a bucket (under the URL's prefix):
//
//	objects/<sha256>           a generation file, addressed by its content
//	generations/<n>.json       a generation's manifest: every file's path, size and SHA-256
//	LATEST                     the pointer: the newest generation and its manifest's SHA-256
//
// The pointer is written last, so a reader never sees a generation whose
// objects are not all there; a file unchanged between generations (an
// incremental build hard-links them) is one object, uploaded once.
package fleet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // azblob://
	_ "gocloud.dev/blob/fileblob"  // file://
	_ "gocloud.dev/blob/gcsblob"   // gs://
	_ "gocloud.dev/blob/memblob"   // mem://
	_ "gocloud.dev/blob/s3blob"    // s3://
	"gocloud.dev/gcerrors"
)

// Keys and limits of the bucket layout.
const (
	PointerKey     = "LATEST"
	objectsPrefix  = "objects/"
	manifestPrefix = "generations/"
	// FormatVersion is the version of manifests and pointers written here.
	FormatVersion = 1
	// maxDocument bounds a pointer or manifest read from a bucket.
	maxDocument = 64 << 20
)

// FormatVersions are the version of the manifests and pointers this code
// publishes and those it follows, for `gds version`.
func FormatVersions() (writes string, reads []string) {
	v := strconv.Itoa(FormatVersion)
	return v, []string{v}
}

// IsURL reports whether s names a bucket rather than a local path.
func IsURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && len(u.Scheme) > 1 && strings.Contains(s, "://")
}

// OpenBucket opens the bucket a URL names. Credentials come from where
// each driver's SDK looks for them (environment, shared config files,
// instance or workload roles); see docs/fleet.md.
func OpenBucket(ctx context.Context, rawURL string) (*blob.Bucket, error) {
	if !IsURL(rawURL) {
		return nil, fmt.Errorf("%q is not a bucket URL (s3://, gs://, azblob://, file://, mem://)", rawURL)
	}
	b, err := blob.OpenBucket(ctx, rawURL)
	if err != nil {
		return nil, fmt.Errorf("opening bucket %s: %w", Redact(rawURL), err)
	}
	return b, nil
}

// Redact drops a URL's user information and query values (which may hold
// secrets) for logs and status pages.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "<unparsable URL>"
	}
	u.User = nil
	q := u.Query()
	for k := range q {
		switch k {
		case "prefix", "region", "endpoint", "use_path_style", "create_dir":
		default:
			q.Set(k, "…")
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// File is one file of a generation.
type File struct {
	// Path is relative to the generation's directory, with slashes.
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Manifest lists a generation's files.
type Manifest struct {
	Format     int       `json:"format"`
	Generation uint64    `json:"generation"`
	Created    time.Time `json:"created"`
	Files      []File    `json:"files"`
}

// Bytes is the total size of the manifest's files.
func (m *Manifest) Bytes() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// Pointer names the newest published generation.
type Pointer struct {
	Format     int       `json:"format"`
	Generation uint64    `json:"generation"`
	Manifest   string    `json:"manifest"`
	SHA256     string    `json:"manifest_sha256"`
	Published  time.Time `json:"published"`
}

func objectKey(sum string) string         { return objectsPrefix + sum }
func manifestKey(gen uint64) string       { return fmt.Sprintf("%s%06d.json", manifestPrefix, gen) }
func isHexSHA256(s string) bool           { _, err := hex.DecodeString(s); return err == nil && len(s) == 64 }
func sha256Hex(b []byte) string           { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
func isNotFound(err error) bool           { return gcerrors.Code(err) == gcerrors.NotFound }
func wrapKey(key string, err error) error { return fmt.Errorf("%s: %w", key, err) }

// checkManifest refuses a manifest that could write outside a generation
// directory or does not say what it is.
func checkManifest(m *Manifest, gen uint64) error {
	if m.Format != FormatVersion {
		return fmt.Errorf("manifest format %d is not supported (want %d)", m.Format, FormatVersion)
	}
	if m.Generation != gen {
		return fmt.Errorf("manifest is of generation %d, pointer says %d", m.Generation, gen)
	}
	seen := make(map[string]bool, len(m.Files))
	for _, f := range m.Files {
		clean := path.Clean(f.Path)
		if f.Path == "" || clean != f.Path || path.IsAbs(f.Path) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(f.Path, "\\") {
			return fmt.Errorf("manifest file path %q is not a clean relative path", f.Path)
		}
		if seen[f.Path] {
			return fmt.Errorf("manifest names %q twice", f.Path)
		}
		seen[f.Path] = true
		if !isHexSHA256(f.SHA256) || f.Size < 0 {
			return fmt.Errorf("manifest entry %q has no valid SHA-256 or size", f.Path)
		}
	}
	return nil
}

// readSmall reads a whole small object (a pointer or manifest).
func readSmall(ctx context.Context, b *blob.Bucket, key string) ([]byte, error) {
	r, err := b.NewReader(ctx, key, nil)
	if err != nil {
		return nil, wrapKey(key, err)
	}
	defer r.Close()
	raw, err := io.ReadAll(io.LimitReader(r, maxDocument+1))
	if err != nil {
		return nil, wrapKey(key, err)
	}
	if len(raw) > maxDocument {
		return nil, fmt.Errorf("%s: larger than %d bytes", key, maxDocument)
	}
	return raw, nil
}

// ParsePointer decodes a pointer object.
func ParsePointer(raw []byte) (Pointer, error) {
	var p Pointer
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("pointer: %w", err)
	}
	if p.Format != FormatVersion {
		return p, fmt.Errorf("pointer format %d is not supported (want %d)", p.Format, FormatVersion)
	}
	if p.Generation == 0 || p.Manifest != manifestKey(p.Generation) || !isHexSHA256(p.SHA256) {
		return p, errors.New("pointer does not name a generation's manifest and its SHA-256")
	}
	return p, nil
}

// ReadPointer reads the bucket's pointer; ok is false when there is none.
func ReadPointer(ctx context.Context, b *blob.Bucket) (p Pointer, raw []byte, ok bool, err error) {
	raw, err = readSmall(ctx, b, PointerKey)
	if isNotFound(err) {
		return p, nil, false, nil
	}
	if err != nil {
		return p, nil, false, err
	}
	p, err = ParsePointer(raw)
	return p, raw, err == nil, err
}

// ReadManifest reads and checks the manifest a pointer names.
func ReadManifest(ctx context.Context, b *blob.Bucket, p Pointer) (*Manifest, error) {
	raw, err := readSmall(ctx, b, p.Manifest)
	if err != nil {
		return nil, err
	}
	if got := sha256Hex(raw); got != p.SHA256 {
		return nil, fmt.Errorf("%s: checksum mismatch: pointer says %s, object has %s", p.Manifest, p.SHA256, got)
	}
	m, err := ParseManifest(raw, p.Generation)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Manifest, err)
	}
	return m, nil
}

// ParseManifest decodes and checks generation gen's manifest.
func ParseManifest(raw []byte, gen uint64) (*Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if err := checkManifest(&m, gen); err != nil {
		return nil, err
	}
	return &m, nil
}
