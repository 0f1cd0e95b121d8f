package indexer

import (
	"strconv"
	"sync"
	"time"
	"unsafe"

	bdoc "github.com/blevesearch/bleve/v2/document"
	index "github.com/blevesearch/bleve_index_api"

	"gds/indexer/nametable"
)

// bleveDoc is a record as a bleve document whose fields are analysed as the
// document is made, the way the mapping's analyzers would analyse them
// (tests compare the two): bleve's own documents analyse each field through
// a queue of workers into a token stream, a frequency map and a dozen small
// objects per field, which at 10M names was a tenth of the build. A name
// of ASCII letters and digits between spaces and hyphens, nearly every
// player's, is split and folded here as substrings of its folded form
// without allocating; any other name goes through the analyzer.
type bleveDoc struct {
	id     string
	fields []bleveField
}

// bleveField is one analysed field of a bleveDoc.
type bleveField struct {
	name     string
	options  index.FieldIndexingOptions
	arrayPos []uint64
	value    []byte
	length   int // tokens
	freqs    index.TokenFrequencies
	typ      byte // bleve's encoded field type: t text (0 too), n numeric, d datetime
}

func (d *bleveDoc) ID() string { return d.id }

// Size estimates the document's memory for bleve's statistics, without
// walking every term.
func (d *bleveDoc) Size() int {
	n := int(unsafe.Sizeof(*d)) + len(d.id)
	for i := range d.fields {
		f := &d.fields[i]
		n += int(unsafe.Sizeof(*f)) + 2*len(f.value) + f.length*int(unsafe.Sizeof(index.TokenFreq{}))
	}
	return n
}

func (d *bleveDoc) VisitFields(visit index.FieldVisitor) {
	for i := range d.fields {
		visit(&d.fields[i])
	}
}

func (d *bleveDoc) VisitComposite(index.CompositeFieldVisitor) {}
func (d *bleveDoc) HasComposite() bool                         { return false }

func (d *bleveDoc) NumPlainTextBytes() uint64 {
	var n uint64
	for i := range d.fields {
		n += uint64(len(d.fields[i].value))
	}
	return n
}

// AddIDField adds the stored _id field bleve finds documents by (once:
// bleve calls it for every batch the document is in).
func (d *bleveDoc) AddIDField() {
	for i := range d.fields {
		if d.fields[i].name == DocIDField {
			return
		}
	}
	d.addTerm(DocIDField, index.IndexField|index.StoreField, nil, d.id)
}

func (d *bleveDoc) StoredFieldsBytes() uint64 {
	n := uint64(len(d.id))
	for i := range d.fields {
		if d.fields[i].options.IsStored() && d.fields[i].name != DocIDField {
			n += uint64(len(d.fields[i].value))
		}
	}
	return n
}

// Indexed reports whether the document was filtered out of indexing; these
// never are.
func (d *bleveDoc) Indexed() bool { return false }

// addTerm adds a field holding value as its one token (at position 1,
// when the field keeps term vectors).
func (d *bleveDoc) addTerm(name string, options index.FieldIndexingOptions, arrayPos []uint64, value string) {
	tf := newFreq(value)
	if options.IncludeTermVectors() {
		tf.Locations = []*index.TokenLocation{{ArrayPositions: arrayPos, End: len(value), Position: 1}}
	}
	d.fields = append(d.fields, bleveField{name: name, options: options, arrayPos: arrayPos,
		value: bytesOf(value), length: 1, freqs: index.TokenFrequencies{value: tf}, typ: 't'})
}

// nameOptions are the indexing options of the name fields (name, words,
// name_XX): indexed with term vectors, the places of their words, without
// which bleve's phrases (the query string's "caldari navy") match nothing.
const nameOptions = index.IndexField | index.IncludeTermVectors

// addAnalysed adds a field analysed by bleve's own field type (text,
// numeric or datetime).
func (d *bleveDoc) addAnalysed(f index.Field) {
	f.Analyze()
	d.fields = append(d.fields, bleveField{name: f.Name(), options: f.Options(), arrayPos: f.ArrayPositions(),
		value: f.Value(), length: f.AnalyzedLength(), freqs: f.AnalyzedTokenFrequencies(), typ: f.EncodedFieldType()})
}

func (f *bleveField) Name() string             { return f.name }
func (f *bleveField) Value() []byte            { return f.value }
func (f *bleveField) ArrayPositions() []uint64 { return f.arrayPos }
func (f *bleveField) EncodedFieldType() byte {
	if f.typ == 0 {
		return 't'
	}
	return f.typ
}
func (f *bleveField) Analyze()                                         {}
func (f *bleveField) Options() index.FieldIndexingOptions              { return f.options }
func (f *bleveField) AnalyzedLength() int                              { return f.length }
func (f *bleveField) AnalyzedTokenFrequencies() index.TokenFrequencies { return f.freqs }
func (f *bleveField) NumPlainTextBytes() uint64                        { return uint64(len(f.value)) }

func newFreq(term string) *index.TokenFreq {
	tf := &index.TokenFreq{Term: bytesOf(term)}
	tf.SetFrequency(1)
	return tf
}

// bytesOf is s's bytes without a copy. bleve reads fields' values and
// terms and never writes them.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// document makes d's bleve document.
func (ds *documents) document(d docInfo) *bleveDoc {
	doc := &bleveDoc{id: strconv.FormatInt(d.id, 10)}
	doc.fields = make([]bleveField, 0, 3+len(d.names())+len(d.access())+len(d.attrs()))
	if folded, ok := foldASCII(d.name); ok {
		doc.addTerm(FieldName, nameOptions, nil, folded)
		freqs, n := asciiWords(folded)
		doc.fields = append(doc.fields, bleveField{name: FieldWords, options: nameOptions,
			value: bytesOf(d.name), length: n, freqs: freqs})
	} else {
		doc.addAnalysed(bdoc.NewTextFieldCustom(FieldName, nil, []byte(d.name), nameOptions, ds.exact))
		doc.addAnalysed(bdoc.NewTextFieldCustom(FieldWords, nil, []byte(d.name), nameOptions, ds.words))
	}
	for lang, n := range d.names() {
		if lang != "en" {
			doc.addAnalysed(bdoc.NewTextFieldCustom(LocalizedField(lang), nil, []byte(n), nameOptions, ds.exact))
		}
	}
	for i, c := range d.access() {
		doc.addTerm(FieldAccess, index.IndexField, []uint64{uint64(i)}, strconv.FormatInt(c, 10))
	}
	ds.addAttributes(doc, d.attrs())
	doc.AddIDField()
	return doc
}

// attributeOptions are the indexing options of every attribute field (the
// mapping's): indexed, with doc values (for sort and facets), not stored
// (Generation.FieldValues).
const attributeOptions = index.IndexField | index.DocValues

// addAttributes adds the attribute fields. Keywords are single terms made
// here; numbers go through bleve's field type, which encodes their terms
// (prefix-coded shifts, for ranges); instants keep bleve's stored value
// with fewer terms (DateShifts).
func (ds *documents) addAttributes(doc *bleveDoc, attrs []attr) {
	services := 0
	for _, a := range attrs {
		f := &attributeFields[a.field]
		var pos []uint64
		if a.field == attrService { // the one list: bleve numbers its values
			pos = []uint64{uint64(services)}
			services++
		}
		switch {
		case f.Type == Numeric:
			doc.addAnalysed(bdoc.NewNumericFieldWithIndexingOptions(f.Name, pos, a.num, attributeOptions))
		case f.Type == DateTime:
			t := time.Unix(int64(a.num), 0).UTC()
			dt, err := bdoc.NewDateTimeFieldWithIndexingOptions(f.Name, pos, t, time.RFC3339, attributeOptions)
			if err == nil { // only instants beyond bleve's range fail: left out, as the mapping would
				// bleve's stored value, with the terms of DateShifts (datefield.go).
				doc.fields = append(doc.fields, bleveField{name: f.Name, options: attributeOptions, arrayPos: pos,
					value: dt.Value(), length: len(DateShifts), freqs: dateFreqs(t.UnixNano()), typ: dt.EncodedFieldType()})
			}
		case a.field == attrTicker:
			doc.addAnalysed(bdoc.NewTextFieldCustom(f.Name, pos, []byte(a.str), attributeOptions, ds.exact))
		case a.str != "":
			doc.addTerm(f.Name, attributeOptions, pos, a.str)
		default:
			doc.addTerm(f.Name, attributeOptions, pos, strconv.FormatInt(int64(a.num), 10))
		}
	}
}

// foldASCII folds a non-empty name made only of ASCII letters, digits,
// spaces and hyphens, the names whose words asciiWords finds; ok is false
// for any other.
func foldASCII(name string) (folded string, ok bool) {
	if name == "" {
		return "", false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isASCIIAlnum(c) && c != ' ' && c != '-' {
			return "", false
		}
	}
	return nametable.Fold(name), true
}

func isASCIIAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// asciiWords splits a folded name of letters, digits, spaces and hyphens
// into its words, as the words analyzer does (Unicode word boundaries:
// runs of letters and digits, split at spaces and hyphens), returning each
// word's frequency and places (term vectors: phrases need them) and the
// number of words.
func asciiWords(folded string) (index.TokenFrequencies, int) {
	freqs := make(index.TokenFrequencies, 4)
	n := 0
	eachASCIIWord(folded, func(i, j int) bool {
		w := folded[i:j]
		n++
		tf, ok := freqs[w]
		if ok {
			tf.SetFrequency(tf.Frequency() + 1)
		} else {
			tf = newFreq(w)
			freqs[w] = tf
		}
		tf.Locations = append(tf.Locations, &index.TokenLocation{Start: i, End: j, Position: n})
		return true
	})
	return freqs, n
}

// eachASCIIWord calls fn with the bounds of each run of ASCII letters and
// digits in s, in order, until fn returns false.
func eachASCIIWord[T string | []byte](s T, fn func(i, j int) bool) {
	for i := 0; i < len(s); {
		if !isASCIIAlnum(s[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && isASCIIAlnum(s[j]) {
			j++
		}
		if !fn(i, j) {
			return
		}
		i = j
	}
}

var (
	analyzersOnce sync.Once
	analyzers     *documents
	analyzersErr  error
)

// nameAnalyzers are the mapping's analyzers of the name fields.
func nameAnalyzers() (*documents, error) {
	analyzersOnce.Do(func() {
		m, err := Mapping()
		if err != nil {
			analyzersErr = err
			return
		}
		analyzers, analyzersErr = newDocuments(m)
	})
	return analyzers, analyzersErr
}

// EachWord calls fn with each word of name as the words field indexes
// them (folded, in order), until fn returns false. A name of ASCII
// letters, digits, spaces and hyphens is split here without allocating;
// any other goes through the words analyzer.
func EachWord(name []byte, fn func(word []byte) bool) error {
	simple := len(name) > 0
	for _, c := range name {
		if !isASCIIAlnum(c) && c != ' ' && c != '-' {
			simple = false
			break
		}
	}
	if simple {
		eachASCIIWord(name, func(i, j int) bool {
			w := name[i:j]
			for _, c := range w {
				if 'A' <= c && c <= 'Z' {
					w = []byte(nametable.Fold(string(w)))
					break
				}
			}
			return fn(w)
		})
		return nil
	}
	ds, err := nameAnalyzers()
	if err != nil {
		return err
	}
	for _, tok := range ds.words.Analyze(name) {
		if !fn(tok.Term) {
			return nil
		}
	}
	return nil
}

// AnalyzeName returns the terms the analyzer of a text field (name,
// words, name_XX) makes of text: what a match query looks up.
func AnalyzeName(field string, text string) ([]string, error) {
	if field == FieldWords {
		var out []string
		err := EachWord([]byte(text), func(w []byte) bool { out = append(out, string(w)); return true })
		return out, err
	}
	ds, err := nameAnalyzers()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, tok := range ds.exact.Analyze([]byte(text)) {
		out = append(out, string(tok.Term))
	}
	return out, nil
}
