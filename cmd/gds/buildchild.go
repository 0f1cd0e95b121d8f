package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"gds/indexer"
)

// buildNice is the CPU priority of a build's child process: the lowest,
// so that the kernel runs the server's searches first.
const buildNice = 19

// childStopWait is how long a child asked to stop (SIGTERM: it removes its
// build directory) gets before it is killed.
const childStopWait = 10 * time.Second

// childBuilds runs the builds of gds serve --build-process: each is a
// gds index of this binary at nice buildNice, whose log lines join the
// server's log.
type childBuilds struct {
	exe        string // this binary (thisBinary)
	data       string
	batch      int
	bleveChars bool
	logLevel   string
	log        zerolog.Logger
}

// newBuildChild is the indexer's BuildChild for cfg: nil unless
// --build-process.
func newBuildChild(cfg serveConfig, log zerolog.Logger) (indexer.BuildChild, error) {
	if !cfg.BuildProcess {
		return nil, nil
	}
	exe, err := thisBinary()
	if err != nil {
		return nil, fmt.Errorf("--build-process: this binary: %w", err)
	}
	c := childBuilds{exe: exe, data: cfg.Data, batch: cfg.BleveBatch, bleveChars: cfg.BleveCharacters, logLevel: cfg.Log.Level,
		log: log.With().Str("component", "build-child").Logger()}
	return c.build, nil
}

// build runs req in a child process (an indexer.BuildChild).
func (c childBuilds) build(ctx context.Context, req indexer.BuildRequest, report indexer.ChildReport) (indexer.BuildResult, error) {
	cmd := exec.CommandContext(ctx, c.exe, c.args(req)...)
	cmd.Args[0] = "gds" // what ps shows
	cmd.Env = withoutGDSVars(os.Environ())
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = childStopWait
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	relayed := make(chan string, 1)
	go func() { relayed <- c.relay(pr, report) }()
	pid := 0
	err := runNiced(cmd, func(p int) { pid = p; report.Started(p) })
	pw.Close()
	last := <-relayed
	if err != nil {
		if last != "" {
			return indexer.BuildResult{}, fmt.Errorf("%s (gds index, pid %d: %w)", last, pid, err)
		}
		return indexer.BuildResult{}, fmt.Errorf("gds index (pid %d): %w", pid, err)
	}
	var out struct {
		Build indexer.BuildResult `json:"build"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return indexer.BuildResult{}, fmt.Errorf("gds index (pid %d) printed no result: %w", pid, err)
	}
	return out.Build, nil
}

// args are gds index's for req: the server's build settings, JSON out.
func (c childBuilds) args(req indexer.BuildRequest) []string {
	args := []string{"index", "--snapshot", req.Snapshot, "--data", c.data,
		// The server's generation stays on disk until it serves the
		// child's; a build of another process goes first.
		"--keep-retired", "--force",
		"--bleve-batch", strconv.Itoa(c.batch), "--bleve-characters=" + strconv.FormatBool(c.bleveChars),
		"--json", "--log-format", "json", "--log-level", c.logLevel}
	if req.Full {
		args = append(args, "--full")
	}
	return args
}

// withoutGDSVars is env without its GDS_ variables. A build's child gets
// the server's so: it is told everything by its flags, and would take a
// GDS_ variable meant for the server (GDS_PUBLISH, GDS_LOG_FORMAT) as its
// own.
func withoutGDSVars(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GDS_") {
			out = append(out, kv)
		}
	}
	return out
}

// relay writes the child's log lines (JSON) to the server's log, tagged
// component=build-child, and hands its progress lines to report; it
// returns the child's last error: its last line that is not JSON (what
// gds prints on failure), or else its last error's message.
func (c childBuilds) relay(r io.Reader, report indexer.ChildReport) (last string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	lastPlain := ""
	for sc.Scan() {
		var fields map[string]any
		if err := json.Unmarshal(sc.Bytes(), &fields); err != nil {
			if text := strings.TrimSpace(sc.Text()); text != "" {
				lastPlain = strings.TrimPrefix(text, "gds: ")
				c.log.Error().Msg(text)
			}
			continue
		}
		level, _ := zerolog.ParseLevel(field(fields, "level"))
		msg := field(fields, "message")
		if msg == progressMessage {
			report.Progress(progressOf(fields))
			continue
		}
		if level >= zerolog.ErrorLevel {
			last = msg
			if e := field(fields, "error"); e != "" {
				last += ": " + e
			}
		}
		for _, k := range []string{"level", "message", "time"} {
			delete(fields, k)
		}
		c.log.WithLevel(level).Fields(fields).Msg(msg)
	}
	// Lines longer than the buffer end the relay; the rest is drained.
	_, _ = io.Copy(io.Discard, r)
	if lastPlain != "" {
		return lastPlain
	}
	return last
}

// field is a log line's string field, "" when absent.
func field(fields map[string]any, key string) string {
	s, _ := fields[key].(string)
	return s
}

// progressOf reads a progress line of gds index's (logWatch).
func progressOf(fields map[string]any) indexer.Progress {
	n := func(key string) int64 { f, _ := fields[key].(float64); return int64(f) }
	return indexer.Progress{Phase: field(fields, "phase"), Kind: field(fields, "kind"), Done: n("done"), Total: n("total")}
}
