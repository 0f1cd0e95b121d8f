//go:build image

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"gds/snapshots/envtest"
)

// TestImage inspects the OCI archive make image wrote (GDS_IMAGE): the
// index names one manifest tagged with the version, every blob matches
// its digest, the config runs gds as the non-root user with /data as a
// volume and carries the OCI labels; the layer holds the binary, the
// passwd entry, the CA certificates and /data owned by the user. The
// binary taken from the layer then runs (`gds version --json`) and says
// the version and revision the labels say. Containers do not run here,
// so this is as far as the image is tried.
func TestImage(t *testing.T) {
	path := envtest.Getenv(t, "the archive (make image-check)", "GDS_IMAGE")[0]
	files := readTar(t, mustOpen(t, path))
	var index struct {
		Manifests []struct {
			MediaType, Digest string
			Annotations       map[string]string
		}
	}
	unmarshal(t, files["index.json"], &index)
	if len(index.Manifests) != 1 {
		t.Fatalf("index.json: %d manifests, want 1", len(index.Manifests))
	}
	want := os.Getenv("GDS_IMAGE_VERSION")
	if ref := index.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; ref != "gds:"+want {
		t.Errorf("tagged %q, want gds:%s", ref, want)
	}
	var manifest struct {
		Config struct{ Digest string }
		Layers []struct{ MediaType, Digest string }
	}
	unmarshal(t, blob(t, files, index.Manifests[0].Digest), &manifest)
	var config struct {
		Created      time.Time
		Architecture string
		OS           string
		Config       struct {
			User       string
			Entrypoint []string
			Cmd        []string
			Env        []string
			WorkingDir string
			Volumes    map[string]struct{}
			Labels     map[string]string
		}
	}
	unmarshal(t, blob(t, files, manifest.Config.Digest), &config)
	c := config.Config
	labels := c.Labels
	created := labels["org.opencontainers.image.created"]
	switch {
	case c.User != "65532:65532":
		t.Errorf("user %q, want 65532:65532 (not root)", c.User)
	case len(c.Entrypoint) != 1 || c.Entrypoint[0] != "/usr/local/bin/gds":
		t.Errorf("entrypoint %q", c.Entrypoint)
	case len(c.Cmd) == 0 || c.Cmd[0] != "serve":
		t.Errorf("cmd %q", c.Cmd)
	case len(c.Volumes) != 1:
		t.Errorf("volumes %v, want /data", c.Volumes)
	case labels["org.opencontainers.image.version"] != want:
		t.Errorf("version label %q, want %q", labels["org.opencontainers.image.version"], want)
	case labels["org.opencontainers.image.revision"] != os.Getenv("GDS_IMAGE_REVISION"):
		t.Errorf("revision label %q, want %q", labels["org.opencontainers.image.revision"], os.Getenv("GDS_IMAGE_REVISION"))
	case labels["org.opencontainers.image.source"] == "":
		t.Errorf("no source label: %v", labels)
	case created != config.Created.UTC().Format(time.RFC3339):
		t.Errorf("created label %q, config created %v (both SOURCE_DATE_EPOCH)", created, config.Created)
	case config.OS != "linux":
		t.Errorf("os %q", config.OS)
	}
	if _, ok := c.Volumes["/data"]; !ok {
		t.Errorf("volumes %v, want /data", c.Volumes)
	}
	t.Logf("config: user %s, entrypoint %q, cmd %q, volumes %v, workdir %s, env %q, labels %v",
		c.User, c.Entrypoint, c.Cmd, c.Volumes, c.WorkingDir, c.Env, labels)

	// The layers, applied in order.
	root := map[string]*tar.Header{}
	contents := map[string][]byte{}
	for _, l := range manifest.Layers {
		rd := io.Reader(bytes.NewReader(blob(t, files, l.Digest)))
		if strings.HasSuffix(l.MediaType, "+gzip") {
			zr, err := gzip.NewReader(rd)
			if err != nil {
				t.Fatal(err)
			}
			rd = zr
		}
		eachTarEntry(t, rd, func(h *tar.Header, tr *tar.Reader) {
			name := strings.TrimSuffix(strings.TrimPrefix(h.Name, "./"), "/")
			root[name] = h
			contents[name], _ = io.ReadAll(tr)
		})
	}
	if h := root["data"]; h == nil || h.Typeflag != tar.TypeDir || h.Uid != 65532 {
		t.Errorf("/data: %+v, want a directory owned by 65532", h)
	}
	if h := root["tmp"]; h == nil || h.Typeflag != tar.TypeDir || h.Mode&0o1777 != 0o1777 {
		t.Errorf("/tmp: %+v, want a directory of mode 1777", h)
	}
	if !bytes.Contains(contents["etc/passwd"], []byte("gds:x:65532:65532:")) {
		t.Errorf("/etc/passwd has no entry for 65532:\n%s", contents["etc/passwd"])
	}
	if !x509.NewCertPool().AppendCertsFromPEM(contents["etc/ssl/certs/ca-certificates.crt"]) {
		t.Error("/etc/ssl/certs/ca-certificates.crt holds no certificate")
	}
	if h := root["usr/local/bin/gds"]; h == nil || h.Mode&0o111 == 0 {
		t.Fatalf("/usr/local/bin/gds: %+v, want an executable", h)
	}
	if h := root["usr/local/bin/gds"]; !h.ModTime.Equal(config.Created) {
		t.Errorf("the binary is dated %v, the image %v (SOURCE_DATE_EPOCH)", h.ModTime, config.Created)
	}

	if config.Architecture != runtime.GOARCH {
		t.Skipf("a %s image: its binary does not run on %s", config.Architecture, runtime.GOARCH)
	}
	bin := filepath.Join(t.TempDir(), "gds")
	if err := os.WriteFile(bin, contents["usr/local/bin/gds"], 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("gds version from the image: %v", err)
	}
	var v struct{ Version, Revision, Platform string }
	unmarshal(t, out, &v)
	if v.Version != want || v.Revision != labels["org.opencontainers.image.revision"] || v.Platform != "linux/"+config.Architecture {
		t.Errorf("gds version from the image says %s, want version %s, revision %s, linux/%s", out, want,
			labels["org.opencontainers.image.revision"], config.Architecture)
	}
	text, _ := exec.Command(bin, "version").Output()
	t.Logf("gds version from the image's layer:\n%s", text)

	// The static binary builds and queries a generation of the sample.
	data := filepath.Join(t.TempDir(), "data")
	if out, err := exec.Command(bin, "index", "--snapshot", "../../snapshots/sample", "--data", data).CombinedOutput(); err != nil {
		t.Fatalf("gds index from the image: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "query", "--data", data, "--category", "solar_system", "--format", "json", "name:jita").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "30000142") {
		t.Errorf("gds query from the image: %v\n%s", err, out)
	}
}

func mustOpen(t *testing.T, path string) io.Reader {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}

func readTar(t *testing.T, r io.Reader) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	eachTarEntry(t, r, func(h *tar.Header, tr *tar.Reader) {
		files[h.Name], _ = io.ReadAll(tr)
	})
	return files
}

// blob returns the blob of a digest, checked against it.
func blob(t *testing.T, files map[string][]byte, digest string) []byte {
	t.Helper()
	hexSum, ok := strings.CutPrefix(digest, "sha256:")
	b, have := files["blobs/sha256/"+hexSum]
	if !ok || !have {
		t.Fatalf("no blob %s", digest)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != hexSum {
		t.Fatalf("blob %s has digest %x", digest, sum)
	}
	return b
}

func unmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(fmt.Errorf("%w: %.200s", err, b))
	}
}
