package auth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Why no token could be taken from a request; both mean HTTP 401.
var (
	ErrNoToken   = errors.New("no access token")
	ErrBadHeader = errors.New("malformed Authorization header")
)

// TokenParam is the query parameter ESI accepts a token in.
const TokenParam = "token"

// TokenFromRequest returns the bearer token of r as ESI takes it: from the
// header "Authorization: Bearer <token>", or else from the token query
// parameter. A present header wins, even when malformed, so a broken client
// gets told rather than silently falling back.
func TokenFromRequest(r *http.Request) (string, error) {
	if hs := r.Header.Values("Authorization"); len(hs) > 0 {
		if len(hs) > 1 {
			return "", fmt.Errorf("%w: sent %d times, send it once", ErrBadHeader, len(hs))
		}
		scheme, token, ok := strings.Cut(strings.TrimSpace(hs[0]), " ")
		// RFC 7235: the scheme is case-insensitive.
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return "", fmt.Errorf(`%w: want "Bearer <token>"`, ErrBadHeader)
		}
		token = strings.TrimSpace(token)
		if token == "" || strings.ContainsAny(token, " \t") {
			return "", fmt.Errorf(`%w: want "Bearer <token>" with one token`, ErrBadHeader)
		}
		return token, nil
	}
	q := r.URL.Query()[TokenParam]
	switch {
	case len(q) == 0:
		return "", fmt.Errorf("%w: send the header \"Authorization: Bearer <token>\" or the %s query parameter", ErrNoToken, TokenParam)
	case len(q) > 1:
		return "", fmt.Errorf("%w: the %s query parameter is given %d times", ErrMalformed, TokenParam, len(q))
	case q[0] == "":
		return "", fmt.Errorf("%w: the %s query parameter is empty", ErrNoToken, TokenParam)
	}
	return q[0], nil
}
