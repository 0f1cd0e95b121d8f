//go:build bench

package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// postgres is a private PostgreSQL instance in a temporary directory,
// listening on a unix socket only.
type postgres struct {
	bin, dir, data, sock string
	cred                 *syscall.Credential
	pid                  int
}

// pgBinDir finds the newest installed PostgreSQL server binaries.
func pgBinDir(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) == 0 {
		if p, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(p), nil
		}
		return "", fmt.Errorf("no PostgreSQL server found (apt-get install -y postgresql postgresql-contrib; `make bench-quick` does it)")
	}
	sort.Slice(matches, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(matches[i]))))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(matches[j]))))
		return vi < vj
	})
	return filepath.Dir(matches[len(matches)-1]), nil
}

// startPostgres runs initdb and pg_ctl start. As root the server runs as
// the postgres user (created by the Debian package).
func startPostgres(t *testing.T, binDir string) *postgres {
	t.Helper()
	dir, err := os.MkdirTemp("", "gds-bench-pg-")
	if err != nil {
		t.Fatal(err)
	}
	p := &postgres{bin: binDir, dir: dir, data: filepath.Join(dir, "data"), sock: filepath.Join(dir, "sock")}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.MkdirAll(p.sock, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs a postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		for _, d := range []string{dir, p.sock} {
			if err := os.Chown(d, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
		os.Chmod(dir, 0o755)
	}
	p.run(t, "initdb", "-D", p.data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
	// A fair, fast configuration for a read benchmark on this machine:
	// no durability work during the load, generous memory, custom plans
	// for every prepared execution (a generic plan for ILIKE $1 can pick a
	// sequential scan), no JIT.
	opts := strings.Join([]string{
		"-c listen_addresses=''", "-k " + p.sock,
		"-c shared_buffers=2GB", "-c work_mem=64MB", "-c maintenance_work_mem=2GB",
		"-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off",
		"-c max_wal_size=8GB", "-c checkpoint_timeout=1h", "-c jit=off",
		"-c plan_cache_mode=force_custom_plan", "-c effective_cache_size=8GB",
		"-c random_page_cost=1.1",
	}, " ")
	p.run(t, "pg_ctl", "-D", p.data, "-l", filepath.Join(dir, "postgres.log"), "-w", "-t", "120", "-o", opts, "start")
	t.Cleanup(func() { p.runQuiet("pg_ctl", "-D", p.data, "-m", "fast", "-w", "stop") })
	raw, err := os.ReadFile(filepath.Join(p.data, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	p.pid, _ = strconv.Atoi(strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[0]))
	return p
}

func (p *postgres) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(p.bin, name), args...)
	cmd.Dir = p.dir
	if p.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	}
	return cmd
}

func (p *postgres) run(t *testing.T, name string, args ...string) {
	t.Helper()
	out, err := p.command(name, args...).CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(p.dir, "postgres.log"))
		t.Fatalf("%s: %v\n%s\n%s", name, err, out, log)
	}
}

func (p *postgres) runQuiet(name string, args ...string) { _ = p.command(name, args...).Run() }

func (p *postgres) connect(ctx context.Context) (*pgx.Conn, error) {
	return pgx.Connect(ctx, fmt.Sprintf("host=%s user=postgres dbname=postgres sslmode=disable", p.sock))
}

// Statements the benchmark prepares on every connection.
const (
	sqlContains      = `SELECT id FROM names WHERE name ILIKE $1 LIMIT 500`
	sqlStrict        = `SELECT id FROM names WHERE lower(name) = lower($1) LIMIT 500`
	sqlCountContains = `SELECT count(*) FROM (SELECT 1 FROM names WHERE name ILIKE $1 LIMIT 500) s`
	sqlCountStrict   = `SELECT count(*) FROM (SELECT 1 FROM names WHERE lower(name) = lower($1) LIMIT 500) s`
)

func prepare(ctx context.Context, c *pgx.Conn) error {
	for name, sql := range map[string]string{"contains": sqlContains, "strict": sqlStrict,
		"count_contains": sqlCountContains, "count_strict": sqlCountStrict} {
		if _, err := c.Prepare(ctx, name, sql); err != nil {
			return fmt.Errorf("prepare %s: %w", name, err)
		}
	}
	return nil
}

// pgLoad is what loading the names cost.
type pgLoad struct {
	Copy, TrgmIndex, LowerIndex, Analyze time.Duration
	Rows                                 int64
	Table, Trgm, Lower, Total            int64
	PeakPSS                              int64
}

func (l pgLoad) Build() time.Duration { return l.Copy + l.TrgmIndex + l.LowerIndex + l.Analyze }

// load creates the table with COPY and builds both indexes.
func (p *postgres) load(ctx context.Context, c *pgx.Conn, rows pgx.CopyFromSource) (pgLoad, error) {
	sampler := sampleTree(p.pid, 250*time.Millisecond)
	l, err := p.loadSteps(ctx, c, rows)
	l.PeakPSS = sampler.Stop()
	return l, err
}

func (p *postgres) loadSteps(ctx context.Context, c *pgx.Conn, rows pgx.CopyFromSource) (pgLoad, error) {
	var l pgLoad
	for _, sql := range []string{
		`CREATE EXTENSION IF NOT EXISTS pg_trgm`,
		`CREATE UNLOGGED TABLE names (id bigint NOT NULL, name text NOT NULL)`,
	} {
		if _, err := c.Exec(ctx, sql); err != nil {
			return l, fmt.Errorf("%s: %w", sql, err)
		}
	}
	t0 := time.Now()
	n, err := c.CopyFrom(ctx, pgx.Identifier{"names"}, []string{"id", "name"}, rows)
	if err != nil {
		return l, fmt.Errorf("copy: %w", err)
	}
	l.Rows, l.Copy = n, time.Since(t0)
	step := func(d *time.Duration, sql string) error {
		t0 := time.Now()
		if _, err := c.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
		*d = time.Since(t0)
		return nil
	}
	if err := step(&l.TrgmIndex, `CREATE INDEX names_trgm ON names USING gin (name gin_trgm_ops)`); err != nil {
		return l, err
	}
	if err := step(&l.LowerIndex, `CREATE INDEX names_lower ON names (lower(name))`); err != nil {
		return l, err
	}
	if err := step(&l.Analyze, `VACUUM ANALYZE names`); err != nil {
		return l, err
	}
	err = c.QueryRow(ctx, `SELECT pg_relation_size('names'), pg_relation_size('names_trgm'),
		pg_relation_size('names_lower'), pg_total_relation_size('names')`).Scan(&l.Table, &l.Trgm, &l.Lower, &l.Total)
	return l, err
}

// settle has PostgreSQL write its dirty buffers (CHECKPOINT) and the kernel
// write back every dirty page (sync) before the timed phases, so that they
// never share the disk with the writes of the build and PostgreSQL's load
// (a precaution: on 2026-11-25 it found little left to write, 14 ms).
func settle(ctx context.Context, t *testing.T, conn *pgx.Conn) {
	t0 := time.Now()
	if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
		t.Fatalf("CHECKPOINT: %v", err)
	}
	syscall.Sync()
	logStep(t, "PostgreSQL checkpointed and dirty pages written back in %s", time.Since(t0).Round(time.Millisecond))
}
