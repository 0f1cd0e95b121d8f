package recpack

import (
	"bytes"
	"testing"
)

// FuzzPack: whatever the line, it comes back as it was.
func FuzzPack(f *testing.F) {
	for _, l := range lines {
		f.Add([]byte(l), int64(90000001))
	}
	f.Fuzz(func(t *testing.T, line []byte, key int64) {
		p := NewPacker(nil)
		rec := p.Append(nil, line, key)
		s, err := Parse(p.Marshal())
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Unpack(nil, rec, key)
		if err != nil || !bytes.Equal(got, line) {
			t.Fatalf("%q came back %q, %v", line, got, err)
		}
	})
}

// FuzzUnpack: damaged shapes and records are errors, never a panic.
func FuzzUnpack(f *testing.F) {
	p := NewPacker(nil)
	for k, l := range lines {
		f.Add(p.Marshal(), p.Append(nil, []byte(l), int64(k)))
	}
	f.Add([]byte{1, 2, 5, 1, 'a', 3, 1, 'b'}, []byte{1, 0x80})
	f.Fuzz(func(t *testing.T, shapes, rec []byte) {
		s, err := Parse(shapes)
		if err != nil {
			return
		}
		if _, err := Parse(s.Marshal()); err != nil {
			t.Fatalf("shapes parsed do not parse again: %v", err)
		}
		s.Unpack(nil, rec, 1)
	})
}
