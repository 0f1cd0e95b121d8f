package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"gds/snapshots"
)

// The published documents' response schemas are derived from the Go
// structs the handlers encode (their fields and json tags), once when the
// route table is built: the struct is the one source of truth, so a field
// added to an answer appears in both documents. A field that is not
// omitempty (and not a pointer) is required; objects are closed
// (additionalProperties: false), so the response validation tests catch
// any drift. Constraints JSON tags cannot say go in a schema tag:
//
//	Gender string `json:"gender,omitempty" schema:"enum=female|male"`
//	Hour   int    `json:"hour" schema:"min=0,max=23"`
//	State  string `json:"state" schema:"enum=@structure_state"`
//
// where @name is one of schemaEnums (lists kept in code, not retyped).

// schemaEnums are enum lists a schema tag refers to by name.
var schemaEnums = map[string]func() []string{
	"structure_state": func() []string { return snapshots.StructureStates },
}

var timeType = reflect.TypeOf(time.Time{})
var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// schemaOf is the JSON schema of v's type.
func schemaOf(v any) map[string]any { return schemaOfType(reflect.TypeOf(v)) }

func schemaOfType(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return schemaDateTime()
	case t == rawMessageType:
		return anyJSON()
	}
	switch t.Kind() {
	case reflect.Struct:
		return structSchema(t)
	case reflect.Slice, reflect.Array:
		return arrayOf(schemaOfType(t.Elem()))
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOfType(t.Elem())}
	case reflect.String:
		return schemaString()
	case reflect.Bool:
		return schemaBool()
	case reflect.Int64, reflect.Uint64, reflect.Uint32:
		return schemaInt64()
	case reflect.Int, reflect.Int32, reflect.Int16, reflect.Int8, reflect.Uint16, reflect.Uint8:
		return schemaInt32()
	case reflect.Float32:
		return schemaFloat()
	case reflect.Float64:
		return schemaNumber()
	}
	return anyJSON() // interfaces: any JSON
}

// structSchema is a closed object of t's JSON fields; embedded structs
// contribute their fields as encoding/json does.
func structSchema(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" || (!f.IsExported() && !f.Anonymous) {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				ft := f.Type
				for ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft)
					continue
				}
			}
			if name == "" {
				name = f.Name
			}
			s := schemaOfType(f.Type)
			applySchemaTag(s, f.Tag.Get("schema"), t.Name()+"."+f.Name)
			props[name] = s
			if !slices.Contains(strings.Split(opts, ","), "omitempty") && f.Type.Kind() != reflect.Pointer {
				required = append(required, name)
			}
		}
	}
	walk(t)
	slices.Sort(required)
	return object(required, props)
}

// applySchemaTag adds a schema tag's constraints to s; on an array they
// apply to its items, except minItems and maxItems. A bad tag is a bug in
// the table and panics at start-up, where tests see it.
func applySchemaTag(s map[string]any, tag, field string) {
	if tag == "" {
		return
	}
	for _, kv := range strings.Split(tag, ",") {
		k, v, _ := strings.Cut(kv, "=")
		target := s
		if items, ok := s["items"].(map[string]any); ok && k != "minItems" && k != "maxItems" {
			target = items
		}
		switch k {
		case "enum":
			values := strings.Split(v, "|")
			if name, ok := strings.CutPrefix(v, "@"); ok {
				list, known := schemaEnums[name]
				if !known {
					panic(fmt.Sprintf("schema tag of %s: no enum %q", field, name))
				}
				values = list()
			}
			target["enum"] = values
		case "min", "max", "minItems", "maxItems":
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				panic(fmt.Sprintf("schema tag of %s: %s=%q is not a number", field, k, v))
			}
			key := map[string]string{"min": "minimum", "max": "maximum", "minItems": "minItems", "maxItems": "maxItems"}[k]
			target[key] = n
		case "format":
			target["format"] = v
		default:
			panic(fmt.Sprintf("schema tag of %s: unknown constraint %q", field, k))
		}
	}
}
