package api

import (
	"slices"
	"testing"
	"time"
)

// TestSchemaOfStruct: required comes from omitempty and pointers, names
// from json tags, constraints from schema tags, embedded fields flatten,
// and the objects are closed.
func TestSchemaOfStruct(t *testing.T) {
	type inner struct {
		X float64 `json:"x"`
	}
	type embedded struct {
		Base int64 `json:"base"`
	}
	type sample struct {
		embedded
		ID     int64      `json:"id"`
		Hour   int        `json:"hour" schema:"min=0,max=23"`
		Kind   string     `json:"kind,omitempty" schema:"enum=a|b"`
		When   *time.Time `json:"when"`
		Where  *inner     `json:"where,omitempty"`
		Tags   []string   `json:"tags" schema:"maxItems=3"`
		Hidden string     `json:"-"`
		State  string     `json:"state" schema:"enum=@structure_state"`
	}
	s := schemaOf(sample{})
	props := s["properties"].(map[string]any)
	if got := s["required"].([]string); !slices.Equal(got, []string{"base", "hour", "id", "state", "tags"}) {
		t.Errorf("required %v", got)
	}
	if s["additionalProperties"] != false || props["Hidden"] != nil || props["-"] != nil || len(props) != 8 {
		t.Errorf("properties %v: want 8, closed, without the hidden field", props)
	}
	hour := props["hour"].(map[string]any)
	if hour["type"] != "integer" || hour["minimum"] != 0.0 || hour["maximum"] != 23.0 {
		t.Errorf("hour %v", hour)
	}
	if kind := props["kind"].(map[string]any); !slices.Equal(kind["enum"].([]string), []string{"a", "b"}) {
		t.Errorf("kind %v", kind)
	}
	if when := props["when"].(map[string]any); when["format"] != "date-time" {
		t.Errorf("when %v", when)
	}
	if tags := props["tags"].(map[string]any); tags["maxItems"] != 3.0 || tags["items"].(map[string]any)["type"] != "string" {
		t.Errorf("tags %v", tags)
	}
	if where := props["where"].(map[string]any); where["properties"].(map[string]any)["x"] == nil {
		t.Errorf("where %v", where)
	}
	if state := props["state"].(map[string]any); len(state["enum"].([]string)) == 0 {
		t.Errorf("state %v: want the structure states", state)
	}
	defer func() {
		if recover() == nil {
			t.Errorf("an unknown constraint did not panic")
		}
	}()
	type bad struct {
		X int `json:"x" schema:"pattern=x"`
	}
	schemaOf(bad{})
}
