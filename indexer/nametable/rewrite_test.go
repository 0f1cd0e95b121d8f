package nametable

import (
	"context"
	"os"
	"testing"
	"time"

	"gds/snapshots/envtest"
)

// TestTableRewrite writes the table GDS_WALK_TABLE names again, whole, in
// the current format (GDS_TABLE_LAYOUT=GDSTBL03 or GDSTBL02: an older
// one), into GDS_TABLE_OUT: for measuring one layout against another on
// the same names.
//
//	GDS_WALK_TABLE=GEN/character/base.tbl GDS_TABLE_OUT=/tmp/t3.tbl go test -run TestTableRewrite -v ./indexer/nametable
func TestTableRewrite(t *testing.T) {
	env := envtest.Getenv(t, "a table and the file to write it to", "GDS_WALK_TABLE", "GDS_TABLE_OUT")
	in, out := env[0], env[1]
	tbl, err := Open(in)
	if err != nil {
		t.Fatal(err)
	}
	entries, access := tbl.Entries(nil, nil)
	tbl.Close()
	writeLayout = os.Getenv("GDS_TABLE_LAYOUT")
	defer func() { writeLayout = "" }()
	t0 := time.Now()
	if err := Write(context.Background(), out, entries, access, nil); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d names written in %v: %d bytes", len(entries), time.Since(t0).Round(time.Millisecond), st.Size())
}
