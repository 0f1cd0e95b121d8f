// Package affcol owns the affiliation column format: per record of a
// kind's record store, by the store's position, the few fields the
// affiliation and local routes read (a character's corporation, alliance,
// faction and name; a corporation's alliance, faction, name and ticker; an
// alliance's name and ticker), fixed-width and read in place, so that a
// lookup is the store's key search plus one read of the record's row (a
// cache line at most) and of its name, with no block to decompress. The
// build writes it beside the store (Writer) from the records it decodes
// anyway, or carries an unchanged record's row from the previous
// generation's column (Column.Row); gds serve opens it (Open).
//
// It is a package of its own rather than part of indexer/recstore: a
// store holds any kind's records as the snapshot had them, whole; a
// column is a projection that knows what an affiliation is, written and
// read apart from the store's blocks, deltas and groups.
//
// # The file
//
// records/<kind>.aff, as Writer writes it (rows.go):
//
//	magic    "GDSAFF02"
//	n        uint64   rows (the store's records)
//	fields   uint64   bits 1–5: which fields it holds (corporation,
//	                  alliance, faction, name, ticker)
//	3 words  uint64   how each ID field is coded (0: absent; idcol.go)
//	lengths  uint64   bytes of a text's length in a row: 1, 2 or 4 (by
//	                  the longest text); 0 without a text field
//	width    uint64   bytes of a row: its fields' sum rounded up to a
//	                  power of two, at most 64
//	2 words  uint64   bytes of the name text and of the ticker text
//	padding  to byte 128, a cache line's boundary
//	rows     n rows of width bytes: each ID field present, in the order
//	                  corporation, alliance, faction, as its code (1 or 2
//	                  bytes) or value (uint32 or int64); then per text
//	                  field present, name then ticker, its offset (uint32)
//	                  in its text and its length; padded to 8 bytes
//	per coded ID field, in that order: its distinct values (int64)
//	per text field present: the text, padded
//
// A row never spans two cache lines (mapped, the rows start on a page):
// a character's corporation, alliance, faction and the place of its name
// are one cache miss, its name one more.
//
// The files generations hold from before GDSAFF02 are column-major, and
// Open reads them alike:
//
//	magic    "GDSAFF01"
//	n, fields as above
//	3 words  uint64   how each ID column is coded
//	per ID column present, in that order: a coded column's distinct
//	                  values (int64) then its n codes (uint8 or uint16),
//	                  or n values (uint32 or int64); each padded to 8 bytes
//	per text column present: n+1 uint32 offsets into its text, padded;
//	                  the text, padded
//
// Integers are little-endian, as the machine holds them. A row with no
// value holds 0 (an empty string).
//
// # Versions
//
// A change of the layout is a new magic, GDSAFF and the next number,
// written by Writer and recorded below; Open keeps reading the earlier
// ones, which generations on disk hold.
//
//	GDSAFF01  2026-11-27  column-major: each field a column
//	          2026-11-29  (same magic) a base and a delta beside a store's
//	                      index delta: <kind>.aff of the base index's
//	                      records, <kind>.aff-delta of the delta's
//	GDSAFF02  2026-11-29  row-major: a record's fields in one row of a
//	                      cache line at most; a base and a delta may be
//	                      of either version
package affcol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"gds/snapshots/disk"
)

const magic = "GDSAFF01"

// FormatVersions are the affiliation-column format Writer writes and
// those Open reads, for `gds version`.
func FormatVersions() (writes string, reads []string) {
	return magicRows, []string{magic, magicRows}
}

// Suffix is the column file's name after its kind's (records/<kind>.aff).
const Suffix = ".aff"

// DeltaSuffix is the name, after its kind's, of a column's delta: beside
// a store read through a base index and an index delta (indexer/recstore),
// the rows of the delta's records in its order, while <kind>.aff holds
// those of the base index's records. Each is a GDSAFF02 file, or the
// base a GDSAFF01 one of a generation written before it.
const DeltaSuffix = ".aff-delta"

// Positions places a store's position in a column kept as a base and a
// delta: row j of the base, or (delta) of the delta. recstore.Store
// implements it.
type Positions interface {
	Len() int
	Split(i int) (j int, delta bool)
}

// Fields says which columns a file holds.
type Fields uint64

const (
	Corporation Fields = 1 << (iota + 1)
	Alliance
	Faction
	Name
	Ticker
)

const (
	idFields = Corporation | Alliance | Faction
	allField = idFields | Name | Ticker
	header   = 48
)

// idOrder are the ID columns in file order.
var idOrder = [3]Fields{Corporation, Alliance, Faction}

// Row is one record's fields (those of the column's Fields; the others 0).
type Row struct {
	Corporation, Alliance, Faction int64
	Name, Ticker                   string
}

// Column is one kind's affiliation column, read in place.
type Column struct {
	n      int
	fields Fields
	ids    [3]idColumn
	offs   [2][]uint32
	text   [2][]byte
	rows   *rowLayout // a GDSAFF02 file's rows; nil for GDSAFF01's columns
	split  *split     // a base and a delta read as one (WithDelta)
}

// split is a column kept as a base and a delta, by a store's positions.
type split struct {
	base, delta *Column
	pos         Positions
}

// WithDelta reads base and delta, columns of the same fields, as one
// column by pos's positions.
func WithDelta(base, delta *Column, pos Positions) (*Column, error) {
	if base.fields != delta.fields {
		return nil, fmt.Errorf("affiliation column: delta of fields %#x beside a base of %#x", delta.fields, base.fields)
	}
	return &Column{n: pos.Len(), fields: base.fields, split: &split{base: base, delta: delta, pos: pos}}, nil
}

// Delta reports whether the column is a base and a delta.
func (c *Column) Delta() bool { return c.split != nil }

// at is the column and row that hold row i.
func (c *Column) at(i int) (*Column, int) {
	if c.split == nil {
		return c, i
	}
	j, delta := c.split.pos.Split(i)
	if delta {
		return c.split.delta, j
	}
	return c.split.base, j
}

// ErrDamaged is a row whose text offsets are out of order or outside the
// file (a file damaged after the build).
var ErrDamaged = errors.New("affiliation column damaged")

// Len is the number of rows.
func (c *Column) Len() int { return c.n }

// Fields is which columns the file holds.
func (c *Column) Fields() Fields { return c.fields }

// id is ID column k (0 corporation, 1 alliance, 2 faction) of row i.
func (c *Column) id(k, i int) int64 { return c.ids[k].at(i) }

// IDs returns row i's corporation, alliance and faction.
func (c *Column) IDs(i int) (corporation, alliance, faction int64) {
	c, i = c.at(i)
	if l := c.rows; l != nil {
		row := l.row(i)
		return l.ids[0].id(row), l.ids[1].id(row), l.ids[2].id(row)
	}
	return c.id(0, i), c.id(1, i), c.id(2, i)
}

// Text returns row i's name and ticker, aliasing the file.
func (c *Column) Text(i int) (name, ticker []byte, err error) {
	c, i = c.at(i)
	if l := c.rows; l != nil {
		row := l.row(i)
		if name, err = l.str(0, row); err != nil {
			return nil, nil, err
		}
		ticker, err = l.str(1, row)
		return name, ticker, err
	}
	if name, err = c.str(0, i); err != nil {
		return nil, nil, err
	}
	ticker, err = c.str(1, i)
	return name, ticker, err
}

func (c *Column) str(k, i int) ([]byte, error) {
	offs := c.offs[k]
	if offs == nil {
		return nil, nil
	}
	lo, hi := offs[i], offs[i+1]
	if lo > hi || uint64(hi) > uint64(len(c.text[k])) {
		return nil, ErrDamaged
	}
	return c.text[k][lo:hi], nil
}

// Warm reads each of rows' IDs, text offsets and first text bytes (rows
// below zero or past the end passed over), in passes of reads
// independent of each other, so that their cache misses overlap and the
// reads of the rows that follow find them cached: a thousand rows of
// millions, read one after another, would wait for each miss in turn.
// It returns a byte of what it read, for the caller to keep alive.
func (c *Column) Warm(rows []int) byte {
	if c.split != nil {
		var base, delta []int
		for _, i := range rows {
			if uint(i) < uint(c.n) {
				if j, inDelta := c.split.pos.Split(i); inDelta {
					delta = append(delta, j)
				} else {
					base = append(base, j)
				}
			}
		}
		return c.split.base.Warm(base) + c.split.delta.Warm(delta)
	}
	if c.rows != nil {
		return c.rows.warm(rows, c.n)
	}
	var touch byte
	for k := range c.ids {
		touch += c.ids[k].warm(rows)
	}
	for k, offs := range c.offs {
		if offs == nil {
			continue
		}
		for _, i := range rows {
			if uint(i) < uint(c.n) {
				touch += byte(offs[i])
			}
		}
		text := c.text[k]
		for _, i := range rows {
			if uint(i) < uint(c.n) && int(offs[i]) < len(text) {
				touch += text[offs[i]]
			}
		}
	}
	return touch
}

// Row returns row i whole, its strings copied.
func (c *Column) Row(i int) (Row, error) {
	var r Row
	r.Corporation, r.Alliance, r.Faction = c.IDs(i)
	name, ticker, err := c.Text(i)
	r.Name, r.Ticker = string(name), string(ticker)
	return r, err
}

// parse reads a column file of either layout; every slice aliases b.
// read(from, to) says that the check of GDSAFF02's rows is done with
// b[from:to].
func parse(b []byte, read func(from, to int)) (*Column, error) {
	if len(b) < header || (string(b[:8]) != magic && string(b[:8]) != magicRows) {
		return nil, fmt.Errorf("not an affiliation column")
	}
	n64, fields := binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint64(b[16:])
	if n64 >= math.MaxUint32 || n64 > uint64(len(b)) {
		return nil, fmt.Errorf("%d rows in %d bytes", n64, len(b))
	}
	if fields&^uint64(allField) != 0 {
		return nil, fmt.Errorf("unknown fields %#x", fields)
	}
	if string(b[:8]) == magicRows {
		return parseRows(b, n64, Fields(fields), read)
	}
	n := int(n64)
	c := &Column{n: n, fields: Fields(fields)}
	p := uint64(header)
	take := func(size uint64) ([]byte, error) {
		if size > uint64(len(b))-p {
			return nil, fmt.Errorf("truncated: %d bytes, need %d more at %d", len(b), size, p)
		}
		s := b[p : p+size]
		p += disk.Pad8(size)
		if p > uint64(len(b)) {
			return nil, fmt.Errorf("truncated padding at %d", len(b))
		}
		return s, nil
	}
	for k, f := range idOrder {
		word := binary.LittleEndian.Uint64(b[24+8*k:])
		if (c.fields&f == 0) != (word == 0) {
			return nil, fmt.Errorf("column %d: coding %#x for fields %#x", k, word, fields)
		}
		if word == 0 {
			continue
		}
		var err error
		if c.ids[k], err = parseIDColumn(word, n64, take); err != nil {
			return nil, err
		}
	}
	for k, f := range []Fields{Name, Ticker} {
		if c.fields&f == 0 {
			continue
		}
		s, err := take(4 * (n64 + 1))
		if err != nil {
			return nil, err
		}
		c.offs[k] = disk.FromBytes[uint32](s)
		size := uint64(c.offs[k][n])
		if c.text[k], err = take(size); err != nil {
			return nil, err
		}
	}
	if p != uint64(len(b)) {
		return nil, fmt.Errorf("%d bytes, the layout says %d", len(b), p)
	}
	return c, nil
}
