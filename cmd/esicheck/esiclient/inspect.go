package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"gds/cmd/esicheck/esiclient/esi"
)

// inspect reads a generated response (*esi.XxxResponse: HTTPResponse,
// Body, JSON<status>, JSONDefault) and reports its status and what is
// wrong with it: a status other than want, an answer the generated
// client did not decode, a property the generated type requires that the
// answer lacks, a value outside a generated enum, an error body that is
// not ESI 2026's.
func inspect(resp any, want int) (int, []string) {
	v := reflect.ValueOf(resp).Elem()
	hr, _ := v.FieldByName("HTTPResponse").Interface().(*http.Response)
	raw, _ := v.FieldByName("Body").Interface().([]byte)
	if hr == nil {
		return 0, []string{"no HTTP response"}
	}
	var out []string
	if hr.StatusCode != want {
		out = append(out, fmt.Sprintf("status %d, want %d: %s", hr.StatusCode, want, clip(raw)))
	}
	if hr.StatusCode >= 400 {
		e, _ := v.FieldByName("JSONDefault").Interface().(*esi.Error)
		return hr.StatusCode, append(out, errorFindings(e, hr.StatusCode, raw)...)
	}
	f := v.FieldByName(fmt.Sprintf("JSON%d", hr.StatusCode))
	if !f.IsValid() {
		return hr.StatusCode, out // a status the document declares no body for
	}
	if f.IsNil() {
		return hr.StatusCode, append(out, fmt.Sprintf("answer not decoded into the generated type (Content-Type %q)",
			hr.Header.Get("Content-Type")))
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return hr.StatusCode, append(out, "answer is no JSON: "+err.Error())
	}
	walk(f.Elem(), tree, "", &out)
	return hr.StatusCode, out
}

// errorFindings checks an error answer decoded into the generated Error:
// the message, the status, and for a 400 the details of what to fix.
func errorFindings(e *esi.Error, status int, raw []byte) []string {
	if e == nil {
		return []string{"error answer not decoded into the generated Error: " + clip(raw)}
	}
	var out []string
	if e.Error == "" {
		out = append(out, "error answer without error")
	}
	if e.Status == nil || *e.Status != int64(status) {
		out = append(out, fmt.Sprintf("error answer's status is not %d: %s", status, clip(raw)))
	}
	if status == http.StatusBadRequest {
		if e.Details == nil || len(*e.Details) == 0 {
			out = append(out, "400 without details: "+clip(raw))
		}
		for _, d := range deref(e.Details) {
			if d.Location == nil || *d.Location == "" || d.Message == nil || *d.Message == "" {
				out = append(out, "a detail without location or message: "+clip(raw))
			}
		}
	}
	return out
}

func deref[T any](p *[]T) []T {
	if p == nil {
		return nil
	}
	return *p
}

// valid is implemented by oapi-codegen's enum types.
type valid interface{ Valid() bool }

// walk compares the decoded value v with the answer's JSON tree at path:
// every property of a generated struct without omitempty (a required one)
// must be in the answer, and every enum value one of the document's.
func walk(v reflect.Value, tree any, path string, out *[]string) {
	if v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.CanInterface() {
		if e, ok := v.Interface().(valid); ok && !e.Valid() {
			*out = append(*out, fmt.Sprintf("value %v at %s is not in the document's enum", v.Interface(), at(path)))
		}
	}
	switch v.Kind() {
	case reflect.Struct:
		obj, ok := tree.(map[string]any)
		if !ok {
			return // time.Time, UUID and other values decoded from a string
		}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			name, opts, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			sub, present := obj[name]
			if !present {
				if !strings.Contains(opts, "omitempty") {
					*out = append(*out, fmt.Sprintf("property %q is missing (at %s)", name, at(path)))
				}
				continue
			}
			walk(v.Field(i), sub, path+"/"+name, out)
		}
	case reflect.Slice:
		arr, _ := tree.([]any)
		for i := 0; i < v.Len() && i < len(arr); i++ {
			walk(v.Index(i), arr[i], fmt.Sprintf("%s/%d", path, i), out)
		}
	case reflect.Map:
		obj, _ := tree.(map[string]any)
		for _, k := range v.MapKeys() {
			walk(v.MapIndex(k), obj[fmt.Sprint(k.Interface())], path+"/"+fmt.Sprint(k.Interface()), out)
		}
	}
}

func at(path string) string {
	if path == "" {
		return "/"
	}
	return path
}

func clip(b []byte) string {
	if len(b) > 240 {
		return string(b[:240]) + "…"
	}
	return string(b)
}
