package httplog_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gds/api/apitest"
	"gds/api/httplog"
)

// Info lines wait for a batch; a warning goes out at once, after them, in
// order; Close writes what is held and later lines go straight through.
func TestLogBufferBatchesInfoAndWritesWarningsAtOnce(t *testing.T) {
	var out apitest.Buffer
	lb := httplog.NewLogBuffer(&out, time.Hour)
	log := zerolog.New(lb)
	log.Info().Msg("one")
	log.Info().Msg("two")
	if got := out.String(); got != "" {
		t.Fatalf("info lines written before a batch: %q", got)
	}
	log.Warn().Msg("three")
	got := out.String()
	if i, j, k := strings.Index(got, "one"), strings.Index(got, "two"), strings.Index(got, "three"); i < 0 || !(i < j && j < k) {
		t.Fatalf("after a warning, want one, two, three in order, got %q", got)
	}
	log.Info().Msg("four")
	if err := lb.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "four") {
		t.Fatalf("Close did not write the held line: %q", out.String())
	}
	log.Info().Msg("five")
	if !strings.Contains(out.String(), "five") {
		t.Fatalf("a line after Close was held: %q", out.String())
	}
}

// A held info line is written within the interval without any other
// line or Close to push it.
func TestLogBufferWritesWithinTheInterval(t *testing.T) {
	var out apitest.Buffer
	lb := httplog.NewLogBuffer(&out, 10*time.Millisecond)
	defer lb.Close()
	log := zerolog.New(lb)
	for round := 0; round < 3; round++ {
		msg := "line" + string(rune('a'+round))
		log.Info().Msg(msg)
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(out.String(), msg) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the line was never written", round)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// A burst larger than the buffer is written as it fills, not only by the
// timer.
func TestLogBufferWritesWhenFull(t *testing.T) {
	var out apitest.Buffer
	lb := httplog.NewLogBuffer(&out, time.Hour)
	defer lb.Close()
	line := strings.Repeat("x", 1000) + "\n"
	for i := 0; i < 100; i++ {
		lb.Write([]byte(line))
	}
	if n := len(out.String()); n < 32<<10 {
		t.Fatalf("100 KB of lines left %d bytes written, want the buffer's worth at least", n)
	}
}

// reentrantWriter logs through the buffer while a batch is being written
// to it, as a writer that calls into the server being logged would.
type reentrantWriter struct {
	apitest.Buffer
	log  *zerolog.Logger
	once sync.Once
}

func (w *reentrantWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { w.log.Info().Msg("logged while writing") })
	return w.Buffer.Write(p)
}

// A line logged while a batch is being written does not wait for that
// write: writing a batch holds no lock the loggers need.
func TestLogBufferLogsWhileWriting(t *testing.T) {
	w := &reentrantWriter{}
	lb := httplog.NewLogBuffer(w, time.Hour)
	log := zerolog.New(lb)
	w.log = &log
	done := make(chan struct{})
	go func() {
		log.Warn().Msg("first")
		lb.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("logging from inside the writer deadlocked")
	}
	if got := w.String(); !strings.Contains(got, "first") || !strings.Contains(got, "logged while writing") {
		t.Fatalf("got %q", got)
	}
}
