package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"gds/snapshots"
)

// The bulk resolution routes, POST /universe/ids/ and /universe/names/,
// and the parsers of JSON array bodies they share with the document routes.

// Bulk limits, as ESI has them.
const (
	maxBulkNames = 500
	maxBulkIDs   = 1000
	// maxBodyBytes bounds a request body: 1000 IDs or 500 names fit easily.
	maxBodyBytes = 1 << 20
	// maxNameLength is the longest name /universe/ids/ resolves, in
	// characters.
	maxNameLength = 100
)

// idsKeys are the keys of POST /universe/ids/, as ESI spells them.
var idsKeys = map[snapshots.Category]string{
	snapshots.CategoryAgent: "agents", snapshots.CategoryAlliance: "alliances",
	snapshots.CategoryCharacter: "characters", snapshots.CategoryConstellation: "constellations",
	snapshots.CategoryCorporation: "corporations", snapshots.CategoryFaction: "factions",
	snapshots.CategoryInventoryType: "inventory_types", snapshots.CategoryRegion: "regions",
	snapshots.CategoryStation: "stations", snapshots.CategorySolarSystem: "systems",
}

type idName struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// universeIDs resolves names to IDs: exact, ignoring case, only keys with
// matches.
func (s *server) universeIDs(c *gin.Context) {
	lang, ok := parseLocalized(c)
	if !ok {
		return
	}
	names, err := parseNameList(c.Request.Body, maxBulkNames, maxNameLength)
	if err != nil {
		writeBodyError(c, err)
		return
	}
	s.read(c, func(r Reader) {
		out := map[string][]idName{}
		for cat, list := range r.IDs(names, lang) {
			key, ok := idsKeys[cat]
			if !ok {
				continue
			}
			seen := make(map[int64]bool, len(list))
			for _, n := range list {
				// Names differing only in case find the same record once.
				if !seen[n.ID] {
					seen[n.ID] = true
					out[key] = append(out[key], idName{ID: n.ID, Name: n.Name})
				}
			}
		}
		c.JSON(http.StatusOK, out)
	})
}

// universeNames resolves IDs to names and categories; one unknown ID fails
// the whole call, as in ESI.
func (s *server) universeNames(c *gin.Context) {
	ids, err := parseIDList(c.Request.Body, maxBulkIDs, true, math.MaxInt32)
	if err != nil {
		writeBodyError(c, err)
		return
	}
	lang, ok := parseLocalized(c)
	if !ok {
		return
	}
	s.read(c, func(r Reader) {
		found, missing := r.Names(ids, lang)
		if len(missing) > 0 {
			writeError(c, http.StatusNotFound, "Ensure all IDs are valid before resolving")
			return
		}
		c.JSON(http.StatusOK, found)
	})
}

// decodeBodyArray reads a JSON array body of at most max elements, each
// left raw so its parser can name the index of a bad one.
func decodeBodyArray(body io.Reader, max int) ([]json.RawMessage, error) {
	if body == nil {
		return nil, errors.New("request body: missing, expected a JSON array")
	}
	data, err := io.ReadAll(io.LimitReader(body, maxBodyBytes+1))
	if err != nil {
		return nil, readBodyError(err)
	}
	if len(data) > maxBodyBytes {
		return nil, &bodyError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("request body is larger than %d bytes", maxBodyBytes)}
	}
	if strings.TrimSpace(string(data)) == "" {
		return nil, errors.New("request body: missing, expected a JSON array")
	}
	items, ok := splitIntArray(data)
	if !ok {
		err = json.Unmarshal(data, &items)
	}
	if err != nil {
		return nil, fmt.Errorf("request body: not a JSON array: %v", err)
	}
	if len(items) < 1 || len(items) > max {
		return nil, fmt.Errorf("request body: must hold 1 to %d entries, got %d", max, len(items))
	}
	return items, nil
}

// decodeBodyList reads a JSON array body of 1..max elements
// (decodeBodyArray), parsing element i into its slot of the list with
// parse; given dup, an element equal to an earlier one j is refused with
// dup's error. It stops at the first element refused.
func decodeBodyList[T comparable](body io.Reader, max int, parse func(i int, raw json.RawMessage, v *T) error,
	dup func(i int, raw json.RawMessage, v T, j int) error) ([]T, error) {
	items, err := decodeBodyArray(body, max)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(items))
	var seen map[T]int
	if dup != nil {
		seen = make(map[T]int, len(items))
	}
	for i, raw := range items {
		if err := parse(i, raw, &out[i]); err != nil {
			return nil, err
		}
		if dup == nil {
			continue
		}
		if j, ok := seen[out[i]]; ok {
			return nil, dup(i, raw, out[i], j)
		}
		seen[out[i]] = i
	}
	return out, nil
}

// splitIntArray splits a JSON array of integers (an ID list, the body of
// nearly every POST /universe/names/) into its elements as encoding/json
// would leave them raw, without encoding/json; false for any other body,
// which encoding/json then reads and judges. FuzzSplitIntArray checks it
// against encoding/json.
func splitIntArray(data []byte) ([]json.RawMessage, bool) {
	i := 0
	space := func() {
		for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
			i++
		}
	}
	space()
	if i == len(data) || data[i] != '[' {
		return nil, false
	}
	i++
	space()
	items := []json.RawMessage{}
	if i < len(data) && data[i] == ']' {
		i++
		space()
		return items, i == len(data)
	}
	for {
		start := i
		if i < len(data) && data[i] == '-' {
			i++
		}
		switch {
		case i < len(data) && data[i] == '0':
			i++
		case i < len(data) && '1' <= data[i] && data[i] <= '9':
			for i < len(data) && '0' <= data[i] && data[i] <= '9' {
				i++
			}
		default:
			return nil, false
		}
		items = append(items, data[start:i:i])
		space()
		if i == len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i++
			space()
		case ']':
			i++
			space()
			return items, i == len(data)
		default:
			return nil, false
		}
	}
}

// parseIDList reads a JSON array of 1..max positive IDs up to maxID;
// unique refuses duplicates. ESI's ID lists of int32 refuse a larger ID
// with 400 before looking anything up, in its validator's words.
func parseIDList(body io.Reader, max int, unique bool, maxID int64) ([]int64, error) {
	var dup func(i int, raw json.RawMessage, id int64, j int) error
	if unique {
		dup = func(i int, raw json.RawMessage, id int64, _ int) error {
			return bodyItemError(i, raw, "duplicate ID %d, IDs must be unique", id)
		}
	}
	return decodeBodyList(body, max, func(i int, raw json.RawMessage, id *int64) error {
		var err error
		*id, err = strconv.ParseInt(string(raw), 10, 64)
		if err != nil || *id <= 0 {
			return bodyItemError(i, raw, "must be a positive integer ID, got %s", raw)
		}
		if *id > maxID {
			return bodyItemError(i, raw, "failed to coerce value '%d' into type integer (format: int32)", *id)
		}
		return nil
	}, dup)
}

// parseNameList reads a JSON array of 1..max distinct non-empty strings
// of at most maxLen characters each, as ESI's schema of /universe/ids/
// requires (uniqueItems: the very same string twice; names differing in
// case are distinct items).
func parseNameList(body io.Reader, max, maxLen int) ([]string, error) {
	return decodeBodyList(body, max, func(i int, raw json.RawMessage, name *string) error {
		if err := json.Unmarshal(raw, name); err != nil {
			return bodyItemError(i, raw, "must be a string, got %s", raw)
		}
		if strings.TrimSpace(*name) == "" {
			return bodyItemError(i, raw, "must not be empty")
		}
		// encoding/json turns invalid UTF-8 and lone surrogate escapes
		// into U+FFFD silently; no name holds that rune, so a name with
		// one was garbled on the way and is refused, as the search text is.
		if !utf8.Valid(raw) || strings.ContainsRune(*name, utf8.RuneError) {
			return bodyItemError(i, raw, "must be valid UTF-8 text")
		}
		if n := utf8.RuneCountInString(*name); n > maxLen {
			return bodyItemError(i, raw, "string too long for 'name': %d characters, at most %d", n, maxLen)
		}
		return nil
	}, func(i int, raw json.RawMessage, name string, j int) error {
		return bodyItemError(i, raw, "non-unique items for 'names': %q is also body[%d]", name, j)
	})
}
