package auth

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestVerify(t *testing.T) {
	keys := KeySet{testKid: &keyA().PublicKey, "key-c": &keyC().PublicKey}
	withClaims := func(mod func(jwt.MapClaims)) func(t *testing.T) string {
		return func(t *testing.T) string {
			c := validClaims()
			mod(c)
			return sign(t, nil, keyA(), testKid, c)
		}
	}
	pubPEM := func(t *testing.T) []byte {
		der, err := x509.MarshalPKIXPublicKey(&keyA().PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	}

	tests := []struct {
		name    string
		token   func(t *testing.T) string
		config  func(*Config)
		want    error  // nil: accepted
		message string // part of the error message a client reads
		check   func(t *testing.T, c Claims)
	}{
		{
			name:  "valid, scopes as an array",
			token: withClaims(func(jwt.MapClaims) {}),
			check: func(t *testing.T, c Claims) {
				want := Claims{
					CharacterID: testCharacter,
					Scopes:      []string{"esi-search.search_structures.v1", "esi-corporations.read_structures.v1"},
					Name:        "Test Pilot",
					Expiry:      testNow.Add(10 * time.Minute),
				}
				if c.CharacterID != want.CharacterID || !slices.Equal(c.Scopes, want.Scopes) ||
					c.Name != want.Name || !c.Expiry.Equal(want.Expiry) || c.Expiry.Location() != time.UTC {
					t.Errorf("claims = %+v, want %+v", c, want)
				}
			},
		},
		{
			name:  "valid, one scope as a string",
			token: withClaims(func(c jwt.MapClaims) { c["scp"] = "esi-search.search_structures.v1" }),
			check: func(t *testing.T, c Claims) {
				if !slices.Equal(c.Scopes, []string{"esi-search.search_structures.v1"}) {
					t.Errorf("scopes = %q", c.Scopes)
				}
			},
		},
		{
			name:  "valid, no scp at all",
			token: withClaims(func(c jwt.MapClaims) { delete(c, "scp") }),
			check: func(t *testing.T, c Claims) {
				if len(c.Scopes) != 0 {
					t.Errorf("scopes = %q, want none", c.Scopes)
				}
			},
		},
		{
			name:  "valid, aud as a plain string",
			token: withClaims(func(c jwt.MapClaims) { c["aud"] = LocalAudience }),
		},
		{
			name:  "valid, signed by the second key of the set",
			token: func(t *testing.T) string { return sign(t, nil, keyC(), "key-c", validClaims()) },
		},
		{
			name:    "scp of the wrong type",
			token:   withClaims(func(c jwt.MapClaims) { c["scp"] = 42 }),
			want:    ErrMalformed,
			message: "scp must be a string or an array of strings",
		},
		{
			name:  "scp array holding a number",
			token: withClaims(func(c jwt.MapClaims) { c["scp"] = []any{"a", 1} }),
			want:  ErrMalformed,
		},
		{
			name:    "expired",
			token:   withClaims(func(c jwt.MapClaims) { c["exp"] = testNow.Add(-time.Second).Unix() }),
			want:    ErrExpired,
			message: "2026-05-01T11:59:59Z",
		},
		{
			name:  "expired exactly now",
			token: withClaims(func(c jwt.MapClaims) { c["exp"] = testNow.Unix() }),
			want:  ErrExpired,
		},
		{
			name:   "expired, but within the leeway",
			token:  withClaims(func(c jwt.MapClaims) { c["exp"] = testNow.Add(-20 * time.Second).Unix() }),
			config: func(c *Config) { c.Leeway = 30 * time.Second },
		},
		{
			name:   "expired beyond the leeway",
			token:  withClaims(func(c jwt.MapClaims) { c["exp"] = testNow.Add(-40 * time.Second).Unix() }),
			config: func(c *Config) { c.Leeway = 30 * time.Second },
			want:   ErrExpired,
		},
		{
			name:    "no exp",
			token:   withClaims(func(c jwt.MapClaims) { delete(c, "exp") }),
			want:    ErrMalformed,
			message: "exp claim is required",
		},
		{
			name:  "exp not a number",
			token: withClaims(func(c jwt.MapClaims) { c["exp"] = "tomorrow" }),
			want:  ErrMalformed,
		},
		{
			name:    "not valid yet",
			token:   withClaims(func(c jwt.MapClaims) { c["nbf"] = testNow.Add(time.Minute).Unix() }),
			want:    ErrNotYetValid,
			message: "2026-05-01T12:01:00Z",
		},
		{
			name:  "nbf in the past",
			token: withClaims(func(c jwt.MapClaims) { c["nbf"] = testNow.Add(-time.Minute).Unix() }),
		},
		{
			name:  "bad signature: another key under the same kid",
			token: func(t *testing.T) string { return sign(t, nil, keyB(), testKid, validClaims()) },
			want:  ErrBadSignature,
		},
		{
			name: "bad signature: payload changed after signing",
			token: func(t *testing.T) string {
				good := strings.Split(sign(t, nil, keyA(), testKid, validClaims()), ".")
				c := validClaims()
				c["sub"] = "CHARACTER:EVE:90000002"
				forged := strings.Split(sign(t, nil, keyB(), testKid, c), ".")
				return good[0] + "." + forged[1] + "." + good[2]
			},
			want: ErrBadSignature,
		},
		{
			name: "bad signature: stripped",
			token: func(t *testing.T) string {
				s := sign(t, nil, keyA(), testKid, validClaims())
				return s[:strings.LastIndexByte(s, '.')+1]
			},
			want: ErrBadSignature,
		},
		{
			// The last base64url character of a 256-byte signature carries
			// 4 unused bits; a lax decoder would accept a second spelling.
			name: "signature spelled with non-zero unused bits",
			token: func(t *testing.T) string {
				s := sign(t, nil, keyA(), testKid, validClaims())
				const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
				last := strings.IndexByte(alphabet, s[len(s)-1])
				return s[:len(s)-1] + string(alphabet[last|1])
			},
			want: ErrMalformed,
		},
		{
			name:    "unknown kid",
			token:   func(t *testing.T) string { return sign(t, nil, keyA(), "key-z", validClaims()) },
			want:    ErrUnknownKey,
			message: `"key-z"`,
		},
		{
			name:  "no kid",
			token: func(t *testing.T) string { return sign(t, nil, keyA(), "", validClaims()) },
			want:  ErrUnknownKey,
		},
		{
			name: "kid not a string",
			token: func(t *testing.T) string {
				tok := jwt.NewWithClaims(jwt.SigningMethodRS256, validClaims())
				tok.Header["kid"] = 7
				s, err := tok.SignedString(keyA())
				if err != nil {
					t.Fatal(err)
				}
				return s
			},
			want: ErrUnknownKey,
		},
		{
			name: "alg none",
			token: func(t *testing.T) string {
				return rawToken(t, map[string]any{"alg": "none", "typ": "JWT", "kid": testKid}, validClaims(), nil)
			},
			want:    ErrAlgorithm,
			message: `"none"`,
		},
		{
			name: "alg None, signed with the library's none key",
			token: func(t *testing.T) string {
				return sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, testKid, validClaims())
			},
			want: ErrAlgorithm,
		},
		{
			name:  "HS256 forged with the public key's PEM as secret",
			token: func(t *testing.T) string { return sign(t, jwt.SigningMethodHS256, pubPEM(t), testKid, validClaims()) },
			want:  ErrAlgorithm,
		},
		{
			name: "HS256 forged with the public modulus as secret",
			token: func(t *testing.T) string {
				return sign(t, jwt.SigningMethodHS256, keyA().PublicKey.N.Bytes(), testKid, validClaims())
			},
			want: ErrAlgorithm,
		},
		{
			name:  "RS512 by the right key",
			token: func(t *testing.T) string { return sign(t, jwt.SigningMethodRS512, keyA(), testKid, validClaims()) },
			want:  ErrAlgorithm,
		},
		{
			name:  "PS256 by the right key",
			token: func(t *testing.T) string { return sign(t, jwt.SigningMethodPS256, keyA(), testKid, validClaims()) },
			want:  ErrAlgorithm,
		},
		{
			name:  "ES256",
			token: func(t *testing.T) string { return sign(t, jwt.SigningMethodES256, ecKey(t), testKid, validClaims()) },
			want:  ErrAlgorithm,
		},
		{
			name: "alg unknown to the library",
			token: func(t *testing.T) string {
				return rawToken(t, map[string]any{"alg": "XY512", "kid": testKid}, validClaims(), []byte("sig"))
			},
			want: ErrAlgorithm,
		},
		{
			name: "no alg",
			token: func(t *testing.T) string {
				return rawToken(t, map[string]any{"kid": testKid}, validClaims(), []byte("sig"))
			},
			want: ErrAlgorithm,
		},
		{
			name:    "wrong issuer",
			token:   withClaims(func(c jwt.MapClaims) { c["iss"] = "login.eveonline.com" }),
			want:    ErrWrongIssuer,
			message: `"login.eveonline.com"`,
		},
		{
			name:  "no issuer",
			token: withClaims(func(c jwt.MapClaims) { delete(c, "iss") }),
			want:  ErrWrongIssuer,
		},
		{
			name:    "wrong audience",
			token:   withClaims(func(c jwt.MapClaims) { c["aud"] = []string{"someone-else"} }),
			want:    ErrWrongAudience,
			message: `"gds"`,
		},
		{
			name:  "no audience",
			token: withClaims(func(c jwt.MapClaims) { delete(c, "aud") }),
			want:  ErrWrongAudience,
		},
		{
			name: "EVE SSO token, both issuer spellings and both audiences",
			token: withClaims(func(c jwt.MapClaims) {
				c["iss"] = "https://login.eveonline.com"
				c["aud"] = []string{"client-123", "EVE Online"}
			}),
			config: func(c *Config) { *c = EVEConfig("client-123"); c.Now = func() time.Time { return testNow } },
		},
		{
			name: "EVE SSO token, bare issuer",
			token: withClaims(func(c jwt.MapClaims) {
				c["iss"] = "login.eveonline.com"
				c["aud"] = []string{"EVE Online", "client-123"}
			}),
			config: func(c *Config) { *c = EVEConfig("client-123"); c.Now = func() time.Time { return testNow } },
		},
		{
			name: "EVE SSO token for another application",
			token: withClaims(func(c jwt.MapClaims) {
				c["iss"] = "login.eveonline.com"
				c["aud"] = []string{"client-999", "EVE Online"}
			}),
			config:  func(c *Config) { *c = EVEConfig("client-123"); c.Now = func() time.Time { return testNow } },
			want:    ErrWrongAudience,
			message: `"client-123"`,
		},
		{
			name: "EVE SSO token without the EVE Online audience",
			token: withClaims(func(c jwt.MapClaims) {
				c["iss"] = "login.eveonline.com"
				c["aud"] = "client-123"
			}),
			config: func(c *Config) { *c = EVEConfig("client-123"); c.Now = func() time.Time { return testNow } },
			want:   ErrWrongAudience,
		},
		{
			name:    "sub not numeric",
			token:   withClaims(func(c jwt.MapClaims) { c["sub"] = "CHARACTER:EVE:abc" }),
			want:    ErrBadSubject,
			message: "CHARACTER:EVE:abc",
		},
		{
			name:  "sub of a corporation",
			token: withClaims(func(c jwt.MapClaims) { c["sub"] = "CORPORATION:EVE:1" }),
			want:  ErrBadSubject,
		},
		{
			name:  "sub zero",
			token: withClaims(func(c jwt.MapClaims) { c["sub"] = "CHARACTER:EVE:0" }),
			want:  ErrBadSubject,
		},
		{
			name:  "no sub",
			token: withClaims(func(c jwt.MapClaims) { delete(c, "sub") }),
			want:  ErrBadSubject,
		},
		{
			name:  "sub not a string",
			token: withClaims(func(c jwt.MapClaims) { c["sub"] = 90000001 }),
			want:  ErrMalformed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := testVerifier(t, keys, tt.config)
			got, err := v.Verify(context.Background(), tt.token(t))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Verify: %v, want accepted", err)
				}
				if got.CharacterID != testCharacter {
					t.Errorf("CharacterID = %d, want %d", got.CharacterID, testCharacter)
				}
				if tt.check != nil {
					tt.check(t, got)
				}
				return
			}
			if err == nil {
				t.Fatalf("Verify accepted the token (claims %+v), want %v", got, tt.want)
			}
			if r := reason(t, err); r != tt.want {
				t.Fatalf("Verify: %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.message) {
				t.Errorf("message %q does not mention %q", err, tt.message)
			}
			if got.CharacterID != 0 || got.Scopes != nil {
				t.Errorf("refused token still gave claims %+v", got)
			}
		})
	}
}

func TestVerifyMalformed(t *testing.T) {
	v := testVerifier(t, KeySet{testKid: &keyA().PublicKey}, nil)
	for _, token := range []string{
		"", "abc", "a.b", "a.b.c", "....", "a..b", "Bearer x.y.z",
		"eyJhbGciOiJSUzI1NiJ9.e30", // two segments
		"!!!.e30.sig",
		"e30.!!!.sig",
		"bm90IGpzb24.e30.c2ln", // header is not JSON
		strings.Repeat("A", 17<<10),
	} {
		_, err := v.Verify(context.Background(), token)
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("Verify(%.30q): %v, want ErrMalformed", token, err)
		}
	}
}

func TestNewVerifierRefusesOpenConfig(t *testing.T) {
	keys := KeySet{testKid: &keyA().PublicKey}
	for name, cfg := range map[string]Config{
		"no issuers":      {Audiences: []string{"gds"}},
		"empty issuer":    {Issuers: []string{""}, Audiences: []string{"gds"}},
		"no audiences":    {Issuers: []string{"gds-local"}},
		"empty audience":  {Issuers: []string{"gds-local"}, Audiences: []string{"gds", ""}},
		"negative leeway": {Issuers: []string{"gds-local"}, Audiences: []string{"gds"}, Leeway: -time.Second},
		"huge leeway":     {Issuers: []string{"gds-local"}, Audiences: []string{"gds"}, Leeway: time.Hour},
	} {
		if _, err := NewVerifier(keys, cfg); err == nil {
			t.Errorf("%s: NewVerifier accepted %+v", name, cfg)
		}
	}
	if _, err := NewVerifier(nil, LocalConfig()); err == nil {
		t.Error("NewVerifier accepted nil keys")
	}
	if _, err := NewVerifier(keys, LocalConfig()); err != nil {
		t.Errorf("NewVerifier(LocalConfig): %v", err)
	}
}

func TestParseSubject(t *testing.T) {
	tests := []struct {
		sub  string
		want int64 // 0: refused
	}{
		{"CHARACTER:EVE:90000001", 90000001},
		{"CHARACTER:EVE:1", 1},
		{"CHARACTER:EVE:9223372036854775807", 9223372036854775807},
		{"CHARACTER:EVE:9223372036854775808", 0},
		{"CHARACTER:EVE:abc", 0},
		{"CHARACTER:EVE:", 0},
		{"CHARACTER:EVE:0", 0},
		{"CHARACTER:EVE:007", 0},
		{"CHARACTER:EVE:-5", 0},
		{"CHARACTER:EVE:+5", 0},
		{"CHARACTER:EVE:5 ", 0},
		{"CHARACTER:EVE:1e3", 0},
		{"CORPORATION:EVE:1", 0},
		{"character:eve:1", 0},
		{"CHARACTER:EVE:1:2", 0},
		{"", 0},
	}
	for _, tt := range tests {
		got, err := ParseSubject(tt.sub)
		if tt.want == 0 {
			if err == nil || !errors.Is(err, ErrBadSubject) {
				t.Errorf("ParseSubject(%q) = %d, %v; want ErrBadSubject", tt.sub, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSubject(%q) = %d, %v; want %d", tt.sub, got, err, tt.want)
		}
	}
}

func TestHasScope(t *testing.T) {
	c := Claims{Scopes: []string{"esi-search.search_structures.v1"}}
	if !c.HasScope("esi-search.search_structures.v1") {
		t.Error("HasScope missed a granted scope")
	}
	for _, s := range []string{"", "esi-search", "esi-corporations.read_structures.v1"} {
		if c.HasScope(s) {
			t.Errorf("HasScope(%q) = true", s)
		}
	}
}

// FuzzVerify feeds arbitrary strings to Verify: it must never panic, must
// refuse with one of the sentinels, and may accept only a token this test
// really signed.
func FuzzVerify(f *testing.F) {
	keys := KeySet{testKid: &keyA().PublicKey}
	v := testVerifier(f, keys, nil)
	genuine := map[string]bool{}
	good := sign(f, nil, keyA(), testKid, validClaims())
	genuine[good] = true
	f.Add(good)
	c := validClaims()
	c["scp"] = "esi-search.search_structures.v1"
	one := sign(f, nil, keyA(), testKid, c)
	genuine[one] = true
	f.Add(one)
	f.Add(sign(f, nil, keyB(), testKid, validClaims()))
	f.Add(sign(f, jwt.SigningMethodHS256, []byte("secret"), testKid, validClaims()))
	f.Add(rawToken(f, map[string]any{"alg": "none", "kid": testKid}, validClaims(), nil))
	f.Add(good + "=")
	f.Add(strings.Replace(good, ".", "=.", 1))
	f.Add("")
	f.Add("a.b.c")
	f.Add("eyJhbGciOiJSUzI1NiIsImtpZCI6ImtleS1hIn0.e30.")
	f.Fuzz(func(t *testing.T, token string) {
		claims, err := v.Verify(context.Background(), token)
		if err == nil {
			if !genuine[token] {
				t.Fatalf("accepted a token this test never signed: %q (claims %+v)", token, claims)
			}
			return
		}
		reason(t, err)
		if claims.CharacterID != 0 || claims.Scopes != nil {
			t.Fatalf("refused token still gave claims %+v", claims)
		}
	})
}
