package indexer

import (
	"fmt"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/single"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/registry"

	"gds/indexer/nametable"
	"gds/snapshots"
)

// This file is the one place that says how names are analysed and which
// fields an analyst can query. Every category's bleve index uses it.
//
// Fields of a document (its _id is the record ID in decimal):
//
//	name       the name, folded, as one token: name:jita finds "Jita" exactly;
//	           wildcards and regexps run over it (name:*forge*).
//	words      the name split into folded words (the default field): words:navy.
//	name_XX    the localized name in language XX (de, es, fr, ja, ko, ru, zh)
//	           as one folded token, where the record has one.
//	id         the ID in decimal, one token: id:30000142 (exact match,
//	           prefix or wildcard). Not a field of its own: Query renames it
//	           to bleve's _id, which every document has anyway (a separate
//	           field cost a sixth of the build; a numeric one a dozen terms
//	           per document).
//	access     (structures) IDs of characters that may access it: access:90000001.
//
// and the attributes of fields.go (corporation_id, security, birthday, …),
// typed keyword, numeric or datetime (a datetime's terms at DateShifts
// only, datefield.go). Nothing is stored: names and the attributes
// fields= returns come from the generation's record store
// (Generation.FieldValues), which keeps the index small and the build
// fast; attributes have doc values, for sort and facets.
const (
	// FoldFilter is the token filter applying Fold.
	FoldFilter = "gds_fold"
	// ExactAnalyzer keeps the whole folded name as one token.
	ExactAnalyzer = "gds_exact"
	// WordsAnalyzer splits a name into folded words.
	WordsAnalyzer = "gds_words"
)

// Field names of the bleve documents.
const (
	FieldName   = "name"
	FieldWords  = "words"
	FieldID     = "id"
	FieldAccess = "access"
)

// LocalizedField is the field holding the name in lang.
func LocalizedField(lang string) string { return "name_" + lang }

type foldFilter struct{}

func (foldFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	for _, tok := range in {
		tok.Term = foldBytes(tok.Term)
	}
	return in
}

// foldBytes folds a token, in place when it is ASCII (the common case, and
// the same result as Fold).
func foldBytes(b []byte) []byte {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return []byte(nametable.Fold(string(b)))
		}
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return b
}

func init() {
	registry.RegisterTokenFilter(FoldFilter, func(map[string]interface{}, *registry.Cache) (analysis.TokenFilter, error) {
		return foldFilter{}, nil
	})
}

// Mapping returns the index mapping of a category's bleve index.
func Mapping() (*mapping.IndexMappingImpl, error) {
	m := mapping.NewIndexMapping()
	for _, a := range []struct{ name, tokenizer string }{
		{ExactAnalyzer, single.Name},
		{WordsAnalyzer, unicode.Name},
	} {
		if err := m.AddCustomAnalyzer(a.name, map[string]interface{}{
			"type":          custom.Name,
			"tokenizer":     a.tokenizer,
			"token_filters": []string{FoldFilter},
		}); err != nil {
			return nil, err
		}
	}
	exact := func(store bool) *mapping.FieldMapping {
		f := mapping.NewTextFieldMapping()
		f.Analyzer = ExactAnalyzer
		f.Store = store
		f.IncludeInAll = false
		f.IncludeTermVectors = true // phrases need them
		f.DocValues = false
		return f
	}
	doc := mapping.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt(FieldName, exact(false))
	words := mapping.NewTextFieldMapping()
	words.Analyzer = WordsAnalyzer
	words.Store = false
	words.IncludeTermVectors = true // phrases need them
	words.DocValues = false
	doc.AddFieldMappingsAt(FieldWords, words)
	for _, lang := range snapshots.Languages {
		if lang != "en" {
			doc.AddFieldMappingsAt(LocalizedField(lang), exact(false))
		}
	}
	keywordField := func() *mapping.FieldMapping {
		f := mapping.NewKeywordFieldMapping()
		f.Store = false
		f.DocValues = false
		f.IncludeTermVectors = false
		f.IncludeInAll = false
		return f
	}
	doc.AddFieldMappingsAt(FieldAccess, keywordField())
	for _, f := range attributeFields {
		doc.AddFieldMappingsAt(f.Name, attributeMapping(f))
	}
	m.DefaultMapping = doc
	m.DefaultAnalyzer = WordsAnalyzer
	m.DefaultField = FieldWords
	m.StoreDynamic = false
	m.IndexDynamic = false
	m.DocValuesDynamic = false
	return m, nil
}

// attributeMapping is the mapping of an attribute field: indexed, with
// doc values (for sort and facets), not stored, never in _all.
func attributeMapping(f AnalystField) *mapping.FieldMapping {
	var fm *mapping.FieldMapping
	switch f.Type {
	case Numeric:
		fm = mapping.NewNumericFieldMapping()
	case DateTime:
		fm = mapping.NewDateTimeFieldMapping()
	default:
		fm = mapping.NewKeywordFieldMapping()
		if f.Name == attributeFields[attrTicker].Name {
			fm.Analyzer = ExactAnalyzer // tickers match in any case
		}
	}
	fm.Store = false // FieldValues reads the record
	fm.DocValues = f.Stored
	fm.IncludeTermVectors = false
	fm.IncludeInAll = false
	return fm
}

// documents turns records into bleve documents directly, with the analyzers
// the mapping names for each field (so queries analyse text the same way),
// skipping the mapping's reflection over every document.
type documents struct {
	exact, words analysis.Analyzer
}

func newDocuments(m *mapping.IndexMappingImpl) (*documents, error) {
	d := &documents{
		exact: m.AnalyzerNamed(ExactAnalyzer),
		words: m.AnalyzerNamed(WordsAnalyzer),
	}
	if d.exact == nil || d.words == nil {
		return nil, fmt.Errorf("index mapping lacks an analyzer")
	}
	return d, nil
}

// DocIDField is the field under which bleve indexes every document's _id
// (the record ID in decimal); the analysts' id field is another name for it.
const DocIDField = "_id"
