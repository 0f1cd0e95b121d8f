package api

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/gin-gonic/gin"

	"gds/api/esierr"
	"gds/query"
	"gds/snapshots"
)

// POST /characters/affiliation/: whom characters belong to, as ESI answers
// it (docs/api.md, Lookups and bulk resolution).

// affiliationRoute is the route table's entry.
func (s *server) affiliationRoute() Route {
	return Route{
		Method: http.MethodPost, Path: "/characters/affiliation/", Summary: "Character affiliation",
		Tags: []string{"Character"}, RateLimit: RateGroupStaticData,
		Doc: Doc{Params: []Param{datasourceParamDoc, {
			Name: "characters", In: "body", Required: true,
			Description: fmt.Sprintf("The character IDs to fetch affiliations for (1 to %d, unique). All characters must exist, or none will be returned", maxBulkIDs),
			Schema:      uniqueItems(schemaArray(schemaInt64(), 1, maxBulkIDs)),
		}}, Response: schemaArray(schemaOf(query.Affiliation{}), 0, maxBulkIDs)},
		Versions: []Version{{N: 1, Handler: s.affiliation, Lifecycle: s.lifecycles().Current}},
	}
}

// affiliationBufs are a request's answer and lookups, reused: a thousand
// characters are 32 KB of answers and 80 KB of JSON.
type affiliationBufs struct {
	out  []query.Affiliation
	body []byte
}

var affiliationPool = sync.Pool{New: func() any { return new(affiliationBufs) }}

// affiliation answers the affiliations of every character of the body, or
// 404 when one is no character, as ESI refuses the whole batch.
func (s *server) affiliation(c *gin.Context) {
	if !parseDatasource(c) {
		return
	}
	ids, err := parseIDList(c.Request.Body, maxBulkIDs, true, maxGameID)
	if err != nil {
		writeBodyError(c, err)
		return
	}
	s.read(c, func(r Reader) { s.answerAffiliations(c, r, ids) })
}

// affiliationReader is the Reader that looks affiliations up itself
// (query.View, from its record stores without decoding); any other
// Reader answers through its records.
type affiliationReader interface {
	Affiliations(ids []int64, out []query.Affiliation) ([]query.Affiliation, int, error)
}

func (s *server) answerAffiliations(c *gin.Context, r Reader, ids []int64) {
	// The answer depends on the generation and the IDs in their order:
	// known before any lookup, so a current copy costs none.
	info := r.Info()
	etag := idsETag(info.ID, VersionLabel(c), ids)
	setCacheHeaders(c, false, s.now(), info.Created, etag)
	if notModified(c.Request, etag) {
		c.AbortWithStatus(http.StatusNotModified)
		return
	}
	bufs := affiliationPool.Get().(*affiliationBufs)
	defer affiliationPool.Put(bufs)
	var missing int
	var err error
	if ar, ok := r.(affiliationReader); ok {
		bufs.out, missing, err = ar.Affiliations(ids, bufs.out[:0])
	} else {
		bufs.out, missing, err = affiliationsOf(r, ids, bufs.out[:0])
	}
	switch {
	case err != nil:
		s.internalError(c, err)
		return
	case missing >= 0:
		msg := fmt.Sprintf("request body[%d]: character %d not found; all characters must exist, or none are returned", missing, ids[missing])
		writeErrorDetails(c, http.StatusNotFound, msg, esierr.Detail{
			Location: fmt.Sprintf("body[%d]", missing), Message: "character not found", Value: ids[missing]})
		return
	}
	bufs.body = appendAffiliations(bufs.body[:0], bufs.out)
	sendJSON(c, bufs.body)
}

// affiliationsOf looks affiliations up through r's records, as
// query.View.Affiliations does from its stores.
func affiliationsOf(r Reader, ids []int64, out []query.Affiliation) ([]query.Affiliation, int, error) {
	for i, id := range ids {
		a := query.Affiliation{CharacterID: id}
		rec, err := r.Record(snapshots.Characters, id)
		if errors.Is(err, query.ErrNotFound) {
			rec, err = r.Record(snapshots.Agents, id)
		}
		switch {
		case errors.Is(err, query.ErrNotFound):
			return out, i, nil
		case err != nil:
			return out, -1, err
		}
		switch ch := rec.(type) {
		case *snapshots.Character:
			a.CorporationID, a.AllianceID = ch.CorporationID, ch.AllianceID
		case *snapshots.Agent:
			a.CorporationID = ch.CorporationID
		}
		if a.CorporationID <= 0 {
			return out, i, nil
		}
		corp, err := r.Record(snapshots.Corporations, a.CorporationID)
		if err == nil {
			a.FactionID = corp.(*snapshots.Corporation).FactionID
		} else if !errors.Is(err, query.ErrNotFound) {
			return out, -1, err
		}
		out = append(out, a)
	}
	return out, -1, nil
}

// appendAffiliations encodes list as ESI's answer: alliance_id and
// faction_id only when the character has one.
func appendAffiliations(b []byte, list []query.Affiliation) []byte {
	b = append(b, '[')
	for i, a := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"character_id":`...)
		b = strconv.AppendInt(b, a.CharacterID, 10)
		b = append(b, `,"corporation_id":`...)
		b = strconv.AppendInt(b, a.CorporationID, 10)
		if a.AllianceID != 0 {
			b = append(b, `,"alliance_id":`...)
			b = strconv.AppendInt(b, a.AllianceID, 10)
		}
		if a.FactionID != 0 {
			b = append(b, `,"faction_id":`...)
			b = strconv.AppendInt(b, a.FactionID, 10)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// idsETag is the strong validator of an answer to a list of IDs under a
// route version in generation gen.
func idsETag(gen uint64, version string, ids []int64) string {
	h := sha256.New()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], gen)
	h.Write(b[:])
	h.Write([]byte(version))
	for _, id := range ids {
		binary.BigEndian.PutUint64(b[:], uint64(id))
		h.Write(b[:])
	}
	var sum [sha256.Size]byte
	return `"` + hex.EncodeToString(h.Sum(sum[:0])[:16]) + `"`
}
