package disk

import "sync"

// Loaded is a file's content held in memory by Load.
type Loaded struct {
	// Bytes is the file's content, read-only.
	Bytes []byte
	id    FileID
	hasID bool
	close func() error
	once  sync.Once
	err   error
}

// Close lets go of the content: Bytes must not be read afterwards. A
// second Close does nothing.
func (l *Loaded) Close() error {
	l.once.Do(func() { l.err = l.close() })
	return l.err
}

// LoadMapped is Load without the copy: the content is the file mapped
// from the page cache, populated up front (Map).
func LoadMapped(name string) (*Loaded, error) { return loadMapped(name, true) }

// LoadLazily is LoadMapped without populating the mapping: a page is read
// (and counts in the process's resident memory) when something first
// touches it. For a file read rarely and in small parts, such as a typo
// index only suggestions read.
func LoadLazily(name string) (*Loaded, error) { return loadMapped(name, false) }

func loadMapped(name string, populate bool) (*Loaded, error) {
	b, id, ok, err := MapID(name, populate)
	if err != nil {
		return nil, err
	}
	return &Loaded{Bytes: b, id: id, hasID: ok, close: func() error { return Unmap(b) }}, nil
}

// ID is the FileID of the file the content was read from; false where the
// system tells none. It names the content until Close.
func (l *Loaded) ID() (FileID, bool) { return l.id, l.hasID }
