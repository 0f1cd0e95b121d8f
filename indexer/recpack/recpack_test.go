package recpack

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

var lines = []string{
	`{"id":90000001,"name":"Ka-Ren Kitoda","corporation_id":98605282,"birthday":"2003-05-06T00:00:33Z","gender":"male","race_id":1,"bloodline_id":2,"security_status":-0.393521}`,
	`{"id":90000003,"name":"Tibus Korhonen","corporation_id":98218302,"alliance_id":99521142,"birthday":"2003-05-06T00:01:51Z","gender":"male","race_id":1,"bloodline_id":1,"security_status":1.259557}`,
	`{"id":7,"name":"Quote \" and \\ back","published":true,"on":false,"x":null,"arr":[1,"a]",{"b":"}"}],"obj":{"k":[2]},"e":1e5,"neg":-12,"zero":0,"d":0.5,"dn":-0.05}`,
	`{"id":1,"name":"日本語の名前","when":"1969-12-31T23:59:59Z","big":9223372036854775807,"small":-9223372036854775808}`,
	`{}`,
	`{"a":"2020-02-30T00:00:00Z","b":"0001-01-01T00:00:00Z","c":"9999-12-31T23:59:59Z"}`,
	// Lines that do not come back the same packed stay as they were.
	`{"n":007,"m":-0.0,"p":1.50,"q":1.}`,
	`{"a":1,}`,
	`{"a" :1}`,
	` {"a":1}`,
	`[1,2]`,
	`{"a":"unterminated}`,
	`{"a":1`,
	`not json at all`,
	``,
	`{"huge":123456789012345678901234567890,"dec":1.1234567890123456789}`,
}

func TestRoundTrip(t *testing.T) {
	p := NewPacker(nil)
	var packed [][]byte
	for k, l := range lines {
		packed = append(packed, p.Append(nil, []byte(l), int64(k)))
	}
	// Unpacked through shapes parsed back from their serialized form, as
	// a store's reader has them.
	s, err := Parse(p.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	for k, l := range lines {
		got, err := s.Unpack(nil, packed[k], int64(k))
		if err != nil || string(got) != l {
			t.Errorf("line %d: got %q, %v; want %q", k, got, err, l)
		}
	}
}

func TestPackedIsSmaller(t *testing.T) {
	p := NewPacker(nil)
	line := []byte(lines[0])
	b := p.Append(nil, line, 90000001)
	if b[0] == 0 {
		t.Fatalf("a character's line was kept as it was")
	}
	// id is the key (no bytes); the other fields' values in binary.
	if len(b) > len(line)/3 {
		t.Errorf("packed %d bytes of a %d-byte line", len(b), len(line))
	}
	// The same line under another key packs id as an integer, another shape.
	b2 := p.Append(nil, line, 5)
	if p.Len() != 2 || len(b2) <= len(b) {
		t.Errorf("shapes %d, packed %d then %d bytes", p.Len(), len(b), len(b2))
	}
	for _, l := range []string{`{"n":007}`, `{"a" :1}`, `[1]`} {
		if b := p.Append(nil, []byte(l), 0); b[0] != 0 || string(b[1:]) != l {
			t.Errorf("%q packed as %q, want it kept", l, b)
		}
	}
}

func TestShapesCapped(t *testing.T) {
	p := NewPacker(nil)
	for k := range MaxShapes + 10 {
		line := fmt.Appendf(nil, `{"f%d":1}`, k)
		b := p.Append(nil, line, 0)
		if kept := b[0] == 0; kept != (k >= MaxShapes) {
			t.Fatalf("line %d kept as it was: %v", k, kept)
		}
		got, err := p.Unpack(nil, b, 0)
		if err != nil || !bytes.Equal(got, line) {
			t.Fatalf("line %d: %q, %v", k, got, err)
		}
	}
	if p.Len() != MaxShapes {
		t.Errorf("%d shapes", p.Len())
	}
}

func TestPackerKeepsNumbers(t *testing.T) {
	p := NewPacker(nil)
	a := p.Append(nil, []byte(`{"a":1}`), 0)
	b := p.Append(nil, []byte(`{"b":"x"}`), 0)
	s, err := Parse(p.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	// A delta's packer adds shapes after the base's.
	d := NewPacker(s)
	c := d.Append(nil, []byte(`{"c":true}`), 0)
	if d.Len() != 3 {
		t.Fatalf("%d shapes", d.Len())
	}
	for _, rec := range [][]byte{a, b, c} {
		if _, err := d.Unpack(nil, rec, 0); err != nil {
			t.Fatal(err)
		}
	}
	if again := d.Append(nil, []byte(`{"a":2}`), 0); again[0] != 1 {
		t.Errorf("a known shape got number %d", again[0])
	}
}

func TestDamageIsAnError(t *testing.T) {
	p := NewPacker(nil)
	rec := p.Append(nil, []byte(lines[1]), 90000003)
	for cut := 1; cut < len(rec); cut++ {
		if _, err := p.Unpack(nil, rec[:cut], 90000003); err == nil {
			t.Errorf("cut at %d: no error", cut)
		}
	}
	if _, err := p.Unpack(nil, []byte{9}, 0); err == nil {
		t.Error("an unknown shape: no error")
	}
	if _, err := p.Unpack(nil, append(bytes.Clone(rec), 1), 0); err == nil {
		t.Error("bytes after the values: no error")
	}
	m := p.Marshal()
	for cut := range len(m) {
		if _, err := Parse(m[:cut]); err == nil {
			t.Errorf("shapes cut at %d: no error", cut)
		}
	}
}

func TestRandomFlatLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := NewPacker(nil)
	vals := []func() string{
		func() string { return fmt.Sprint(rng.Int64N(1<<40) - 1<<39) },
		func() string { return fmt.Sprintf("%.*f", rng.IntN(8)+1, rng.NormFloat64()*100) },
		func() string { return fmt.Sprintf("%q", fmt.Sprint(rng.Uint32())) },
		func() string {
			return fmt.Sprintf(`"%04d-%02d-%02dT%02d:%02d:%02dZ"`, 1900+rng.IntN(200), 1+rng.IntN(12), 1+rng.IntN(28), rng.IntN(24), rng.IntN(60), rng.IntN(60))
		},
		func() string { return []string{"true", "false", "null", "[]", `{"x":[1,2]}`}[rng.IntN(5)] },
	}
	packed := 0
	for k := range 5000 {
		var b bytes.Buffer
		b.WriteByte('{')
		for f := range rng.IntN(6) {
			if f > 0 {
				b.WriteByte(',')
			}
			// Few shapes (MaxShapes is TestShapesCapped's), random values.
			fmt.Fprintf(&b, `"k%d":%s`, f, vals[(f+k%3)%len(vals)]())
		}
		b.WriteByte('}')
		rec := p.Append(nil, b.Bytes(), int64(k))
		if rec[0] != 0 {
			packed++
		}
		got, err := p.Unpack(nil, rec, int64(k))
		if err != nil || !bytes.Equal(got, b.Bytes()) {
			t.Fatalf("%q: got %q, %v", b.Bytes(), got, err)
		}
	}
	if packed < 4900 {
		t.Errorf("%d of 5000 lines packed", packed)
	}
}

// BenchmarkUnpack unpacks a character's line, as each lookup of a packed
// store does after decoding its block.
func BenchmarkUnpack(b *testing.B) {
	p := NewPacker(nil)
	line := []byte(lines[1])
	rec := p.Append(nil, line, 90000003)
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		out, _ = p.Unpack(out[:0], rec, 90000003)
	}
	if !bytes.Equal(out, line) {
		b.Fatal("not the line")
	}
}

// appendTime formats as the time package does, over every year it
// formats itself and beyond.
func TestAppendTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	edges := []int64{0, -1, 86399, 86400, -86400, -62167219200, -62167219201, 253402300799, 253402300800,
		951782400, 951868800, 4107542400, -2208988800} // leap days, 2100, 1900
	for range 200000 {
		edges = append(edges, rng.Int64N(253402300799+62167219200+1000)-62167219200-500)
	}
	for _, s := range edges {
		want := time.Unix(s, 0).UTC().AppendFormat(nil, timeLayout)
		if got := appendTime(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%d: %s, want %s", s, got, want)
		}
	}
}
