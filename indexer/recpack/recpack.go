// Package recpack owns the packed form in which a record store keeps each
// record's JSON line: the line's keys and value types once per store, as
// a shape, and per record only its shape's number and its values in
// binary. Unpacking gives back the very bytes that were packed, always:
// Packer.Append unpacks what it made and keeps a line that does not come
// back the same as it was (number 0 and the bytes as given).
//
// A record line is packed when it is one flat JSON object without white
// space, as snapshot lines are; a value that is not a plain integer,
// decimal, string, instant or boolean (an array, an object, null, an
// exponent) is kept as its text. Packed, a 10M characters' line of about
// 190 bytes takes about 45 before compression, and its blocks compress
// to about 30 bytes a record against 51 for the lines themselves
// (docs/performance.md).
//
// A packed record, after its shape's number (uvarint; 0: the line as it
// was follows):
//
//	raw    uvarint length, the value's text
//	key    nothing: an integer equal to the record's key
//	int    zigzag varint
//	dec    zigzag varint of the digits, then a byte: how many follow the point
//	str    uvarint length, the bytes between the quotes (escapes as written)
//	time   zigzag varint of seconds since 1970 ("YYYY-MM-DDTHH:MM:SSZ")
//	bool   a byte, 0 or 1
//
// The shapes (Shapes.Marshal): uvarint count, then per shape uvarint
// fields and per field its type byte, uvarint key length and the key's
// bytes between its quotes.
package recpack

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
	"time"
)

// Value types of a shape's fields.
const (
	tRaw byte = iota
	tKey
	tInt
	tDec
	tStr
	tTime
	tBool
	nTypes
)

// Bounds on what one store's shapes may hold: a line of a shape beyond
// them is kept as it was.
const (
	MaxShapes = 1024
	maxFields = 256
	maxKey    = 256
)

// ErrDamaged is returned for packed bytes or shapes that do not decode.
var ErrDamaged = errors.New("packed record damaged")

type shape struct {
	keys  [][]byte
	types []byte
	pre   [][]byte // per field, what comes before its value: {"key": or ,"key":
}

// newShape makes a shape of keys and types (which it keeps).
func newShape(keys [][]byte, types []byte) shape {
	sh := shape{keys: keys, types: types, pre: make([][]byte, len(keys))}
	for i, k := range keys {
		c := byte(',')
		if i == 0 {
			c = '{'
		}
		sh.pre[i] = append(append(append([]byte{c, '"'}, k...), '"'), ':')
	}
	return sh
}

// Shapes are a store's record shapes, numbered from 1.
type Shapes struct {
	list []shape
}

// Len is the number of shapes.
func (s *Shapes) Len() int { return len(s.list) }

// Marshal is the shapes' serialized form, which Parse reads.
func (s *Shapes) Marshal() []byte {
	out := binary.AppendUvarint(nil, uint64(len(s.list)))
	for _, sh := range s.list {
		out = binary.AppendUvarint(out, uint64(len(sh.keys)))
		for i, k := range sh.keys {
			out = append(out, sh.types[i])
			out = binary.AppendUvarint(out, uint64(len(k)))
			out = append(out, k...)
		}
	}
	return out
}

// Parse reads Marshal's bytes into shapes of their own (b is not kept).
func Parse(b []byte) (*Shapes, error) {
	r := reader{b: b}
	n, ok := r.uvarint()
	if !ok || n > MaxShapes {
		return nil, errors.New("record shapes damaged")
	}
	s := &Shapes{list: make([]shape, 0, n)}
	for range n {
		nf, ok := r.uvarint()
		if !ok || nf > maxFields {
			return nil, errors.New("record shapes damaged")
		}
		keys, types := make([][]byte, nf), make([]byte, nf)
		for i := range nf {
			t, ok := r.byte()
			if !ok || t >= nTypes {
				return nil, errors.New("record shapes damaged")
			}
			kl, ok := r.uvarint()
			if !ok || kl > maxKey {
				return nil, errors.New("record shapes damaged")
			}
			k, ok := r.bytes(int(kl))
			if !ok {
				return nil, errors.New("record shapes damaged")
			}
			types[i], keys[i] = t, bytes.Clone(k)
		}
		s.list = append(s.list, newShape(keys, types))
	}
	if len(r.b) != 0 {
		return nil, errors.New("record shapes damaged: bytes after the last")
	}
	return s, nil
}

// Unpack appends the line packed in rec, the record of key, to dst.
func (s *Shapes) Unpack(dst, rec []byte, key int64) ([]byte, error) {
	r := reader{b: rec}
	id, ok := r.uvarint()
	if !ok {
		return dst, ErrDamaged
	}
	if id == 0 {
		return append(dst, r.b...), nil
	}
	if id > uint64(len(s.list)) {
		return dst, ErrDamaged
	}
	dst, err := s.list[id-1].render(dst, &r, key)
	if err == nil && len(r.b) != 0 {
		err = ErrDamaged
	}
	return dst, err
}

// render appends the line of shape sh whose values r holds.
func (sh *shape) render(dst []byte, r *reader, key int64) ([]byte, error) {
	if len(sh.keys) == 0 {
		dst = append(dst, '{')
	}
	for i, pre := range sh.pre {
		dst = append(dst, pre...)
		var ok bool
		switch sh.types[i] {
		case tKey:
			dst, ok = strconv.AppendInt(dst, key, 10), true
		case tInt:
			var v int64
			if v, ok = r.varint(); ok {
				dst = strconv.AppendInt(dst, v, 10)
			}
		case tDec:
			var v int64
			var scale byte
			if v, ok = r.varint(); ok {
				if scale, ok = r.byte(); ok {
					dst = appendDecimal(dst, v, int(scale))
				}
			}
		case tStr:
			var b []byte
			if b, ok = r.lenBytes(); ok {
				dst = append(dst, '"')
				dst = append(dst, b...)
				dst = append(dst, '"')
			}
		case tTime:
			var v int64
			if v, ok = r.varint(); ok {
				dst = append(dst, '"')
				dst = appendTime(dst, v)
				dst = append(dst, '"')
			}
		case tBool:
			var c byte
			if c, ok = r.byte(); ok {
				switch c {
				case 0:
					dst = append(dst, "false"...)
				case 1:
					dst = append(dst, "true"...)
				default:
					ok = false
				}
			}
		default: // tRaw
			var b []byte
			if b, ok = r.lenBytes(); ok {
				dst = append(dst, b...)
			}
		}
		if !ok {
			return dst, ErrDamaged
		}
	}
	return append(dst, '}'), nil
}

const timeLayout = "2006-01-02T15:04:05Z"

// appendTime appends the instant secs seconds after 1970 in timeLayout,
// computing the civil date itself (Hinnant's days-to-civil), in a fifth
// of the time package's formatting; years outside 0–9999 are formatted
// by the time package.
func appendTime(dst []byte, secs int64) []byte {
	const (
		minSecs = -62167219200 // 0000-01-01T00:00:00Z
		maxSecs = 253402300799 // 9999-12-31T23:59:59Z
	)
	if secs < minSecs || secs > maxSecs {
		return time.Unix(secs, 0).UTC().AppendFormat(dst, timeLayout)
	}
	days, rem := secs/86400, secs%86400
	if rem < 0 {
		days, rem = days-1, rem+86400
	}
	z := days + 719468 // days since 0000-03-01
	era := z / 146097
	if z < 0 {
		era = (z - 146096) / 146097
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
		y++
	}
	two := func(b []byte, v int64) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }
	dst = two(dst, y/100)
	dst = two(dst, y%100)
	dst = two(append(dst, '-'), m)
	dst = two(append(dst, '-'), d)
	dst = two(append(dst, 'T'), rem/3600)
	dst = two(append(dst, ':'), rem/60%60)
	dst = two(append(dst, ':'), rem%60)
	return append(dst, 'Z')
}

// appendDecimal appends v with scale digits after the point.
func appendDecimal(dst []byte, v int64, scale int) []byte {
	u := uint64(v)
	if v < 0 {
		dst = append(dst, '-')
		u = -u
	}
	// The digits go to the end of buf's first half, so that leading zeros
	// (0.05 is 5 at scale 2) go before them without allocating.
	var buf [48]byte
	digits := strconv.AppendUint(buf[24:24], u, 10)
	for start := 24; len(digits) <= scale; {
		if start == 0 {
			digits = append([]byte{'0'}, digits...)
			continue
		}
		start--
		buf[start] = '0'
		digits = buf[start : start+len(digits)+1]
	}
	cut := len(digits) - scale
	dst = append(dst, digits[:cut]...)
	dst = append(dst, '.')
	return append(dst, digits[cut:]...)
}

// reader reads a packed record.
type reader struct{ b []byte }

func (r *reader) uvarint() (uint64, bool) {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		return 0, false
	}
	r.b = r.b[n:]
	return v, true
}

func (r *reader) varint() (int64, bool) {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		return 0, false
	}
	r.b = r.b[n:]
	return v, true
}

func (r *reader) byte() (byte, bool) {
	if len(r.b) == 0 {
		return 0, false
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c, true
}

func (r *reader) bytes(n int) ([]byte, bool) {
	if n < 0 || n > len(r.b) {
		return nil, false
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b, true
}

func (r *reader) lenBytes() ([]byte, bool) {
	n, ok := r.uvarint()
	if !ok || n > uint64(len(r.b)) {
		return nil, false
	}
	return r.bytes(int(n))
}
