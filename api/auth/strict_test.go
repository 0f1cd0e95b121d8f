package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// signRaw signs payload exactly as written (RS256 under testKid), so a
// test can send what no claims map can hold: duplicated claims, numbers
// as strings, huge exponents.
func signRaw(t *testing.T, payload string) string {
	t.Helper()
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString([]byte(`{"alg":"RS256","kid":"`+testKid+`","typ":"JWT"}`)) + "." + enc.EncodeToString([]byte(payload))
	sig, err := jwt.SigningMethodRS256.Sign(signing, keyA())
	if err != nil {
		t.Fatal(err)
	}
	return signing + "." + enc.EncodeToString(sig)
}

// Token checks are as strict as EVE SSO's: what ESI would refuse, gds
// refuses with 401 (every Verify error is a 401 to the API).
func TestVerifyStrictClaims(t *testing.T) {
	now := testNow.Unix()
	claims := func(extra string) string {
		return fmt.Sprintf(`{"sub":"CHARACTER:EVE:90000001","iss":%q,"aud":[%q],"scp":["esi-search.search_structures.v1"]%s}`,
			LocalIssuer, LocalAudience, extra)
	}
	valid := fmt.Sprintf(`,"exp":%d,"iat":%d`, now+600, now-60)
	v := newTestVerifier(t, nil)

	if c, err := v.Verify(context.Background(), signRaw(t, claims(valid))); err != nil || c.CharacterID != testCharacter {
		t.Fatalf("a plain token: %+v %v", c, err)
	}
	for _, tc := range []struct {
		name, extra string
		want        error
		message     string
	}{
		{"exp as a string", fmt.Sprintf(`,"exp":"%d","iat":%d`, now+600, now-60), ErrMalformed, "exp must be a number"},
		{"nbf as a string", valid + fmt.Sprintf(`,"nbf":"%d"`, now-60), ErrMalformed, "nbf must be a number"},
		{"iat as a string", fmt.Sprintf(`,"exp":%d,"iat":"%d"`, now+600, now-60), ErrMalformed, "iat must be a number"},
		{"nbf that would wrap into the past", valid + `,"nbf":1e300`, ErrMalformed, "nbf 1e300 is not a date"},
		{"exp that would wrap", fmt.Sprintf(`,"exp":1e300,"iat":%d`, now-60), ErrMalformed, "exp 1e300 is not a date"},
		{"negative exp", `,"exp":-1`, ErrMalformed, "not a date"},
		{"a 100-year token", fmt.Sprintf(`,"exp":%d,"iat":%d`, now+100*365*86400, now-60), ErrLifetime, "more than 24h0m0s"},
		{"a long token without iat", fmt.Sprintf(`,"exp":%d`, now+25*3600), ErrLifetime, "from now"},
		{"a long token issued long ago", fmt.Sprintf(`,"exp":%d,"iat":%d`, now+600, now-30*86400), ErrLifetime, "issued at"},
		{"duplicated sub", valid + `,"sub":"CHARACTER:EVE:90000002"`, ErrMalformed, `"sub" claim appears more than once`},
		{"duplicated exp", valid + fmt.Sprintf(`,"exp":%d`, now+60), ErrMalformed, `"exp" claim appears more than once`},
		{"duplicated scp", valid + `,"scp":"esi-corporations.read_structures.v1"`, ErrMalformed, "more than once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), signRaw(t, claims(tc.extra)))
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.message) {
				t.Errorf("Verify = %v, want %v mentioning %q", err, tc.want, tc.message)
			}
		})
	}

	// The lifetime is configurable; a day still passes by default.
	day := fmt.Sprintf(`,"exp":%d,"iat":%d`, now+23*3600, now-60)
	if _, err := v.Verify(context.Background(), signRaw(t, claims(day))); err != nil {
		t.Errorf("a token for 23 hours: %v", err)
	}
	short := newTestVerifier(t, func(c *Config) { c.MaxLifetime = time.Hour })
	if _, err := short.Verify(context.Background(), signRaw(t, claims(day))); !errors.Is(err, ErrLifetime) {
		t.Errorf("a token for 23 hours with a 1h maximum: %v, want %v", err, ErrLifetime)
	}
	if _, err := NewVerifier(KeySet{testKid: &keyA().PublicKey}, Config{Issuers: []string{"i"}, Audiences: []string{"a"}, MaxLifetime: -time.Second}); err == nil {
		t.Error("a negative maximum lifetime was accepted")
	}
}

func newTestVerifier(t *testing.T, mod func(*Config)) *Verifier {
	t.Helper()
	cfg := LocalConfig()
	cfg.Now = func() time.Time { return testNow }
	if mod != nil {
		mod(&cfg)
	}
	v, err := NewVerifier(KeySet{testKid: &keyA().PublicKey}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
