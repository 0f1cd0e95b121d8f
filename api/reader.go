package api

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/gin-gonic/gin"

	"gds/query"
	"gds/snapshots"
)

// Reader is what a handler reads from one generation, pinned for one
// request: the API's read seam, as Zoekt's Searcher is spoken by its
// shards, gRPC and web alike. query.View implements it over a live
// generation; handler tests implement it over fixed records.
type Reader interface {
	// Search answers a name search (query.ErrTextTooShort, context errors).
	Search(ctx context.Context, req query.Request) (query.Result, error)
	// Record returns the record of kind with key id, or query.ErrNotFound.
	Record(kind snapshots.Kind, id int64) (snapshots.Record, error)
	// Names resolves IDs to names and categories, and says which it could not.
	Names(ids []int64, lang string) (found []query.Named, missing []int64)
	// IDs resolves names, exactly but for case, to the records holding them.
	IDs(names []string, lang string) map[snapshots.Category][]query.Named
	// Info identifies the generation, for cache validators.
	Info() query.GenerationInfo
	// Close releases the generation; the Reader is not used after.
	Close()

	// The grouped reads of a few routes.

	// Each calls fn with every record of a small kind, by ascending key.
	Each(kind snapshots.Kind, fn func(snapshots.Record) error) error
	// StructuresOf returns a corporation's structures, by ascending ID.
	StructuresOf(corporation int64) ([]*snapshots.Structure, error)
	// Document returns the document stored for a concrete path, or
	// query.ErrNotFound.
	Document(path string) (json.RawMessage, error)
}

var _ Reader = (*query.View)(nil)

// pin pins a generation for one request: Deps.Open's, else Views'.
func (s *server) pin() (Reader, error) {
	if s.d.Open != nil {
		return s.d.Open()
	}
	if s.d.Views == nil {
		return nil, query.ErrNotReady
	}
	v, err := s.d.Views.View()
	if err != nil {
		return nil, err
	}
	return v, nil
}

// openReader pins a generation for the rest of the request; false means
// an answer was written: 503 while no generation is live, 500 otherwise.
// The caller closes the Reader.
func (s *server) openReader(c *gin.Context) (Reader, bool) {
	r, err := s.pin()
	switch {
	case errors.Is(err, query.ErrNotReady):
		writeNotReady(c)
		return nil, false
	case err != nil:
		s.internalError(c, err)
		return nil, false
	}
	return r, true
}

// read is the end of every handler that reads the generation, once its
// parameters are parsed: it pins a generation, hands it to fn and
// releases it when fn returns. When none can be pinned it answers (see
// openReader) and fn does not run.
func (s *server) read(c *gin.Context, fn func(r Reader)) {
	r, ok := s.openReader(c)
	if !ok {
		return
	}
	defer r.Close()
	fn(r)
}
