package snapshots

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// regionLines makes n region lines (keys 10000001…), with a blank line
// and a line indented by spaces every so often, as a file may have.
func regionLines(n int) []string {
	lines := make([]string, 0, n+n/7)
	for i := 1; i <= n; i++ {
		l := fmt.Sprintf(`{"id":%d,"name":"Region %d"}`, 10000000+i, i)
		if i%11 == 0 {
			l = "  " + l + " \t"
		}
		lines = append(lines, l)
		if i%7 == 0 {
			lines = append(lines, "")
		}
	}
	return lines
}

// TestDecodeAcrossChunks reads a file of many chunks of lines, decoded by
// several workers, and checks every record comes in file order with its
// own line number and trimmed raw line.
func TestDecodeAcrossChunks(t *testing.T) {
	lines := regionLines(5 * chunkLines)
	n := 0
	err := Decode(strings.NewReader(strings.Join(lines, "\n")+"\n"), Regions, "r", func(rec Record, line Line) error {
		n++
		want := strings.TrimSpace(lines[line.Number-1])
		if string(line.Raw) != want {
			t.Fatalf("line %d: raw %q, want %q", line.Number, line.Raw, want)
		}
		r := rec.(*Region)
		if r.ID != int64(10000000+n) || line.Key != r.ID || r.Name != fmt.Sprintf("Region %d", n) {
			t.Fatalf("record %d at line %d: %+v key %d", n, line.Number, r, line.Key)
		}
		return nil
	})
	if err != nil || n != 5*chunkLines {
		t.Fatalf("Decode = %v after %d records, want %d", err, n, 5*chunkLines)
	}
}

// TestDecodeReportsTheFirstProblemInFileOrder breaks lines in different
// chunks: whichever worker finds its problem first, the error is the one a
// line-by-line reading meets first, after every earlier record.
func TestDecodeReportsTheFirstProblemInFileOrder(t *testing.T) {
	base := regionLines(4 * chunkLines)
	tests := []struct {
		name   string
		breaks map[int]string // line number → replacement
		want   string
	}{
		{"bad JSON late", map[int]string{1900: `{"id":`}, "r line 1900: truncated JSON record"},
		{"invalid before bad JSON", map[int]string{700: `{"id":10000000,"name":""}`, 2000: `nonsense`}, "r line 700: "},
		{"order before invalid", map[int]string{300: `{"id":10000001,"name":"again"}`, 1500: `{"id":1,"name":""}`}, "r line 300: id 10000001 is out of order"},
		{"unknown field", map[int]string{1024: `{"id":10000900,"name":"x","colour":"red"}`}, `r line 1024: `},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lines := append([]string(nil), base...)
			first := len(lines) + 1
			for no, l := range tc.breaks {
				lines[no-1] = l
				first = min(first, no)
			}
			last := int64(0)
			err := Decode(strings.NewReader(strings.Join(lines, "\n")), Regions, "r", func(_ Record, line Line) error {
				last = line.Number
				return nil
			})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("Decode = %v, want %q…", err, tc.want)
			}
			if last >= int64(first) || int(last) < first-2 {
				t.Errorf("last record delivered at line %d; want the one just before line %d", last, first)
			}
		})
	}
}

// failingReader returns its data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestDecodeReadErrorAfterChunks delivers every complete line before a
// read error, and names the line the error interrupted.
func TestDecodeReadErrorAfterChunks(t *testing.T) {
	lines := regionLines(3 * chunkLines)
	text := strings.Join(lines, "\n") + "\n"
	broken := errors.New("disk on fire")
	n := 0
	err := Decode(&failingReader{data: []byte(text), err: broken}, Regions, "r", func(Record, Line) error {
		n++
		return nil
	})
	want := fmt.Sprintf("r line %d: disk on fire", len(lines)+1)
	if !errors.Is(err, broken) || err.Error() != want || n != 3*chunkLines {
		t.Errorf("Decode = %v after %d records; want %q after %d", err, n, want, 3*chunkLines)
	}
	// A reader that fails at once.
	err = Decode(&failingReader{err: io.ErrUnexpectedEOF}, Regions, "r", func(Record, Line) error { return nil })
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.HasPrefix(err.Error(), "r line 1: ") {
		t.Errorf("Decode of a failing reader = %v", err)
	}
}

// randomReads returns its data in reads of random sizes, from one byte
// to a few hundred thousand.
type randomReads struct {
	data []byte
	rng  *rand.Rand
}

func (r *randomReads) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1+r.rng.IntN(1<<uint(r.rng.IntN(19))))], r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestDecodeSplitsAnyReads reads lines of every length, some longer than
// a chunk's buffer, blank and indented ones among them, in reads of any
// size: each record comes once, in order, with its own line number and
// trimmed raw line.
func TestDecodeSplitsAnyReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var lines []string
	for i := 1; i <= 3000; i++ {
		size := rng.IntN(200)
		if i%500 == 0 {
			size = chunkBytes + rng.IntN(chunkBytes) // past the buffer's room
		}
		l := fmt.Sprintf(`{"id":%d,"name":"R %s"}`, 10000000+i, strings.Repeat("x", size))
		if i%13 == 0 {
			l = " \t" + l + "  "
		}
		lines = append(lines, l)
		if i%17 == 0 {
			lines = append(lines, "", "  ")
		}
	}
	for _, end := range []string{"\n", ""} {
		text := strings.Join(lines, "\n") + end
		n := 0
		err := Decode(&randomReads{data: []byte(text), rng: rng}, Regions, "r", func(rec Record, line Line) error {
			n++
			if want := strings.TrimSpace(lines[line.Number-1]); string(line.Raw) != want {
				t.Fatalf("line %d: raw of %d bytes, want %d", line.Number, len(line.Raw), len(want))
			}
			if id := rec.(*Region).ID; id != int64(10000000+n) || line.Key != id {
				t.Fatalf("record %d at line %d: id %d, key %d", n, line.Number, id, line.Key)
			}
			return nil
		})
		if err != nil || n != 3000 {
			t.Fatalf("Decode (ending %q) = %v after %d records, want 3000", end, err, n)
		}
	}
}

// benchCharacter is the generated character line the benchmarks decode.
var benchCharacter = []byte(`{"id":90000003,"name":"Tibus Korhonen","corporation_id":98218302,"alliance_id":99521142,"birthday":"2003-05-06T00:01:51Z","gender":"male","race_id":1,"bloodline_id":1,"security_status":1.259557}`)

// BenchmarkDecodeCharacter compares the fast character decoder with
// encoding/json on a generated character line:
//
//	go test -run '^$' -bench DecodeCharacter ./snapshots
func BenchmarkDecodeCharacter(b *testing.B) {
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			var c Character
			if !decodeCharacter(benchCharacter, &c) {
				b.Fatal("declined")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var c Character
			if err := decodeStrict(benchCharacter, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecodeRolesAndName times the other fast decoders: a roles line,
// and a character line's name alone (resolving IDs to names):
//
//	go test -run '^$' -bench 'DecodeRolesAndName' ./snapshots
func BenchmarkDecodeRolesAndName(b *testing.B) {
	roles := []byte(`{"character_id":90000003,"corporation_id":98218302,"roles":["Director","Station_Manager","Accountant"]}`)
	b.Run("roles", func(b *testing.B) {
		for b.Loop() {
			var r CharacterRoles
			if !decodeRoles(roles, &r) {
				b.Fatal("declined")
			}
		}
	})
	b.Run("name", func(b *testing.B) {
		for b.Loop() {
			if _, ok := DecodeName(benchCharacter); !ok {
				b.Fatal("declined")
			}
		}
	})
}

// TestFastDecoderTakesWhatTheWriterWrites: the lines this package writes
// for characters are the ones the fast decoder is for; a change to either
// that made it decline them would only show as a slower build.
func TestFastDecoderTakesWhatTheWriterWrites(t *testing.T) {
	born := time.Date(2003, 5, 6, 0, 1, 51, 0, time.UTC)
	sec := -1.25
	for _, c := range []*Character{
		{Entity: Entity{ID: 90000001, Name: "Ka-Ren Kitoda"}, CorporationID: 98000001},
		{Entity: Entity{ID: 90000002, Name: "Ёжик Тумана"}, CorporationID: 98000001, AllianceID: 99000001,
			Birthday: &born, Gender: "female", RaceID: 1, BloodlineID: 2, AncestryID: 3, SecurityStatus: &sec,
			Description: "flies & fights", Title: "CEO", FactionID: 500001},
	} {
		line, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var got Character
		if !decodeCharacter(line, &got) {
			t.Fatalf("fast decoder declined %s", line)
		}
		if !reflect.DeepEqual(&got, c) {
			t.Errorf("fast decoder: %+v, want %+v", got, *c)
		}
	}
}

// TestFastRolesDecoderTakesWhatTheWriterWrites: the same for roles.
func TestFastRolesDecoderTakesWhatTheWriterWrites(t *testing.T) {
	for _, r := range []*CharacterRoles{
		{CharacterID: 90000240, CorporationID: 98020881, Roles: []string{"Trader"}},
		{CharacterID: 90000241, CorporationID: 98020881, Roles: []string{"Director", "Station_Manager"}},
	} {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var got CharacterRoles
		if !decodeRoles(line, &got) {
			t.Fatalf("fast decoder declined %s", line)
		}
		if !reflect.DeepEqual(&got, r) {
			t.Errorf("fast decoder: %+v, want %+v", got, *r)
		}
	}
}

// BenchmarkDecodeSplit measures the reader's side of Decode alone: every
// line of a file of generated characters is skipped by key, so no worker
// decodes one, and what is left is reading, splitting into lines and
// reading the keys.
//
//	go test -run '^$' -bench DecodeSplit ./snapshots
func BenchmarkDecodeSplit(b *testing.B) {
	var text []byte
	for i := range 100_000 {
		text = fmt.Appendf(text, `{"id":%d,"name":"Tibus Korhonen","corporation_id":98218302,"alliance_id":99521142,"birthday":"2003-05-06T00:01:51Z","gender":"male","race_id":1,"bloodline_id":1,"security_status":1.259557}`+"\n", 90000000+i)
	}
	skip := func(int64, []byte) bool { return true }
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		err := decode(&onlyReader{bytes.NewReader(text)}, Characters, "c", skip, func(Record, Line) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
}

// onlyReader hides every method of its reader but Read (a decompressor's
// reader has no WriteTo for io.Copy-like shortcuts to take).
type onlyReader struct{ r io.Reader }

func (o *onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }
