//go:build bench

package bench

import (
	"bufio"
	"context"
	"encoding/csv"
	"flag"
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

	"gds/snapshots"
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

// pgSettings is the server's configuration: what a PostgreSQL expert sets
// for a one-off bulk load on this machine followed by a read benchmark
// (docs/performance.md, "How the comparators are configured").
//
// The load: wal_level=minimal with no WAL senders, so that the table,
// created in the transaction that COPYs into it, and each index, built into
// a new file, are written without WAL and fsynced once at commit (a logged,
// crash-safe table at the cost of an UNLOGGED one); fsync stays on, as gds
// fsyncs its generation's files; memory for index builds
// (maintenance_work_mem) that holds GIN's whole trigram accumulation; up to
// one parallel worker per index build beside its leader (2 cores, and the
// two indexes build at once on two connections); no autovacuum beside the
// load (the harness ANALYZEs; COPY FREEZE leaves nothing to vacuum); no
// checkpoint during it.
//
// The reads: the table and its indexes in shared buffers, custom plans for
// every prepared execution (a generic plan for ILIKE $1 can pick a
// sequential scan), random I/O costed as on an SSD, no JIT.
var pgSettings = []string{
	"-c wal_level=minimal", "-c max_wal_senders=0", "-c archive_mode=off",
	"-c fsync=on", "-c synchronous_commit=on", "-c full_page_writes=on",
	"-c max_wal_size=8GB", "-c checkpoint_timeout=1h",
	"-c maintenance_work_mem=2GB", "-c max_parallel_maintenance_workers=1", "-c autovacuum=off",
	"-c shared_buffers=2GB", "-c work_mem=64MB", "-c effective_cache_size=8GB",
	"-c jit=off", "-c plan_cache_mode=force_custom_plan", "-c random_page_cost=1.1",
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
	opts := strings.Join(append([]string{"-c listen_addresses=''", "-k " + p.sock}, pgSettings...), " ")
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
	// Extract: writing the ready CSV from the snapshot (the harness's
	// work, reported apart: not PostgreSQL's build).
	Extract                              time.Duration
	Copy, TrgmIndex, LowerIndex, Analyze time.Duration
	// Indexes: both built at once on two connections, so the wall time
	// of the two is this, not TrgmIndex+LowerIndex.
	Indexes time.Duration
	// GiST: the gist_trgm_ops index of the suggest row, built only when
	// gds answers suggest (then part of PostgreSQL's build), and its CPU.
	GiST, GiSTCPU time.Duration
	GiSTSize      int64
	// CPU: user and system seconds of every postgres process over the
	// load (COPY, indexes, ANALYZE).
	CPU                       time.Duration
	Rows                      int64
	Table, Trgm, Lower, Total int64
	PeakPSS                   int64
}

// Build is PostgreSQL's build: COPY, the indexes (built at once), ANALYZE,
// and the suggest row's GiST index when it was built.
func (l pgLoad) Build() time.Duration { return l.Copy + l.Indexes + l.Analyze + l.GiST }

// BuildCPU is the CPU seconds of Build.
func (l pgLoad) BuildCPU() time.Duration { return l.CPU + l.GiSTCPU }

// Disk is the table and every index, the GiST one included when built.
func (l pgLoad) Disk() int64 { return l.Total + l.GiSTSize }

// writeCSV writes the snapshot's character names (id,name) as CSV, the
// ready file PostgreSQL loads, calling each with every name.
func writeCSV(snap *snapshots.Snapshot, file string, each func(id int64, name string)) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := csv.NewWriter(bw)
	rec := make([]string, 2)
	err = snap.Each(snapshots.Characters, func(r snapshots.Record, line snapshots.Line) error {
		name := r.(snapshots.Named).DisplayName()
		each(line.Key, name)
		rec[0], rec[1] = strconv.FormatInt(line.Key, 10), name
		return w.Write(rec)
	})
	w.Flush()
	if err == nil {
		err = w.Error()
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// load creates the table from the CSV file and builds both indexes; c2 is
// a second connection for building the two indexes at once.
func (p *postgres) load(ctx context.Context, c, c2 *pgx.Conn, file string) (pgLoad, error) {
	sampler := sampleTree(p.pid, 250*time.Millisecond)
	cpu0 := treeCPU(p.pid)
	l, err := p.loadSteps(ctx, c, c2, file)
	l.CPU = treeCPU(p.pid) - cpu0
	l.PeakPSS = sampler.Stop()
	return l, err
}

func (p *postgres) loadSteps(ctx context.Context, c, c2 *pgx.Conn, file string) (pgLoad, error) {
	var l pgLoad
	if _, err := c.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_trgm`); err != nil {
		return l, err
	}
	// One transaction: under wal_level=minimal the new table's rows skip
	// WAL, and FREEZE writes them frozen and all-visible (no VACUUM).
	t0 := time.Now()
	tx, err := c.Begin(ctx)
	if err != nil {
		return l, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `CREATE TABLE names (id bigint NOT NULL, name text NOT NULL)`); err != nil {
		return l, err
	}
	tag, err := tx.Exec(ctx, fmt.Sprintf(`COPY names (id, name) FROM %s WITH (FORMAT csv, FREEZE)`, quoteLiteral(file)))
	if err != nil {
		return l, fmt.Errorf("copy: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return l, err
	}
	l.Rows, l.Copy = tag.RowsAffected(), time.Since(t0)
	step := func(c *pgx.Conn, d *time.Duration, sql string) error {
		t0 := time.Now()
		if _, err := c.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
		*d = time.Since(t0)
		return nil
	}
	t0 = time.Now()
	lower := make(chan error, 1)
	go func() {
		lower <- step(c2, &l.LowerIndex, `CREATE INDEX names_lower ON names (lower(name))`)
	}()
	err = step(c, &l.TrgmIndex, `CREATE INDEX names_trgm ON names USING gin (name gin_trgm_ops)`)
	if lerr := <-lower; err == nil {
		err = lerr
	}
	if err != nil {
		return l, err
	}
	l.Indexes = time.Since(t0)
	if err := step(c, &l.Analyze, `ANALYZE names`); err != nil {
		return l, err
	}
	err = c.QueryRow(ctx, `SELECT pg_relation_size('names'), pg_relation_size('names_trgm'),
		pg_relation_size('names_lower'), pg_total_relation_size('names')`).Scan(&l.Table, &l.Trgm, &l.Lower, &l.Total)
	return l, err
}

// flagGiSTSiglen is the signature length of the suggest row's GiST index.
// PostgreSQL's default (12 bytes) saturates on the inner pages of millions
// of names: at 1M names on 2026-11-27 (busy machine, one connection) 100
// nearest-neighbour queries took 90-121 s with it, 37 s with siglen=256
// and 28 s with 1024, the index a little smaller. The bench builds it with
// 256, as one tuning PostgreSQL for these queries would: most of 1024's
// speed for a third of its build time.
var flagGiSTSiglen = flag.Int("gist-siglen", 256, "siglen of PostgreSQL's gist_trgm_ops index for suggest (0: PostgreSQL's default, 12 bytes; at most 2024)")

// buildGiST builds the suggest row's index (KNN by trigram distance) and
// adds its time, CPU and size to l.
func (p *postgres) buildGiST(ctx context.Context, c *pgx.Conn, l *pgLoad) error {
	ops := "gist_trgm_ops"
	if *flagGiSTSiglen > 0 {
		ops = fmt.Sprintf("gist_trgm_ops(siglen=%d)", *flagGiSTSiglen)
	}
	cpu0, t0 := treeCPU(p.pid), time.Now()
	if _, err := c.Exec(ctx, `CREATE INDEX names_gist ON names USING gist (name `+ops+`)`); err != nil {
		return err
	}
	l.GiST, l.GiSTCPU = time.Since(t0), treeCPU(p.pid)-cpu0
	return c.QueryRow(ctx, `SELECT pg_relation_size('names_gist')`).Scan(&l.GiSTSize)
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

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
