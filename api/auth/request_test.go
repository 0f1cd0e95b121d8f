package auth

import (
	"errors"
	"net/http/httptest"
	"testing"
)

func TestTokenFromRequest(t *testing.T) {
	tests := []struct {
		name    string
		target  string
		headers []string // Authorization values
		want    string
		err     error
	}{
		{name: "header", target: "/", headers: []string{"Bearer abc.def.ghi"}, want: "abc.def.ghi"},
		{name: "scheme in any case", target: "/", headers: []string{"bearer abc"}, want: "abc"},
		{name: "extra spaces", target: "/", headers: []string{"  Bearer   abc  "}, want: "abc"},
		{name: "query parameter", target: "/?token=abc.def.ghi", want: "abc.def.ghi"},
		{name: "header wins over query", target: "/?token=fromquery", headers: []string{"Bearer fromheader"}, want: "fromheader"},
		{name: "malformed header wins over query", target: "/?token=fromquery", headers: []string{"Basic dXNlcjpwYXNz"}, err: ErrBadHeader},
		{name: "nothing", target: "/", err: ErrNoToken},
		{name: "empty query parameter", target: "/?token=", err: ErrNoToken},
		{name: "query parameter twice", target: "/?token=a&token=b", err: ErrMalformed},
		{name: "Basic scheme", target: "/", headers: []string{"Basic dXNlcjpwYXNz"}, err: ErrBadHeader},
		{name: "scheme only", target: "/", headers: []string{"Bearer"}, err: ErrBadHeader},
		{name: "scheme and space", target: "/", headers: []string{"Bearer "}, err: ErrBadHeader},
		{name: "token without scheme", target: "/", headers: []string{"abc.def.ghi"}, err: ErrBadHeader},
		{name: "two tokens", target: "/", headers: []string{"Bearer a b"}, err: ErrBadHeader},
		{name: "header twice", target: "/", headers: []string{"Bearer a", "Bearer b"}, err: ErrBadHeader},
		{name: "empty header", target: "/?token=abc", headers: []string{""}, err: ErrBadHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", tt.target, nil)
			for _, h := range tt.headers {
				r.Header.Add("Authorization", h)
			}
			got, err := TokenFromRequest(r)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("TokenFromRequest = %q, %v; want %v", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("TokenFromRequest = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
