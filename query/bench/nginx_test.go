//go:build bench

package bench

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// The second ceiling: Debian's nginx (bench-deps installs it) answering
// every request on a scenario's port with the scenario's prepared answer
// (`return` with the body in the configuration, split into parts joined
// at answer time where it is longer than one configuration parameter;
// gds's headers added), two
// worker processes, no access log, keep-alive connections never closed by
// the server. Its answers carry nginx's own Server and Connection headers,
// so their size on the wire differs a little from gds's; the table says by
// how much.

// nginxBinary is nginx on PATH or Debian's.
func nginxBinary() (string, error) {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx", nil
	}
	return "", fmt.Errorf("nginx not installed (apt-get install nginx-light or nginx; `make bench-deps` does it)")
}

// nginxServer is a running nginx.
type nginxServer struct {
	*process
	addrs map[string]string // scenario to address
}

// nginxQuote quotes s for nginx's configuration: a single-quoted string
// (backslash escapes) in which a dollar sign is the variable $dollar.
func nginxQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, `$`, `${dollar}`)
	return "'" + r.Replace(s) + "'"
}

// nginxConfig is the configuration serving each answer on its address.
func nginxConfig(dir string, answers []ceilingAnswer, addrs map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "daemon off;\nworker_processes 2;\npid %s;\nerror_log %s warn;\n", filepath.Join(dir, "nginx.pid"), filepath.Join(dir, "nginx-error.log"))
	b.WriteString("events { worker_connections 4096; }\nhttp {\n  access_log off;\n  server_tokens off;\n")
	b.WriteString("  keepalive_requests 100000000;\n  keepalive_timeout 300s;\n  client_body_buffer_size 256k;\n")
	for _, p := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		fmt.Fprintf(&b, "  %s_temp_path %s;\n", p, filepath.Join(dir, "nginx-"+p))
	}
	b.WriteString("  geo $dollar { default \"$\"; }\n")
	for i, ca := range answers {
		an := ca.Answer
		body := nginxBody(&b, i, string(an.Body)) // its maps before the server
		fmt.Fprintf(&b, "  server {\n    listen %s;\n    location / {\n", addrs[ca.Name])
		fmt.Fprintf(&b, "      default_type %s;\n", nginxQuote(an.Header.Get("Content-Type")))
		for k, vs := range an.Header {
			switch http.CanonicalHeaderKey(k) {
			case "Date", "Content-Length", "Content-Type", "Transfer-Encoding", "Server", "Connection":
				continue
			}
			for _, v := range vs {
				fmt.Fprintf(&b, "      add_header %s %s always;\n", k, nginxQuote(v))
			}
		}
		fmt.Fprintf(&b, "      return %d %s;\n    }\n  }\n", an.Status, body)
	}
	b.WriteString("}\n")
	return b.String()
}

// nginxToken is the longest quoted string nginx reads as one parameter
// of its configuration, with room to spare (its buffer is 4,096 bytes).
const nginxToken = 3500

// nginxBody is the parameter of `return` answering body: the quoted body
// when it fits in one configuration parameter, else the concatenation of
// variables each holding a part (a map with only a default, written to b
// at the http level), which nginx joins into one buffer per answer.
func nginxBody(b *strings.Builder, server int, body string) string {
	if len(nginxQuote(body)) <= nginxToken {
		return nginxQuote(body)
	}
	var ret strings.Builder
	ret.WriteByte('"')
	for part := 0; body != ""; part++ {
		n := min(len(body), nginxToken/2) // quoting at most doubles a part
		for n < len(body) && !utf8.RuneStart(body[n]) {
			n--
		}
		name := fmt.Sprintf("$answer_%d_%d", server, part)
		fmt.Fprintf(b, "  map $host %s { default %s; }\n", name, nginxQuote(body[:n]))
		fmt.Fprintf(&ret, "${answer_%d_%d}", server, part)
		body = body[n:]
	}
	ret.WriteByte('"')
	return ret.String()
}

// startNginx writes the configuration into dir, starts nginx in the
// foreground and waits until every port accepts connections.
func startNginx(dir string, answers []ceilingAnswer) (*nginxServer, error) {
	bin, err := nginxBinary()
	if err != nil {
		return nil, err
	}
	dir = filepath.Join(dir, "nginx")
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	addrs := map[string]string{}
	for _, ca := range answers {
		if addrs[ca.Name], err = freePort(); err != nil {
			return nil, err
		}
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConfig(dir, answers, addrs)), 0o644); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "nginx.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "-p", dir, "-e", filepath.Join(dir, "nginx-error.log"), "-c", conf)
	p, err := startProcess(cmd, logf)
	if err != nil {
		return nil, err
	}
	n := &nginxServer{process: p, addrs: addrs}
	deadline := time.Now().Add(time.Minute)
	for _, addr := range addrs {
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-n.exited:
				raw, _ := os.ReadFile(filepath.Join(dir, "nginx-error.log"))
				return nil, fmt.Errorf("nginx exited: %v: %s", cmd.ProcessState, tail(string(raw), 500))
			case <-time.After(20 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				n.stop()
				return nil, fmt.Errorf("nginx did not listen on %s within a minute", addr)
			}
		}
	}
	return n, nil
}
