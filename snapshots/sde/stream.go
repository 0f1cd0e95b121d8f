package sde

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// chunk is one top-level entry of a YAML file: the lines from one
// top-level key (or list item) to the next.
type chunk struct {
	// ID is the entry's integer key (map files) or 0 (list files).
	ID int64
	// Line is the 1-based line of the entry's first line in the file.
	Line int
	// Text holds the entry's lines, its first line included.
	Text []byte
}

// chunkReader splits a big YAML file into its top-level entries without
// parsing it, so each entry can be decoded alone and memory stays at one
// entry, not one file. The SDE writes every top-level key at column 0 and
// indents everything below it, except continuation lines of multi-line
// quoted strings, which may start at column 0 but never look like a key.
type chunkReader struct {
	name   string
	br     *bufio.Reader
	isList bool
	line   int
	next   []byte // the first line of the next entry, already read
	nextAt int
	done   bool
}

func newChunkReader(name string, r io.Reader, isList bool) *chunkReader {
	return &chunkReader{name: name, br: bufio.NewReaderSize(r, 1<<16), isList: isList}
}

var mapKey = regexp.MustCompile(`^(-?\d+):\s*(#.*)?$`)

// startsEntry reports whether line opens a new top-level entry.
func (c *chunkReader) startsEntry(line []byte) bool {
	if c.isList {
		return bytes.HasPrefix(line, []byte("- ")) || bytes.Equal(bytes.TrimRight(line, "\r\n"), []byte("-"))
	}
	return len(line) > 0 && line[0] >= '0' && line[0] <= '9' && mapKey.Match(bytes.TrimRight(line, "\r\n"))
}

func (c *chunkReader) readLine() ([]byte, error) {
	line, err := c.br.ReadBytes('\n')
	if len(line) > 0 {
		c.line++
		return line, nil
	}
	return nil, err
}

// Next returns the next entry, or io.EOF after the last.
func (c *chunkReader) Next() (chunk, error) {
	if c.done {
		return chunk{}, io.EOF
	}
	if c.next == nil {
		if err := c.skipToFirst(); err != nil {
			return chunk{}, err
		}
	}
	ch := chunk{Line: c.nextAt, Text: c.next}
	c.next = nil
	for {
		line, err := c.readLine()
		if err == io.EOF {
			c.done = true
			break
		}
		if err != nil {
			return chunk{}, fmt.Errorf("%s line %d: %w", c.name, c.line+1, err)
		}
		if c.startsEntry(line) {
			c.next, c.nextAt = line, c.line
			break
		}
		ch.Text = append(ch.Text, line...)
	}
	if !c.isList {
		m := mapKey.FindSubmatch(bytes.TrimRight(firstLine(ch.Text), "\r\n"))
		id, err := strconv.ParseInt(string(m[1]), 10, 64)
		if err != nil {
			return chunk{}, fmt.Errorf("%s line %d: key %q is not an integer id", c.name, ch.Line, m[1])
		}
		ch.ID = id
	}
	return ch, nil
}

// skipToFirst reads up to the first entry; only blank lines, comments and
// a document marker may come before it.
func (c *chunkReader) skipToFirst() error {
	for {
		line, err := c.readLine()
		if err == io.EOF {
			c.done = true
			return io.EOF
		}
		if err != nil {
			return fmt.Errorf("%s line %d: %w", c.name, c.line+1, err)
		}
		if c.startsEntry(line) {
			c.next, c.nextAt = line, c.line
			return nil
		}
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' || string(t) == "---" || (c.isList && string(t) == "[]") || (!c.isList && string(t) == "{}") {
			continue
		}
		what := "an integer key at column 0 (e.g. \"34:\")"
		if c.isList {
			what = "a list item (\"- \")"
		}
		return fmt.Errorf("%s line %d: want %s, got %q", c.name, c.line, what, truncate(string(t), 60))
	}
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// decodeEntry decodes the value of a map entry (key line included in
// ch.Text) into v.
func decodeEntry(name string, ch chunk, v any) error {
	return decodeOne(name, ch, v, yaml.MappingNode, 2, "entry is not a single key: value")
}

// decodeItem decodes one list item (its "- " line included) into v.
func decodeItem(name string, ch chunk, v any) error {
	return decodeOne(name, ch, v, yaml.SequenceNode, 1, "entry is not a single list item")
}

// decodeOne decodes ch, a document of one node of kind with n children
// (a key and its value, or one item), and decodes the last child into v;
// shape says what a chunk of any other shape is not.
func decodeOne(name string, ch chunk, v any, kind yaml.Kind, n int, shape string) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(ch.Text, &doc); err != nil {
		return yamlError(name, ch.Line, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != kind || len(doc.Content[0].Content) != n {
		return fmt.Errorf("%s line %d: %s", name, ch.Line, shape)
	}
	if err := doc.Content[0].Content[n-1].Decode(v); err != nil {
		return yamlError(name, ch.Line, err)
	}
	return nil
}

var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)

// yamlError rewrites yaml.v3's chunk-relative "line N" into the file's line
// and names the file, as "fsd/types.yaml line 107: cannot unmarshal ...".
func yamlError(name string, start int, err error) error {
	var msgs []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	line := start
	for i, m := range msgs {
		if sub := yamlLine.FindStringSubmatch(m); sub != nil {
			n, _ := strconv.Atoi(sub[1])
			if i == 0 {
				line = start + n - 1
			}
			m = m[len(sub[0]):]
			if i > 0 {
				m = fmt.Sprintf("line %d: %s", start+n-1, m)
			}
		}
		msgs[i] = strings.TrimPrefix(m, "yaml: ")
	}
	return fmt.Errorf("%s line %d: %s", name, line, joinMax(msgs, 3))
}

func joinMax(msgs []string, n int) string {
	var b bytes.Buffer
	for i, m := range msgs {
		if i == n {
			fmt.Fprintf(&b, "; and %d more", len(msgs)-n)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(m)
	}
	return b.String()
}

// eachEntry streams the entries of a map file (integer keys at column 0)
// and calls fn with each, in file order.
func eachEntry(path, name string, fn func(ch chunk) error) error {
	return eachChunk(path, name, false, fn)
}

// eachItem streams the items of a list file.
func eachItem(path, name string, fn func(ch chunk) error) error {
	return eachChunk(path, name, true, fn)
}

func eachChunk(path, name string, isList bool, fn func(ch chunk) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	cr := newChunkReader(name, f, isList)
	for {
		ch, err := cr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(ch); err != nil {
			return err
		}
	}
}
