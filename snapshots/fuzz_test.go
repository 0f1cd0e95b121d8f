package snapshots

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fuzzKinds are the kinds FuzzDecode feeds: the widest record shapes.
var fuzzKinds = []Kind{Types, Structures, Characters, Documents, Corporations, Roles}

// FuzzDecode feeds arbitrary bytes to Decode: it must never panic, and
// whatever it accepts must be valid, in ascending key order, and encode
// back to JSON that decodes again.
func FuzzDecode(f *testing.F) {
	for k, recs := range sample() {
		for i, kk := range fuzzKinds {
			if kk != k {
				continue
			}
			var b bytes.Buffer
			for _, r := range recs {
				raw, _ := json.Marshal(r)
				b.Write(raw)
				b.WriteByte('\n')
			}
			f.Add(b.Bytes(), uint8(i))
		}
	}
	f.Add([]byte(line34+"\n"+line35[:20]), uint8(0))
	f.Add([]byte(line34+"\n\n"+line34+"\n"), uint8(0))
	f.Add([]byte(`{"id":"abc"}`), uint8(2))
	f.Add([]byte("\x00\xff\n[1]\nnull\n"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, kind uint8) {
		k := fuzzKinds[int(kind)%len(fuzzKinds)]
		var last int64
		n := 0
		err := Decode(bytes.NewReader(data), k, "fuzz.jsonl", func(rec Record, line Line) error {
			if err := rec.Validate(); err != nil {
				t.Fatalf("Decode passed an invalid record: %v", err)
			}
			if n > 0 && rec.Key() <= last {
				t.Fatalf("Decode passed key %d after %d", rec.Key(), last)
			}
			if line.Key != rec.Key() || line.Number < int64(n+1) {
				t.Fatalf("line %+v for record %d (#%d)", line, rec.Key(), n+1)
			}
			raw, err := json.Marshal(rec)
			if err != nil {
				t.Fatalf("an accepted record does not encode: %v", err)
			}
			again := k.New()
			if err := decodeStrict(raw, again); err != nil {
				t.Fatalf("an accepted record does not decode after encoding: %v\n%s", err, raw)
			}
			last = rec.Key()
			n++
			return nil
		})
		if err != nil && !bytes.Contains([]byte(err.Error()), []byte("fuzz.jsonl")) {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

// FuzzQuickKey checks the key read without decoding against the decoder:
// whenever QuickKey reads a key from a line that decodes, the record's key
// is that key (unless the line names its key field twice, where JSON takes
// the last; such a line is decoded in full by an incremental build, since
// no earlier record has its bytes).
func FuzzQuickKey(f *testing.F) {
	f.Add([]byte(`{"id":30000142,"name":"Jita","constellation_id":20000020}`), uint8(0))
	f.Add([]byte(`{"id":0}`), uint8(0))
	f.Add([]byte(`{"id":007,"name":"x"}`), uint8(0))
	f.Add([]byte(`{"character_id":90000001,"roles":["Station_Manager"]}`), uint8(5))
	f.Add([]byte(`{"seq":3,"path":"/x/","body":{}}`), uint8(3))
	f.Add([]byte(`{"id":99999999999999999999,"name":"big"}`), uint8(2))
	f.Fuzz(func(t *testing.T, line []byte, kind uint8) {
		k := fuzzKinds[int(kind)%len(fuzzKinds)]
		prefix := keyPrefix(k)
		key, ok := QuickKey(line, prefix)
		if !ok {
			return
		}
		if key < 0 {
			t.Fatalf("QuickKey read a negative key %d from %q", key, line)
		}
		field := prefix[1:] // "id": and so on
		if bytes.Count(line, []byte(field)) != 1 {
			return
		}
		rec := k.New()
		if err := decodeStrict(line, rec); err != nil {
			return
		}
		if rec.Key() != key {
			t.Fatalf("QuickKey read %d from %q, the decoder %d", key, line, rec.Key())
		}
	})
}

// FuzzDecodeCharacter checks the fast character decoder against
// encoding/json: whatever line it accepts, the strict decoder accepts too
// and decodes to the same record.
func FuzzDecodeCharacter(f *testing.F) {
	f.Add([]byte(`{"id":90000001,"name":"Ka-Ren Kitoda","corporation_id":98605282,"birthday":"2003-05-06T00:00:33Z","gender":"male","race_id":1,"bloodline_id":2,"security_status":-0.393521}`))
	f.Add([]byte(`{"id":90000003,"name":"Tibus Korhonen","corporation_id":98218302,"alliance_id":99521142,"ancestry_id":4,"faction_id":500001,"title":"CEO","description":"Ёж 東京","security_status":1e-3}`))
	f.Add([]byte(`{"id":1,"name":"x","corporation_id":2,"birthday":"2003-02-30T00:00:00Z"}`))
	f.Add([]byte(`{"id":1,"id":2}`))
	f.Add([]byte(`{"id":-0,"name":"\u00e9","names":{"de":"x"}}`))
	f.Add([]byte(`{"id":1.0,"security_status":01}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, line []byte) { agreesWithStrict(t, line, decodeCharacter) })
}

// FuzzDecodeRoles checks the fast roles decoder against encoding/json the
// same way.
func FuzzDecodeRoles(f *testing.F) {
	f.Add([]byte(`{"character_id":90000240,"corporation_id":98020881,"roles":["Trader"]}`))
	f.Add([]byte(`{"character_id":1,"corporation_id":2,"roles":["Director","Station_Manager","\u00e9"]}`))
	f.Add([]byte(`{"character_id":1,"corporation_id":2,"roles":[]}`))
	f.Add([]byte(`{"character_id":1,"roles":null}`))
	f.Add([]byte(`{"character_id":1,"character_id":2}`))
	f.Add([]byte(`{"roles":["a",]}`))
	f.Add([]byte(`{"roles":["a" ,"b"]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, line []byte) { agreesWithStrict(t, line, decodeRoles) })
}

// agreesWithStrict checks a fast decoder on line against encoding/json:
// when fast accepts line, the strict decoder accepts it too and decodes
// the same record.
func agreesWithStrict[R any](t *testing.T, line []byte, fast func([]byte, *R) bool) {
	t.Helper()
	var got R
	if !fast(line, &got) {
		return
	}
	var strict R
	if err := decodeStrict(line, &strict); err != nil {
		t.Fatalf("fast decoder accepted what encoding/json refuses (%v): %s", err, line)
	}
	if !reflect.DeepEqual(got, strict) {
		t.Fatalf("fast decoder: %#v\nencoding/json: %#v\nline: %s", got, strict, line)
	}
}

// FuzzOpenManifest reads any manifest.json: refused, or a manifest of the
// supported format whose files are named after known kinds.
func FuzzOpenManifest(f *testing.F) {
	for _, s := range []string{
		`{"format":1,"created":"2026-11-21T00:00:00Z","files":{"characters":{"path":"characters.jsonl","sha256":"00","count":1}}}`,
		`{"format":1,"files":{"types":{"path":"types.jsonl.zst"}}}`,
		`{"format":2}`, `{"format":1,"files":{"planets":{"path":"planets.jsonl"}}}`,
		`{"format":1,"files":{"types":{"path":"../etc/passwd"}}}`, `{"format":1,"extra":true}`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ManifestName), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := OpenManifest(dir)
		if err != nil {
			return
		}
		if s.Manifest.Format != FormatVersion {
			t.Fatalf("format %d accepted", s.Manifest.Format)
		}
		for k, fi := range s.Manifest.Files {
			if k.New() == nil || filepath.Base(fi.Path) != fi.Path || !strings.HasPrefix(fi.Path, string(k)+".jsonl") {
				t.Fatalf("file %q of kind %q accepted", fi.Path, k)
			}
		}
	})
}

// FuzzDecodeRecord checks that DecodeRecord, which reads a generation's
// stored records, answers what encoding/json answers for the same line:
// the same error or none, and the same record, for the kinds with a fast
// decoder and one without.
func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte(`{"id":90000001,"name":"Ka-Ren Kitoda","corporation_id":98605282,"birthday":"2003-05-06T00:00:33Z","security_status":-0.39}`))
	f.Add([]byte(`{"id":90000001, "name":"spaced"}`))
	f.Add([]byte(`{"id":1,"name":"x","names":{"de":"y"}}`))
	f.Add([]byte(`{"character_id":1,"corporation_id":2,"roles":["Director"]}`))
	f.Add([]byte(`{"id":"1"}`))
	f.Add([]byte(`{"id":1`))
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, k := range []Kind{Characters, Roles, Corporations} {
			got, want := k.New(), k.New()
			err, wantErr := DecodeRecord(line, got), json.Unmarshal(line, want)
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("%s: DecodeRecord: %v, encoding/json: %v; line: %s", k, err, wantErr, line)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: DecodeRecord: %+v\nencoding/json: %+v\nline: %s", k, got, want, line)
			}
		}
	})
}

// FuzzDecodeName checks DecodeName against encoding/json: what it reads is
// valid JSON without localized names, whose name encoding/json reads
// alike wherever it decodes the line.
func FuzzDecodeName(f *testing.F) {
	f.Add([]byte(`{"id":90000001,"name":"Ka-Ren Kitoda","corporation_id":98605282,"birthday":"2003-05-06T00:00:33Z","security_status":-0.39,"x":null,"y":true}`))
	f.Add([]byte(`{"id":30000142,"name":"Jita","names":{"de":"Jita"}}`))
	f.Add([]byte(`{"id":1,"NAME":"x","name":"y"}`))
	f.Add([]byte(`{"id":1,"name":"a","name":"b"}`))
	f.Add([]byte(`{"id":1,"name":"\u00e9\n"}`))
	f.Add([]byte(`{"id":1,"name":null}`))
	f.Add([]byte(`{"id":1,"flag":false,"n":-1.5e3,"name":"z"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		name, ok := DecodeName(line)
		if !ok {
			return
		}
		if !json.Valid(line) {
			t.Fatalf("DecodeName read %q from invalid JSON: %s", name, line)
		}
		var e struct {
			Name  string          `json:"name"`
			Names json.RawMessage `json:"names"`
		}
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("encoding/json: %v; line: %s", err, line)
		}
		if e.Name != name || e.Names != nil {
			t.Fatalf("DecodeName: %q, encoding/json: %q (names %s); line: %s", name, e.Name, e.Names, line)
		}
	})
}

func FuzzDecodeAffiliation(f *testing.F) {
	f.Add([]byte(`{"id":90000001,"name":"Ka-Ren Kitoda","corporation_id":98605282,"alliance_id":99000001,"birthday":"2003-05-06T00:00:33Z","security_status":-0.39,"faction_id":500001}`))
	f.Add([]byte(`{"id":1,"name":"a","corporation_id":2,"corporation_id":3}`))
	f.Add([]byte(`{"id":1,"name":"a","Alliance_ID":2}`))
	f.Add([]byte(`{"id":1,"name":"a","alliance_id":null}`))
	f.Add([]byte(`{"id":1,"name":"a","alliance_id":1.5}`))
	f.Add([]byte(`{"id":1,"name":"a","names":{"de":"b"}}`))
	f.Add([]byte(`{"corporation_id":99999999999999999999,"name":"a"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		a, ok := DecodeAffiliation(line)
		if !ok {
			return
		}
		// The other fields of a stored line are valid (the build checked
		// them); these are what a local reads.
		var c struct {
			Name          string          `json:"name"`
			Names         json.RawMessage `json:"names"`
			CorporationID int64           `json:"corporation_id"`
			AllianceID    int64           `json:"alliance_id"`
			FactionID     int64           `json:"faction_id"`
		}
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatalf("DecodeAffiliation read %+v, encoding/json refuses: %v; line: %s", a, err, line)
		}
		want := Affiliation{Name: c.Name, CorporationID: c.CorporationID, AllianceID: c.AllianceID, FactionID: c.FactionID}
		if a != want || c.Names != nil {
			t.Fatalf("DecodeAffiliation: %+v, encoding/json: %+v (names %v); line: %s", a, want, c.Names, line)
		}
	})
}
