package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"gds/cmd/esicheck/esiclient/esi"
)

// args is what an operation's call takes: the generated client, the
// path's IDs, the query, the body and the request editors (the token).
type args struct {
	ctx  context.Context
	c    *esi.ClientWithResponses
	date string
	ids  map[string]int64
	q    url.Values
	body string
	eds  []esi.RequestEditorFn
	errs []string // what could not be put into the generated types
	// ifNoneMatch is sent as If-None-Match when set.
	ifNoneMatch string
}

func (a *args) id(name string) int64 {
	v, ok := a.ids[name]
	if !ok {
		a.errs = append(a.errs, fmt.Sprintf("no value for path parameter %s", name))
	}
	return v
}

// params is the operation's generated parameters with the compatibility
// date, the tenant and the planned query set.
func params[T any](a *args) *T {
	p := new(T)
	v := reflect.ValueOf(p).Elem()
	if f := v.FieldByName("XCompatibilityDate"); f.IsValid() {
		f.SetString(a.date)
	} else {
		a.errs = append(a.errs, "the generated parameters have no X-Compatibility-Date")
	}
	// The tenant too, as a client that fills in the document's default does.
	if f := v.FieldByName("XTenant"); f.IsValid() {
		tenant := "tranquility"
		f.Set(reflect.ValueOf(&tenant))
	}
	if f := v.FieldByName("IfNoneMatch"); f.IsValid() && a.ifNoneMatch != "" {
		f.Set(reflect.ValueOf(&a.ifNoneMatch))
	}
	for name, vals := range a.q {
		f, ok := formField(v, name)
		if !ok {
			a.errs = append(a.errs, fmt.Sprintf("the generated parameters have no query parameter %s", name))
			continue
		}
		if err := set(f, vals); err != nil {
			a.errs = append(a.errs, fmt.Sprintf("query parameter %s: %v", name, err))
		}
	}
	return p
}

// body is the planned body decoded into the generated body type.
func body[T any](a *args) T {
	var b T
	if err := json.Unmarshal([]byte(a.body), &b); err != nil {
		a.errs = append(a.errs, fmt.Sprintf("body %s: %v", a.body, err))
	}
	return b
}

// formField is the field of v whose form tag names the query parameter.
func formField(v reflect.Value, name string) (reflect.Value, bool) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("form"), ",")
		if tag == name {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// set writes vals into f: a scalar, a pointer to one or a slice of them.
func set(f reflect.Value, vals []string) error {
	switch f.Kind() {
	case reflect.Pointer:
		p := reflect.New(f.Type().Elem())
		if err := set(p.Elem(), vals); err != nil {
			return err
		}
		f.Set(p)
		return nil
	case reflect.Slice:
		s := reflect.MakeSlice(f.Type(), len(vals), len(vals))
		for i, v := range vals {
			if err := set(s.Index(i), []string{v}); err != nil {
				return err
			}
		}
		f.Set(s)
		return nil
	}
	if len(vals) != 1 {
		return fmt.Errorf("%d values for a single one", len(vals))
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(vals[0])
	case reflect.Bool:
		b, err := strconv.ParseBool(vals[0])
		if err != nil {
			return err
		}
		f.SetBool(b)
	case reflect.Int, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(vals[0], 10, 64)
		if err != nil {
			return err
		}
		f.SetInt(n)
	default:
		return fmt.Errorf("unsupported Go type %s", f.Type())
	}
	return nil
}

// call makes p through fn and reports what it found.
func call(ctx context.Context, c *esi.ClientWithResponses, fn operation, op, date string, p planned) result {
	r := result{ID: p.ID, Operation: op, Method: p.Method, Template: p.Template}
	q, err := url.ParseQuery(p.Query)
	if err != nil {
		r.Findings = []string{fmt.Sprintf("planned query %q: %v", p.Query, err)}
		return r
	}
	a := &args{ctx: ctx, c: c, date: date, ids: pathIDs(p.Template, p.Path), q: q, body: p.Body}
	if p.Token != "" {
		tok := p.Token
		a.eds = append(a.eds, func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+tok)
			return nil
		})
	}
	// The path the generated client requests, to compare with the plan.
	var sent string
	a.eds = append(a.eds, func(_ context.Context, req *http.Request) error {
		sent = req.URL.Path
		return nil
	})
	resp, err := fn(a)
	r.Findings = append(r.Findings, a.errs...)
	if err != nil {
		r.Findings = append(r.Findings, "the generated client: "+err.Error())
		return r
	}
	if sent != p.Path {
		r.Findings = append(r.Findings, fmt.Sprintf("the generated client requested %s, planned %s", sent, p.Path))
	}
	status, found := inspect(resp, p.Want)
	r.Status = status
	r.Findings = append(r.Findings, found...)
	if p.Method == http.MethodGet && status == http.StatusOK {
		r.Findings = append(r.Findings, revalidate(fn, a, resp)...)
	}
	return r
}

// revalidate asks again with the answer's ETag in If-None-Match, as a
// caching client does: the generated 200 headers must carry the ETag the
// document declares, and the answer must be 304.
func revalidate(fn operation, a *args, resp any) []string {
	h := reflect.ValueOf(resp).Elem().FieldByName("Headers200")
	if !h.IsValid() || h.IsNil() {
		return nil // the document declares no headers for this answer
	}
	f := h.Elem().FieldByName("ETag")
	if !f.IsValid() {
		return nil
	}
	if f.IsNil() {
		return []string{"200 without the ETag the document declares"}
	}
	a.ifNoneMatch, a.errs = *f.Interface().(*string), nil
	again, err := fn(a)
	if err != nil {
		return []string{"If-None-Match: the generated client: " + err.Error()}
	}
	hr, _ := reflect.ValueOf(again).Elem().FieldByName("HTTPResponse").Interface().(*http.Response)
	if hr == nil || hr.StatusCode != http.StatusNotModified {
		code := 0
		if hr != nil {
			code = hr.StatusCode
		}
		return []string{fmt.Sprintf("If-None-Match with the answer's ETag: status %d, want 304", code)}
	}
	return nil
}

// pathIDs are the integer path parameters of path under tmpl.
func pathIDs(tmpl, path string) map[string]int64 {
	out := map[string]int64{}
	ts, ps := strings.Split(tmpl, "/"), strings.Split(path, "/")
	for i := range ts {
		if strings.HasPrefix(ts[i], "{") && i < len(ps) {
			if n, err := strconv.ParseInt(ps[i], 10, 64); err == nil {
				out[strings.Trim(ts[i], "{}")] = n
			}
		}
	}
	return out
}
