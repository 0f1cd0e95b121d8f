//go:build proxy

package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestCachingProxy puts a real shared cache, Debian's nginx with
// proxy_cache, in front of the real binary and shows that answers to two
// compatibility dates (and to no date, and to another tenant) never share
// a cache entry: gds names the headers its unprefixed answers depend on
// in Vary, and nginx keys its entries by them. make test-proxy installs
// nginx when missing.
func TestCachingProxy(t *testing.T) {
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		if _, statErr := os.Stat("/usr/sbin/nginx"); statErr != nil {
			t.Fatal("nginx not found (make test-proxy installs it)")
		}
		nginx = "/usr/sbin/nginx"
	}
	gds := serveBinary(t, t.TempDir(), "--snapshot", sampleSnapshot)
	proxy := startNginx(t, nginx, gds.public)

	type answer struct {
		status            int
		cache, date, body string
	}
	get := func(path string, headers ...string) answer {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+proxy+path, nil)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		code, hdr, body := exchange(t, http.DefaultClient, req)
		return answer{code, hdr.Get("X-Cache-Status"), hdr.Get("X-Compatibility-Date"), string(body)}
	}
	const path = "/universe/types/34"
	const date = "X-Compatibility-Date"
	first := get(path, date, "2017-06-01")
	if first.status != 200 || first.cache != "MISS" || first.date != "2017-01-01" {
		t.Fatalf("first: %+v", first)
	}
	// The proxy caches what gds lets it: the same date again is a hit.
	if again := get(path, date, "2017-06-01"); again.cache != "HIT" || again.date != "2017-01-01" {
		t.Fatalf("the same date again: %+v", again)
	}
	// Another date is another entry, with its own answer, and stays so.
	for range 2 {
		if other := get(path, date, "2026-08-18"); other.status != 200 || other.date == "2017-01-01" || other.date == "" {
			t.Fatalf("another date: %+v", other)
		}
	}
	if other := get(path, date, "2026-08-18"); other.cache != "HIT" {
		t.Fatalf("another date, cached: %+v", other)
	}
	if again := get(path, date, "2017-06-01"); again.date != "2017-01-01" {
		t.Fatalf("the first date after the second: %+v", again)
	}
	// No date: ESI's oldest date, as its own entry.
	if none := get(path); none.status != 200 || none.date != "2017-01-01" || none.cache == "HIT" {
		t.Fatalf("no date: %+v", none)
	}
	// Another tenant is refused by gds, never answered from the cache.
	if tenant := get(path, date, "2026-08-18", "X-Tenant", "serenity"); tenant.status != 400 || tenant.cache == "HIT" {
		t.Fatalf("another tenant: %+v", tenant)
	}
	// A language is its own entry too.
	en, de := get(path, date, "2026-08-18", "Accept-Language", "en"), get(path, date, "2026-08-18", "Accept-Language", "de")
	if en.status != 200 || de.status != 200 || de.cache == "HIT" {
		t.Fatalf("languages: %+v %+v", en, de)
	}
}

// startNginx runs nginx in the foreground on a free loopback port with a
// proxy cache in front of upstream, and returns its address.
func startNginx(t *testing.T, bin, upstream string) string {
	t.Helper()
	dir := t.TempDir()
	addr := freeAddr(t)
	conf := fmt.Sprintf(`daemon off;
master_process off;
user root;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  proxy_cache_path %[1]s/cache keys_zone=gds:1m;
  server {
    listen %[2]s;
    location / {
      proxy_pass http://%[3]s;
      proxy_http_version 1.1;
      proxy_cache gds;
      add_header X-Cache-Status $upstream_cache_status always;
    }
  }
}
`, dir, addr, upstream)
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, "-c", path, "-p", dir)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("nginx: %s%s", out.String(), log)
		}
	})
	if !poll(30*time.Second, func() bool {
		failIfExited(t, exited, "nginx exited: %s", out.String())
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}) {
		t.Fatal("nginx did not listen within 30s")
	}
	return addr
}
