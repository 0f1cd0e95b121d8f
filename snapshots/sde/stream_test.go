package sde

import (
	"io"
	"strings"
	"testing"
)

// readChunks reads every chunk cr has, to its end.
func readChunks(t *testing.T, cr *chunkReader) []chunk {
	t.Helper()
	var got []chunk
	for {
		ch, err := cr.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ch)
	}
}

func TestChunkReaderSplitsTopLevelEntries(t *testing.T) {
	// A multi-line quoted string may continue at column 0 (types.yaml has
	// one); it belongs to its entry, not to a new one.
	src := "# comment\n\n34:\n  name:\n    en: 'two\n\n' \n  groupID: 18\n35:\n  groupID: 18\n\n1230:\n  groupID: 462\n"
	got := readChunks(t, newChunkReader("t.yaml", strings.NewReader(src), false))
	want := []struct {
		id   int64
		line int
	}{{34, 3}, {35, 9}, {1230, 12}}
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].ID != w.id || got[i].Line != w.line {
			t.Errorf("entry %d: id %d line %d, want id %d line %d", i, got[i].ID, got[i].Line, w.id, w.line)
		}
	}
	var v typeYAML
	if err := decodeEntry("t.yaml", got[0], &v); err != nil {
		t.Fatal(err)
	}
	if v.Name["en"] != "two\n" || v.GroupID != 18 {
		t.Errorf("entry 34 decoded as %+v", v)
	}
}

func TestChunkReaderLists(t *testing.T) {
	src := "- itemID: 1\n  itemName: a\n- itemID: 2\n  itemName: '[b]'\n"
	var names []string
	for _, ch := range readChunks(t, newChunkReader("n.yaml", strings.NewReader(src), true)) {
		var it nameYAML
		if err := decodeItem("n.yaml", ch, &it); err != nil {
			t.Fatal(err)
		}
		if id, ok := quickItemID(ch.Text); !ok || id != it.ItemID {
			t.Errorf("quickItemID = %d, %v; want %d", id, ok, it.ItemID)
		}
		names = append(names, it.ItemName)
	}
	if strings.Join(names, ",") != "a,[b]" {
		t.Errorf("names = %q", names)
	}
}

// FuzzChunkReader checks that no input makes the splitter or the entry
// decoder panic.
func FuzzChunkReader(f *testing.F) {
	f.Add("34:\n  groupID: 18\n35:\n  name: {en: x}\n", false)
	f.Add("- itemID: 1\n  itemName: a\n", true)
	f.Add("junk\n", false)
	f.Fuzz(func(t *testing.T, src string, isList bool) {
		cr := newChunkReader("f.yaml", strings.NewReader(src), isList)
		for i := 0; i < 1000; i++ {
			ch, err := cr.Next()
			if err != nil {
				return
			}
			var v typeYAML
			if isList {
				_ = decodeItem("f.yaml", ch, &v)
			} else {
				_ = decodeEntry("f.yaml", ch, &v)
			}
		}
	})
}
