package recpack

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"time"
)

// Packer packs the lines of one store, adding shapes as it meets them.
// Not safe for concurrent use.
type Packer struct {
	Shapes
	byKey map[string]uint32 // a shape's signature → its number
	// reused per line
	sig, vals, check []byte
	spans            [][2]int // each field's key, as offsets into the line
	types            []byte
}

// NewPacker starts a packer with the shapes of from (nil: none), which
// keep their numbers: a store's delta packs its lines beside the base's.
func NewPacker(from *Shapes) *Packer {
	p := &Packer{byKey: map[string]uint32{}}
	if from != nil {
		for _, sh := range from.list {
			p.list = append(p.list, sh) // shapes are never changed: shared
			p.byKey[string(signature(nil, sh.keys, sh.types))] = uint32(len(p.list))
		}
	}
	return p
}

// Append appends line, the record of key, packed, to dst.
func (p *Packer) Append(dst, line []byte, key int64) []byte {
	id, ok := p.parse(line, key)
	if !ok {
		return appendLine(dst, line)
	}
	start := len(dst)
	dst = binary.AppendUvarint(dst, uint64(id))
	dst = append(dst, p.vals...)
	// What does not come back as it was stays as it was.
	var err error
	p.check, err = p.Unpack(p.check[:0], dst[start:], key)
	if err != nil || !bytes.Equal(p.check, line) {
		return appendLine(dst[:start], line)
	}
	return dst
}

func appendLine(dst, line []byte) []byte {
	return append(append(dst, 0), line...)
}

// parse reads line's fields into p.vals and returns the number of its
// shape, adding the shape when it is new; ok is false when the line is not
// a flat object or its shape cannot be added.
func (p *Packer) parse(line []byte, key int64) (id uint32, ok bool) {
	n := len(line)
	if n < 2 || line[0] != '{' || line[n-1] != '}' {
		return 0, false
	}
	p.vals, p.spans, p.types = p.vals[:0], p.spans[:0], p.types[:0]
	i := 1
	for i < n-1 {
		if line[i] != '"' {
			return 0, false
		}
		end := stringEnd(line, i)
		if end < 0 || end+1 >= n || line[end+1] != ':' || end-i-1 > maxKey || len(p.types) == maxFields {
			return 0, false
		}
		p.spans = append(p.spans, [2]int{i + 1, end})
		i = end + 2
		vEnd := valueEnd(line, i)
		if vEnd < 0 || vEnd > n-1 || (line[vEnd] != ',' && vEnd != n-1) {
			return 0, false
		}
		p.types = append(p.types, p.value(line[i:vEnd], key))
		i = vEnd
		if line[i] == ',' {
			i++
			if i == n-1 {
				return 0, false // a trailing comma
			}
		}
	}
	p.sig = p.sig[:0]
	for k, sp := range p.spans {
		p.sig = appendSig(p.sig, line[sp[0]:sp[1]], p.types[k])
	}
	if id, ok := p.byKey[string(p.sig)]; ok {
		return id, true
	}
	if len(p.list) >= MaxShapes {
		return 0, false
	}
	keys := make([][]byte, len(p.spans))
	for k, sp := range p.spans {
		keys[k] = bytes.Clone(line[sp[0]:sp[1]])
	}
	sh := newShape(keys, bytes.Clone(p.types))
	// The shape is kept even should this line not come back the same;
	// it costs its few bytes in the index.
	p.list = append(p.list, sh)
	id = uint32(len(p.list))
	p.byKey[string(p.sig)] = id
	return id, true
}

// value appends v's packed form to p.vals and returns its type.
func (p *Packer) value(v []byte, key int64) byte {
	switch c := v[0]; {
	case c == '"':
		in := v[1 : len(v)-1]
		if s, ok := parseTime(in); ok {
			p.vals = binary.AppendVarint(p.vals, s)
			return tTime
		}
		p.vals = binary.AppendUvarint(p.vals, uint64(len(in)))
		p.vals = append(p.vals, in...)
		return tStr
	case c == '-' || '0' <= c && c <= '9':
		if x, ok := parseInt(v); ok {
			if x == key {
				return tKey
			}
			p.vals = binary.AppendVarint(p.vals, x)
			return tInt
		}
		if x, scale, ok := parseDecimal(v); ok {
			p.vals = binary.AppendVarint(p.vals, x)
			p.vals = append(p.vals, byte(scale))
			return tDec
		}
	case string(v) == "true" || string(v) == "false":
		p.vals = append(p.vals, boolByte(v[0] == 't'))
		return tBool
	}
	p.vals = binary.AppendUvarint(p.vals, uint64(len(v)))
	p.vals = append(p.vals, v...)
	return tRaw
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// parseInt reads an integer of digits only (and a sign); what it reads
// back differently is caught by Append's check.
func parseInt(v []byte) (int64, bool) {
	for k, c := range v {
		if (c < '0' || c > '9') && (c != '-' || k != 0) {
			return 0, false
		}
	}
	x, err := strconv.ParseInt(string(v), 10, 64)
	return x, err == nil
}

// parseDecimal reads digits with one point (and a sign) as the integer of
// its digits and how many follow the point.
func parseDecimal(v []byte) (int64, int, bool) {
	dot := bytes.IndexByte(v, '.')
	if dot < 0 || len(v)-dot-1 < 1 || len(v)-dot-1 > 18 {
		return 0, 0, false
	}
	var buf [24]byte
	if len(v) > len(buf) {
		return 0, 0, false
	}
	digits := append(append(buf[:0], v[:dot]...), v[dot+1:]...)
	x, ok := parseInt(digits)
	return x, len(v) - dot - 1, ok
}

// parseTime reads "YYYY-MM-DDTHH:MM:SSZ" as seconds since 1970.
func parseTime(s []byte) (int64, bool) {
	if len(s) != len(timeLayout) || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z' {
		return 0, false
	}
	num := func(a, b int) (int, bool) {
		x := 0
		for _, c := range s[a:b] {
			if c < '0' || c > '9' {
				return 0, false
			}
			x = x*10 + int(c-'0')
		}
		return x, true
	}
	var f [6]int
	for k, at := range [6][2]int{{0, 4}, {5, 7}, {8, 10}, {11, 13}, {14, 16}, {17, 19}} {
		x, ok := num(at[0], at[1])
		if !ok {
			return 0, false
		}
		f[k] = x
	}
	return time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], 0, time.UTC).Unix(), true
}

// stringEnd is the index of the quote closing the string opening at i, or
// -1.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return -1
}

// valueEnd is the index just past the JSON value starting at i (strings,
// and arrays and objects by their brackets), or -1.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		e := stringEnd(b, i)
		if e < 0 {
			return -1
		}
		return e + 1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				if j = stringEnd(b, j); j < 0 {
					return -1
				}
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// signature identifies a shape: each key with its length, and its type.
func signature(dst []byte, keys [][]byte, types []byte) []byte {
	for k, key := range keys {
		dst = appendSig(dst, key, types[k])
	}
	return dst
}

func appendSig(dst, key []byte, t byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	return append(dst, t)
}
