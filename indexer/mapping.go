package indexer

import (
	"strconv"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/single"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/registry"

	"gds/snapshots"
)

// This file is the one place that says how names are analysed and which
// fields an analyst can query. Every category's bleve index uses it.
//
// Fields of a document (its _id is the record ID in decimal):
//
//	name       the name, folded, as one token: name:jita finds "Jita" exactly;
//	           wildcards and regexps run over it (name:*forge*).
//	words      the name split into folded words: words:navy.
//	name_XX    the localized name in language XX (de, es, fr, ja, ko, ru, zh)
//	           as one folded token, where the record has one.
//	id         the ID as a number: id:>=30000000.
//	access     (structures) IDs of characters that may access it: access:90000001.
//	display    the name as written, stored for output only.
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
	FieldName    = "name"
	FieldWords   = "words"
	FieldID      = "id"
	FieldAccess  = "access"
	FieldDisplay = "display"
)

// LocalizedField is the field holding the name in lang.
func LocalizedField(lang string) string { return "name_" + lang }

type foldFilter struct{}

func (foldFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	for _, tok := range in {
		tok.Term = []byte(Fold(string(tok.Term)))
	}
	return in
}

func init() {
	registry.RegisterTokenFilter(FoldFilter, func(map[string]interface{}, *registry.Cache) (analysis.TokenFilter, error) {
		return foldFilter{}, nil
	})
}

// Mapping returns the index mapping of a category's bleve index.
func Mapping() (*mapping.IndexMappingImpl, error) {
	m := mapping.NewIndexMapping()
	if err := m.AddCustomAnalyzer(ExactAnalyzer, map[string]interface{}{
		"type":          custom.Name,
		"tokenizer":     single.Name,
		"token_filters": []string{FoldFilter},
	}); err != nil {
		return nil, err
	}
	if err := m.AddCustomAnalyzer(WordsAnalyzer, map[string]interface{}{
		"type":          custom.Name,
		"tokenizer":     unicode.Name,
		"token_filters": []string{FoldFilter},
	}); err != nil {
		return nil, err
	}
	exact := func(store bool) *mapping.FieldMapping {
		f := mapping.NewTextFieldMapping()
		f.Analyzer = ExactAnalyzer
		f.Store = store
		f.IncludeInAll = false
		f.IncludeTermVectors = false
		f.DocValues = false
		return f
	}
	doc := mapping.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt(FieldName, exact(false))
	words := mapping.NewTextFieldMapping()
	words.Analyzer = WordsAnalyzer
	words.Store = false
	words.IncludeTermVectors = false
	words.DocValues = false
	doc.AddFieldMappingsAt(FieldWords, words)
	for _, lang := range snapshots.Languages {
		if lang != "en" {
			doc.AddFieldMappingsAt(LocalizedField(lang), exact(false))
		}
	}
	id := mapping.NewNumericFieldMapping()
	id.Store = false
	id.DocValues = false
	doc.AddFieldMappingsAt(FieldID, id)
	access := mapping.NewKeywordFieldMapping()
	access.Store = false
	access.DocValues = false
	access.IncludeTermVectors = false
	doc.AddFieldMappingsAt(FieldAccess, access)
	display := mapping.NewTextFieldMapping()
	display.Index = false
	display.Store = true
	display.DocValues = false
	display.IncludeTermVectors = false
	display.IncludeInAll = false
	doc.AddFieldMappingsAt(FieldDisplay, display)
	m.DefaultMapping = doc
	m.DefaultAnalyzer = WordsAnalyzer
	m.DefaultField = FieldWords
	m.StoreDynamic = false
	m.IndexDynamic = false
	m.DocValuesDynamic = false
	return m, nil
}

// document is what is indexed for one named record.
type document map[string]interface{}

func newDocument(id int64, name string, names snapshots.Localized, access []int64) document {
	d := document{FieldName: name, FieldWords: name, FieldID: float64(id), FieldDisplay: name}
	for lang, n := range names {
		if lang != "en" {
			d[LocalizedField(lang)] = n
		}
	}
	if len(access) > 0 {
		ids := make([]string, len(access))
		for i, c := range access {
			ids[i] = strconv.FormatInt(c, 10)
		}
		d[FieldAccess] = ids
	}
	return d
}
