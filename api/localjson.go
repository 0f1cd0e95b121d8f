package api

import (
	"strconv"
	"sync"
	"unicode/utf8"

	"gds/query"
)

// appendLocal encodes l as encoding/json encodes a query.Local (fields in
// their order, alliance_id and faction_id only when set, strings escaped
// as json.Marshal escapes them), without reflection: a local of a
// thousand pilots is some 100–250 KB of JSON.
func appendLocal(b []byte, l query.Local) []byte {
	b = appendArray(append(b, `{"characters":`...), l.Characters, appendLocalCharacter)
	b = appendArray(append(b, `,"corporations":`...), l.Corporations, appendLocalCorporation)
	b = appendArray(append(b, `,"alliances":`...), l.Alliances, appendLocalAlliance)
	b = appendArray(append(b, `,"unknown":`...), l.Unknown, appendJSONString)
	return append(b, '}')
}

// appendArray appends list as a JSON array of its items (null when nil,
// as encoding/json writes a nil slice).
func appendArray[T any](b []byte, list []T, item func([]byte, T) []byte) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, x := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = item(b, x)
	}
	return append(b, ']')
}

func appendLocalCharacter(b []byte, c query.LocalCharacter) []byte {
	b = append(b, `{"character_id":`...)
	b = strconv.AppendInt(b, c.CharacterID, 10)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, c.Name)
	b = append(b, `,"corporation_id":`...)
	b = strconv.AppendInt(b, c.CorporationID, 10)
	b = appendOptionalID(b, `,"alliance_id":`, c.AllianceID)
	b = appendOptionalID(b, `,"faction_id":`, c.FactionID)
	return append(b, '}')
}

func appendLocalCorporation(b []byte, c query.LocalCorporation) []byte {
	b = append(b, `{"corporation_id":`...)
	b = strconv.AppendInt(b, c.CorporationID, 10)
	b = appendNameTicker(b, c.Name, c.Ticker)
	b = appendOptionalID(b, `,"alliance_id":`, c.AllianceID)
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, int64(c.Count), 10)
	return append(b, '}')
}

func appendLocalAlliance(b []byte, a query.LocalAlliance) []byte {
	b = append(b, `{"alliance_id":`...)
	b = strconv.AppendInt(b, a.AllianceID, 10)
	b = appendNameTicker(b, a.Name, a.Ticker)
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, int64(a.Count), 10)
	return append(b, '}')
}

// appendOptionalID appends the field key (with its comma) and id, unless
// id is zero (omitempty).
func appendOptionalID(b []byte, key string, id int64) []byte {
	if id == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), id, 10)
}

// appendNameTicker appends a group's name and ticker fields.
func appendNameTicker(b []byte, name, ticker string) []byte {
	b = append(b, `,"name":`...)
	b = appendJSONString(b, name)
	b = append(b, `,"ticker":`...)
	return appendJSONString(b, ticker)
}

// appendJSONString appends s as a JSON string exactly as json.Marshal
// writes it: `"` and `\` escaped, control characters as \b, \f, \n, \r,
// \t or \u00XX, the HTML characters <, > and & as \u003c, \u003e and
// \u0026, U+2028 and U+2029 escaped, and each byte of invalid UTF-8 as
// \ufffd.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonPlain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// jsonPlain holds the ASCII bytes json.Marshal writes as they are: all
// but the control characters, `"`, `\` and the HTML characters <, >, &.
var jsonPlain = func() (t [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// localBodies are the buffers local answers are encoded into.
var localBodies = sync.Pool{New: func() any { b := make([]byte, 0, 256<<10); return &b }}

// maxPooledLocal: a local of a thousand pilots of the game's names fits
// in less; the answers of many namesakes are left to the collector.
const maxPooledLocal = 1 << 20
