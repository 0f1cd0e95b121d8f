package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Generating RSA-2048 keys is slow under -race, so the tests share a few.
var testKeys = sync.OnceValue(func() []*rsa.PrivateKey {
	keys := make([]*rsa.PrivateKey, 3)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	return keys
})

// testNow is the fixed clock of every verifier in these tests.
var testNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

const (
	testKid       = "key-a"
	testCharacter = 90000001
)

// keyA signs valid tokens under testKid; keyB is another key, used to forge
// signatures under the same kid and for rotation.
func keyA() *rsa.PrivateKey { return testKeys()[0] }
func keyB() *rsa.PrivateKey { return testKeys()[1] }
func keyC() *rsa.PrivateKey { return testKeys()[2] }

func testVerifier(t testing.TB, keys Keys, mod func(*Config)) *Verifier {
	t.Helper()
	cfg := LocalConfig()
	cfg.Now = func() time.Time { return testNow }
	if mod != nil {
		mod(&cfg)
	}
	v, err := NewVerifier(keys, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// validClaims is a token payload testVerifier accepts.
func validClaims() jwt.MapClaims {
	return jwt.MapClaims{
		"sub":  "CHARACTER:EVE:90000001",
		"iss":  LocalIssuer,
		"aud":  []string{LocalAudience},
		"exp":  testNow.Add(10 * time.Minute).Unix(),
		"iat":  testNow.Add(-time.Minute).Unix(),
		"scp":  []string{"esi-search.search_structures.v1", "esi-corporations.read_structures.v1"},
		"name": "Test Pilot",
	}
}

// sign signs claims with key under kid using method (RS256 if nil).
func sign(t testing.TB, method jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	if method == nil {
		method = jwt.SigningMethodRS256
	}
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rawToken assembles a token from a header and payload and an arbitrary
// signature, as an attacker would.
func rawToken(t testing.TB, header, payload any, sig []byte) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(header) + "." + enc(payload) + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func ecKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// sentinels are every reason Verify may give.
var sentinels = []error{
	ErrMalformed, ErrExpired, ErrNotYetValid, ErrAlgorithm, ErrUnknownKey,
	ErrBadSignature, ErrWrongIssuer, ErrWrongAudience, ErrBadSubject,
}

// reason returns the one sentinel err wraps, failing if it wraps none.
func reason(t testing.TB, err error) error {
	t.Helper()
	var found []error
	for _, s := range sentinels {
		if errors.Is(err, s) {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("error %q wraps %d of the sentinels, want exactly 1", err, len(found))
	}
	return found[0]
}
