package snapshots

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// Characters are most of a large snapshot, and encoding/json spends most
// of a build's reading time on them through reflection (and on the
// characters' corporation roles, decodeRoles). decodeCharacter reads the flat shape this
// package writes (no spaces, no nested names, each known key once)
// directly, and declines anything else: the caller then decodes the line
// with encoding/json, which stays the one judge of what is valid and
// of every error message. FuzzDecodeCharacter checks that whatever this
// accepts, encoding/json decodes to the same record; FuzzDecodeRoles the
// same of decodeRoles.

// fieldScanner walks the members of one flat JSON object: a decoder
// loops while more reads a key (k), reads the key's value and ends the
// member with read; flat then says whether the line had the flat shape.
type fieldScanner struct {
	b    []byte
	i    int
	k    []byte // the key of the member being read
	seen uint32 // the bits of the keys met, to decline repeats
	end  bool   // past the closing brace
	flat bool   // the line has the flat shape so far
}

// members starts a scanner over line, which must be a JSON object.
func members(line []byte) fieldScanner {
	if len(line) < 2 || line[0] != '{' {
		return fieldScanner{}
	}
	return fieldScanner{b: line, i: 1, end: len(line) == 2, flat: len(line) > 2 || line[1] == '}'}
}

// more reads the next member's key into k; it is false at the object's
// end and once the line is not of the flat shape.
func (s *fieldScanner) more() bool {
	if s.end || !s.flat {
		return false
	}
	s.k, s.flat = s.key()
	return s.flat
}

// read ends a member whose value was read when ok, under its key's bit (0
// for a key that may repeat; others are met once at most).
func (s *fieldScanner) read(bit uint32, ok bool) {
	if !ok || s.seen&bit != 0 {
		s.flat = false
		return
	}
	s.seen |= bit
	s.end, s.flat = s.next()
}

// key reads `"key":` (or the opening brace before the first one) and
// returns the key; ok is false at the closing brace or on anything else.
func (s *fieldScanner) key() (key []byte, ok bool) {
	b, i := s.b, s.i
	if i >= len(b) || b[i] != '"' {
		return nil, false
	}
	j := i + 1
	for j < len(b) && b[j] != '"' && b[j] != '\\' {
		j++
	}
	if j+1 >= len(b) || b[j] != '"' || b[j+1] != ':' {
		return nil, false
	}
	s.i = j + 2
	return b[i+1 : j], true
}

// next consumes the comma after a value; done is true after the closing
// brace ends the input, ok is false on anything else.
func (s *fieldScanner) next() (done, ok bool) {
	if s.i >= len(s.b) {
		return false, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return false, true
	case '}':
		s.i++
		return true, s.i == len(s.b)
	}
	return false, false
}

// str reads a string. One without escapes (nearly all) is taken as it
// is, which is what encoding/json returns for it; one with escapes is
// unquoted by encoding/json itself.
func (s *fieldScanner) str() (string, bool) {
	raw, escaped, ok := s.quoted()
	if !ok {
		return "", false
	}
	if escaped {
		var v string
		return v, json.Unmarshal(raw, &v) == nil
	}
	return string(raw[1 : len(raw)-1]), true
}

// quoted reads a string without control characters, valid UTF-8 unless it
// has escapes, and returns it with its quotes.
func (s *fieldScanner) quoted() (raw []byte, escaped, ok bool) {
	b, i := s.b, s.i
	if i >= len(b) || b[i] != '"' {
		return nil, false, false
	}
	ascii := true
	j := i + 1
	for ; j < len(b) && b[j] != '"'; j++ {
		switch c := b[j]; {
		case c < 0x20:
			return nil, false, false
		case c == '\\':
			escaped = true
			j++ // the escaped byte cannot end the string
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	if j >= len(b) || (!ascii && !escaped && !utf8.Valid(b[i+1:j])) {
		return nil, false, false
	}
	s.i = j + 1
	return b[i : j+1], escaped, true
}

// number reads a JSON number token; integer says it has no fraction or
// exponent.
func (s *fieldScanner) number() (tok []byte, integer, ok bool) {
	b, i := s.b, s.i
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && '1' <= b[j] && b[j] <= '9':
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
	default:
		return nil, false, false
	}
	integer = true
	if j < len(b) && b[j] == '.' {
		integer = false
		j++
		k := j
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		if j == k {
			return nil, false, false
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		integer = false
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		k := j
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		if j == k {
			return nil, false, false
		}
	}
	s.i = j
	return b[i:j], integer, true
}

// int reads an integer that fits an int64.
func (s *fieldScanner) int() (int64, bool) {
	tok, integer, ok := s.number()
	if !ok || !integer {
		return 0, false
	}
	n, err := strconv.ParseInt(string(tok), 10, 64)
	return n, err == nil
}

// Bits of the keys a character line has set, to decline repeats.
const (
	chID = 1 << iota
	chName
	chCorporation
	chAlliance
	chBirthday
	chGender
	chRace
	chBloodline
	chAncestry
	chSecurity
	chDescription
	chTitle
	chFaction
)

// decodeCharacter decodes line into c (a zero Character) when it has the
// flat shape; false means c is unspecified and the line must be decoded
// by encoding/json.
func decodeCharacter(line []byte, c *Character) bool {
	s := members(line)
	for s.more() {
		switch string(s.k) {
		case "id":
			s.read(chID, s.intTo(&c.ID))
		case "name":
			s.read(chName, s.strTo(&c.Name))
		case "corporation_id":
			s.read(chCorporation, s.intTo(&c.CorporationID))
		case "alliance_id":
			s.read(chAlliance, s.intTo(&c.AllianceID))
		case "birthday":
			s.read(chBirthday, s.timeTo(&c.Birthday))
		case "gender":
			s.read(chGender, s.strTo(&c.Gender))
		case "race_id":
			s.read(chRace, s.intTo(&c.RaceID))
		case "bloodline_id":
			s.read(chBloodline, s.intTo(&c.BloodlineID))
		case "ancestry_id":
			s.read(chAncestry, s.intTo(&c.AncestryID))
		case "security_status":
			s.read(chSecurity, s.floatTo(&c.SecurityStatus))
		case "description":
			s.read(chDescription, s.strTo(&c.Description))
		case "title":
			s.read(chTitle, s.strTo(&c.Title))
		case "faction_id":
			s.read(chFaction, s.intTo(&c.FactionID))
		default:
			return false // names, or a key encoding/json must judge
		}
	}
	return s.flat
}

// intTo, strTo, timeTo, floatTo and stringsTo read a value into *v,
// reporting whether it could.
func (s *fieldScanner) intTo(v *int64) (ok bool) {
	*v, ok = s.int()
	return ok
}

func (s *fieldScanner) strTo(v *string) (ok bool) {
	*v, ok = s.str()
	return ok
}

func (s *fieldScanner) stringsTo(v *[]string) (ok bool) {
	*v, ok = s.strings()
	return ok
}

func (s *fieldScanner) timeTo(v **time.Time) bool {
	q, _, ok := s.quoted()
	if !ok {
		return false
	}
	t := new(time.Time)
	*v = t
	return t.UnmarshalJSON(q) == nil
}

func (s *fieldScanner) floatTo(v **float64) bool {
	tok, _, ok := s.number()
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	*v = &f
	return err == nil
}

// DecodeRecord decodes a record line of a snapshot (as a generation's
// record store holds it) into rec, a zero record of its kind: by a fast
// decoder when one knows the kind and the line's shape, by encoding/json
// otherwise. Lookups decode what they answer this way (a character, an
// analyst's hit's fields): a fast decoder takes about a seventh of
// encoding/json's time.
func DecodeRecord(line []byte, rec Record) error {
	if decodeFast(line, rec) {
		return nil
	}
	return json.Unmarshal(line, rec)
}

// DecodeName returns the name of a named record's line (Named's
// DisplayName) without decoding the rest, when the line has the flat
// shape and no localized names (which only encoding/json reads):
// resolving IDs to names needs nothing else. false means the line must
// be decoded whole (DecodeRecord). FuzzDecodeName checks it against
// encoding/json.
func DecodeName(line []byte) (string, bool) {
	var name string
	s := members(line)
	for s.more() {
		if string(s.k) == "name" {
			s.read(1, s.strTo(&name))
		} else {
			s.read(0, s.skipOther("name", "names"))
		}
	}
	if !s.flat || s.seen&1 == 0 {
		return "", false
	}
	return name, true
}

// skipOther passes over the value of a key (k) a fast decoder does not
// read. Such keys may repeat, and must be valid JSON strings (key stops at
// quotes and backslashes only). It reports false for a key that matches
// one of fields but for case, which encoding/json matches to the field.
func (s *fieldScanner) skipOther(fields ...string) bool {
	for _, f := range fields {
		if bytes.EqualFold(s.k, []byte(f)) {
			return false
		}
	}
	return !slices.ContainsFunc(s.k, func(c byte) bool { return c < 0x20 }) && s.skipFlat()
}

// skipFlat passes over a value that is a string, a number, true, false or
// null; it reports false on anything else (an object, a list).
func (s *fieldScanner) skipFlat() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, _, ok := s.quoted()
		return ok
	case c == '-' || '0' <= c && c <= '9':
		_, _, ok := s.number()
		return ok
	}
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
			s.i += len(lit)
			return true
		}
	}
	return false
}

// decodeFast decodes line into rec when a fast decoder knows rec's kind
// and the line's shape; false means rec must be decoded by encoding/json.
func decodeFast(line []byte, rec Record) bool {
	switch r := rec.(type) {
	case *Character:
		if decodeCharacter(line, r) {
			return true
		}
		*r = Character{}
	case *CharacterRoles:
		if decodeRoles(line, r) {
			return true
		}
		*r = CharacterRoles{}
	}
	return false
}

// decodeRoles decodes a corporation roles line, the second largest kind
// by records, into r (a zero CharacterRoles) when it has the flat shape
// (each key once, roles a list of strings); false means r is unspecified.
func decodeRoles(line []byte, r *CharacterRoles) bool {
	s := members(line)
	for s.more() {
		switch string(s.k) {
		case "character_id":
			s.read(1, s.intTo(&r.CharacterID))
		case "corporation_id":
			s.read(2, s.intTo(&r.CorporationID))
		case "roles":
			s.read(4, s.stringsTo(&r.Roles))
		default:
			return false
		}
	}
	return s.flat
}

// strings reads a list of strings (not null: encoding/json judges that).
func (s *fieldScanner) strings() ([]string, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '[' {
		return nil, false
	}
	s.i++
	list := []string{}
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return list, true
	}
	for {
		v, ok := s.str()
		if !ok || s.i >= len(s.b) {
			return nil, false
		}
		list = append(list, v)
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return list, true
		default:
			return nil, false
		}
	}
}

// Affiliation is what a pasted local needs of a character: its name and
// the corporation, alliance and faction it flies for.
type Affiliation struct {
	Name                                 string
	CorporationID, AllianceID, FactionID int64
}

// DecodeAffiliation reads a character line's name, corporation, alliance
// and faction without decoding the rest, when the line has the flat shape
// and no localized names; false means the line must be decoded whole
// (DecodeRecord). FuzzDecodeAffiliation checks it against encoding/json.
func DecodeAffiliation(line []byte) (Affiliation, bool) {
	var a Affiliation
	s := members(line)
	for s.more() {
		switch string(s.k) {
		case "name":
			s.read(1, s.strTo(&a.Name))
		case "corporation_id":
			s.read(2, s.intTo(&a.CorporationID))
		case "alliance_id":
			s.read(4, s.intTo(&a.AllianceID))
		case "faction_id":
			s.read(8, s.intTo(&a.FactionID))
		default:
			s.read(0, s.skipOther("name", "names", "corporation_id", "alliance_id", "faction_id"))
		}
	}
	if !s.flat || s.seen&1 == 0 {
		return Affiliation{}, false
	}
	return a, true
}
