package auth

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxLifetime is the longest a token may live unless configured
// otherwise: EVE SSO's live 20 minutes, and a local token for a day covers
// any test or script.
const DefaultMaxLifetime = 24 * time.Hour

// maxNumericDate is the last second of the year 9999: later times are not
// dates but attempts to overflow a conversion.
const maxNumericDate = 253402300799

// timeClaims must be JSON numbers; the jwt library would also read numeric
// strings.
var timeClaims = [...]string{"exp", "nbf", "iat"}

// checkPayload reads the token's payload as strictly as EVE SSO writes it,
// before the signature is checked: an object whose top-level claims each
// appear once (a JSON decoder keeps the last of duplicates, so a second
// sub would otherwise win), and exp, nbf and iat plain numbers within
// dates. Shapes it cannot read are left to the jwt parser to report.
func checkPayload(token string) error {
	_, rest, ok := strings.Cut(token, ".")
	if !ok {
		return nil
	}
	seg, _, ok := strings.Cut(rest, ".")
	if !ok {
		return nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	seen := make(map[string]bool, 12)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		key, _ := tok.(string)
		if seen[key] {
			return fmt.Errorf("%w: the %q claim appears more than once", ErrMalformed, key)
		}
		seen[key] = true
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil
		}
		for _, name := range timeClaims {
			if key == name {
				if err := checkNumericDate(name, value); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkNumericDate accepts a JSON number of seconds from 0 to the end of
// year 9999.
func checkNumericDate(name string, v json.RawMessage) error {
	s := string(v)
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return fmt.Errorf("%w: %s must be a number of seconds, got %s", ErrMalformed, name, clip(s))
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > maxNumericDate {
		return fmt.Errorf("%w: %s %s is not a date", ErrMalformed, name, clip(s))
	}
	return nil
}

// clip keeps a hostile value short in an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// checkLifetime refuses a token valid for longer than max: from its iat,
// or from now when it has none.
func checkLifetime(tc *tokenClaims, now time.Time, max, leeway time.Duration) error {
	if max <= 0 || tc.ExpiresAt == nil {
		return nil
	}
	exp := tc.ExpiresAt.Time
	if exp.Sub(now) > max+leeway {
		return fmt.Errorf("%w: it expires at %s, more than %v from now", ErrLifetime, exp.UTC().Format(time.RFC3339), max)
	}
	if tc.IssuedAt != nil && exp.Sub(tc.IssuedAt.Time) > max {
		return fmt.Errorf("%w: issued at %s to expire at %s, more than %v", ErrLifetime,
			tc.IssuedAt.UTC().Format(time.RFC3339), exp.UTC().Format(time.RFC3339), max)
	}
	return nil
}
