package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestFleetFileBucket runs the fleet commands with the real binary over a
// file:// bucket: gds index --publish, then a replica (gds serve --follow)
// that downloads the generation, answers with the indexer's ETag and
// Last-Modified, reports the bucket in /admin/status and /metrics, and
// refuses to reindex. (make test-fleet does the same over S3 with faults.)
func TestFleetFileBucket(t *testing.T) {
	work := t.TempDir()
	bucket := "file://" + filepath.Join(work, "bucket") + "?create_dir=1"
	idx := filepath.Join(work, "indexer")
	out, err := runGDSBin(t, "index", "--snapshot", sampleSnapshot, "--data", idx, "--publish", bucket)
	if err != nil || !strings.Contains(out, "generation 1 published") {
		t.Fatalf("gds index --publish: %v\n%s", err, out)
	}
	replica := serveBinary(t, filepath.Join(work, "replica"), "--follow", strings.TrimSuffix(bucket, "?create_dir=1"), "--follow-interval", "200ms")
	indexer := serveBinary(t, idx)

	const q = "/latest/search/?categories=character,corporation&search=kar"
	var etags, modified []string
	for _, s := range []*faultServer{indexer, replica} {
		resp, err := s.client.Get("http://" + s.public + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("search = %d", resp.StatusCode)
		}
		etags = append(etags, resp.Header.Get("ETag"))
		modified = append(modified, resp.Header.Get("Last-Modified"))
	}
	if etags[0] != etags[1] || modified[0] != modified[1] || etags[0] == "" || modified[0] == "" {
		t.Fatalf("indexer and replica differ: ETag %q, Last-Modified %q", etags, modified)
	}

	resp, err := replica.client.Post("http://"+replica.admin+"/admin/reindex", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("reindex on a replica = %d, want 409", resp.StatusCode)
	}
	_, body := replica.get(t, "http://"+replica.admin+"/admin/status")
	var st struct {
		Fleet struct {
			Follow struct {
				Live    uint64 `json:"live_generation"`
				Pointer uint64 `json:"pointer_generation"`
			} `json:"follow"`
		} `json:"fleet"`
	}
	if err := json.Unmarshal(body, &st); err != nil || st.Fleet.Follow.Live != 1 || st.Fleet.Follow.Pointer != 1 {
		t.Fatalf("replica status: %v %s", err, body)
	}
	if lag := replica.metric(t, "gds_fleet_lag_generations"); lag != 0 {
		t.Fatalf("gds_fleet_lag_generations = %v", lag)
	}
	replica.stop(t)
	indexer.stop(t)
}
