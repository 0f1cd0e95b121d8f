package auth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gds/api/apitest"
)

func jwksOf(t testing.TB, keys KeySet) []byte {
	t.Helper()
	b, err := MarshalJWKS(keys)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseJWKS(t *testing.T) {
	a := publicJWK("a", &keyA().PublicKey)
	b := publicJWK("b", &keyB().PublicKey)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	doc := func(keys ...any) []byte {
		out, err := json.Marshal(map[string]any{"keys": keys})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	with := func(k jwk, mod func(*jwk)) jwk { mod(&k); return k }
	// EVE SSO's JWKS holds an RS256 and an ES256 key.
	ec := map[string]any{"kty": "EC", "kid": "JWT-Signature-Key", "crv": "P-256", "x": "abc", "y": "def", "alg": "ES256", "use": "sig"}

	tests := []struct {
		name    string
		data    []byte
		want    []string // kids; nil: an error
		errText string
	}{
		{name: "two keys", data: doc(a, b), want: []string{"a", "b"}},
		{name: "EC key skipped", data: doc(a, ec), want: []string{"a"}},
		{name: "encryption key skipped", data: doc(a, with(b, func(k *jwk) { k.Use = "enc" })), want: []string{"a"}},
		{name: "RS512 key skipped", data: doc(a, with(b, func(k *jwk) { k.Alg = "RS512" })), want: []string{"a"}},
		{name: "key without kid skipped", data: doc(a, with(b, func(k *jwk) { k.Kid = "" })), want: []string{"a"}},
		{name: "use and alg may be absent", data: doc(with(a, func(k *jwk) { k.Use, k.Alg = "", "" })), want: []string{"a"}},
		{name: "padded base64 tolerated", data: doc(with(a, func(k *jwk) { k.E += "=" })), want: []string{"a"}},
		{name: "only an EC key", data: doc(ec), errText: "no RSA signing key"},
		{name: "empty", data: doc(), errText: "no RSA signing key"},
		{name: "not JSON", data: []byte("<html>"), errText: "jwks"},
		{name: "duplicate kid", data: doc(a, with(b, func(k *jwk) { k.Kid = "a" })), errText: "appears twice"},
		{name: "weak key", data: doc(publicJWK("s", &small.PublicKey)), errText: "1024-bit"},
		{name: "n missing", data: doc(with(a, func(k *jwk) { k.N = "" })), errText: "n: missing"},
		{name: "n not base64url", data: doc(with(a, func(k *jwk) { k.N = "a+b/" })), errText: "base64url"},
		{name: "e even", data: doc(with(a, func(k *jwk) { k.E = "AAAC" })), errText: "exponent"},
		{name: "e one", data: doc(with(a, func(k *jwk) { k.E = "AQ" })), errText: "exponent"},
		{name: "e huge", data: doc(with(a, func(k *jwk) { k.E = "AQAAAAAAAAAB" })), errText: "exponent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseJWKS(tt.data)
			if tt.want == nil {
				if err == nil || !strings.Contains(err.Error(), tt.errText) {
					t.Fatalf("ParseJWKS: %v, want an error mentioning %q", err, tt.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d keys, want %v", len(got), tt.want)
			}
			for _, kid := range tt.want {
				if got[kid] == nil {
					t.Errorf("kid %q missing", kid)
				}
			}
		})
	}
}

func TestJWKSRoundTrip(t *testing.T) {
	in := KeySet{"b": &keyB().PublicKey, "a": &keyA().PublicKey}
	data := jwksOf(t, in)
	if i, j := strings.Index(string(data), `"kid": "a"`), strings.Index(string(data), `"kid": "b"`); i < 0 || j < i {
		t.Errorf("keys not in kid order:\n%s", data)
	}
	out, err := ParseJWKS(data)
	if err != nil {
		t.Fatal(err)
	}
	for kid, k := range in {
		if !k.Equal(out[kid]) {
			t.Errorf("kid %q changed in the round trip", kid)
		}
	}
}

func TestThumbprint(t *testing.T) {
	// RFC 7638 section 3.1's example key and its thumbprint.
	const n = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
	k, err := jwk{Kty: "RSA", N: n, E: "AQAB"}.rsaPublicKey()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Thumbprint(k), "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"; got != want {
		t.Errorf("Thumbprint = %s, want %s", got, want)
	}
}

func TestLoadJWKSFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(path, jwksOf(t, KeySet{testKid: &keyA().PublicKey}), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	keys, err := OpenKeys(ctx, path, RemoteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v := testVerifier(t, keys, nil)
	if _, err := v.Verify(ctx, sign(t, nil, keyA(), testKid, validClaims())); err != nil {
		t.Errorf("token signed by the file's key: %v", err)
	}
	if _, err := v.Verify(ctx, sign(t, nil, keyB(), "key-b", validClaims())); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("token by a key not in the file: %v, want ErrUnknownKey", err)
	}

	if _, err := LoadJWKSFile(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"keys": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadJWKSFile(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("empty JWKS: %v, want an error naming the file", err)
	}
}

// jwksServer serves whatever JWKS (or failure) the test sets, on loopback.
type jwksServer struct {
	*httptest.Server
	body   atomic.Value // []byte
	status atomic.Int32
	hits   atomic.Int32
}

func newJWKSServer(t *testing.T, keys KeySet) *jwksServer {
	s := &jwksServer{}
	s.set(t, keys)
	s.status.Store(http.StatusOK)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(s.status.Load()))
		w.Write(s.body.Load().([]byte))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) set(t *testing.T, keys KeySet) { s.body.Store(jwksOf(t, keys)) }

func TestRemoteKeysRotation(t *testing.T) {
	ctx := context.Background()
	srv := newJWKSServer(t, KeySet{"a": &keyA().PublicKey})
	clock := apitest.NewClock(testNow)
	r, err := NewRemoteKeys(srv.URL+"/oauth/jwks", RemoteOptions{MinRefetch: time.Minute, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	v := testVerifier(t, r, nil)
	tokA := sign(t, nil, keyA(), "a", validClaims())
	tokB := sign(t, nil, keyB(), "b", validClaims())
	if _, err := v.Verify(ctx, tokA); err != nil {
		t.Fatalf("token by key a: %v", err)
	}

	// The issuer rotates to key b; the first token naming b triggers a
	// fetch (a minute has passed since the last one).
	srv.set(t, KeySet{"b": &keyB().PublicKey})
	clock.Add(time.Minute)
	hits := srv.hits.Load()
	if _, err := v.Verify(ctx, tokB); err != nil {
		t.Fatalf("token by the rotated-in key: %v", err)
	}
	if got := srv.hits.Load() - hits; got != 1 {
		t.Errorf("unknown kid caused %d fetches, want 1", got)
	}
	if _, err := v.Verify(ctx, tokA); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("token by the rotated-out key: %v, want ErrUnknownKey", err)
	}

	// Made-up kids within MinRefetch of the last fetch cost no request.
	hits = srv.hits.Load()
	for i := range 5 {
		clock.Add(time.Second)
		tok := sign(t, nil, keyC(), "made-up-"+string(rune('0'+i)), validClaims())
		if _, err := v.Verify(ctx, tok); !errors.Is(err, ErrUnknownKey) {
			t.Fatalf("made-up kid: %v, want ErrUnknownKey", err)
		}
	}
	if got := srv.hits.Load() - hits; got != 0 {
		t.Errorf("made-up kids within MinRefetch caused %d fetches, want 0", got)
	}
	clock.Add(time.Minute)
	if _, err := v.Verify(ctx, sign(t, nil, keyC(), "made-up", validClaims())); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("made-up kid: %v, want ErrUnknownKey", err)
	}
	if got := srv.hits.Load() - hits; got != 1 {
		t.Errorf("made-up kid after MinRefetch caused %d fetches, want 1", got)
	}
}

func TestRemoteKeysFailedRefreshKeepsKeys(t *testing.T) {
	ctx := context.Background()
	srv := newJWKSServer(t, KeySet{"a": &keyA().PublicKey})
	r, err := NewRemoteKeys(srv.URL, RemoteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	_, fetched, _ := r.Status()
	v := testVerifier(t, r, nil)
	tok := sign(t, nil, keyA(), "a", validClaims())

	for _, c := range []struct {
		name    string
		breakIt func()
	}{
		{"HTTP 500", func() { srv.status.Store(http.StatusInternalServerError) }},
		{"not JSON", func() { srv.body.Store([]byte("<html>oops</html>")) }},
		{"no RSA key", func() { srv.body.Store([]byte(`{"keys":[]}`)) }},
		{"server gone", func() { srv.Close() }}, // last: nothing restores it
	} {
		name, breakIt := c.name, c.breakIt
		breakIt()
		if err := r.Refresh(ctx); err == nil {
			t.Errorf("%s: Refresh succeeded", name)
		}
		if _, err := v.Verify(ctx, tok); err != nil {
			t.Errorf("%s: last good key lost: %v", name, err)
		}
		n, f, lastErr := r.Status()
		if n != 1 || !f.Equal(fetched) || lastErr == nil {
			t.Errorf("%s: Status = %d keys, fetched %v, err %v; want 1, %v, an error", name, n, f, lastErr, fetched)
		}
		srv.status.Store(http.StatusOK)
		srv.set(t, KeySet{"a": &keyA().PublicKey})
	}
}

func TestRemoteKeysTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	r, err := NewRemoteKeys(srv.URL, RemoteOptions{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// The server never answers: only the timeout can end Refresh, so the
	// deadline error proves it (a duration check would fail on a busy
	// machine).
	if err := r.Refresh(context.Background()); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Refresh against a hanging server: %v, want a deadline error", err)
	}
}

func TestRemoteKeysBackgroundRefresh(t *testing.T) {
	srv := newJWKSServer(t, KeySet{"a": &keyA().PublicKey})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	keys, err := OpenKeys(ctx, srv.URL, RemoteOptions{RefreshInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r := keys.(*RemoteKeys)
	if _, ok := r.lookup("a"); !ok {
		t.Fatal("OpenKeys did not fetch the keys before returning")
	}
	srv.set(t, KeySet{"b": &keyB().PublicKey})
	// lookup never fetches, so only Run can bring key b in.
	deadline := time.Now().Add(time.Minute)
	for {
		if _, ok := r.lookup("b"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("background refresh never picked up the rotated key")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
}

func TestOpenKeysRefusesBadSources(t *testing.T) {
	ctx := context.Background()
	srv := newJWKSServer(t, KeySet{"a": &keyA().PublicKey})
	srv.status.Store(http.StatusNotFound)
	for _, src := range []string{srv.URL, "http://", filepath.Join(t.TempDir(), "nope.json")} {
		if _, err := OpenKeys(ctx, src, RemoteOptions{}); err == nil {
			t.Errorf("OpenKeys(%q) succeeded", src)
		}
	}
	if _, err := NewRemoteKeys("ftp://example.com/jwks", RemoteOptions{}); err == nil {
		t.Error("NewRemoteKeys accepted an ftp URL")
	}
}

// FuzzParseJWKS reads any JWKS document: refused, or keys that are usable
// RSA public keys and survive a round trip.
func FuzzParseJWKS(f *testing.F) {
	good, err := MarshalJWKS(NewSigningKey(keyA()).KeySet())
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{string(good), `{"keys":[]}`, `{"keys":[{"kty":"RSA","kid":"a","n":"AQAB","e":"AQAB"}]}`,
		`{"keys":[{"kty":"EC","kid":"b"}]}`, `{"keys":[{"kty":"RSA","kid":"a","n":"","e":"AQAB"}]}`, `null`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := ParseJWKS(data)
		if err != nil {
			return
		}
		for kid, k := range set {
			if k.N.BitLen() < minKeyBits || k.E < 3 || k.E%2 == 0 {
				t.Fatalf("kid %q: unusable key accepted (%d bits, e %d)", kid, k.N.BitLen(), k.E)
			}
		}
		raw, err := MarshalJWKS(set)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseJWKS(raw)
		if err != nil || len(again) != len(set) {
			t.Fatalf("round trip: %v, %d keys of %d", err, len(again), len(set))
		}
		for kid, k := range set {
			if !k.Equal(again[kid]) {
				t.Fatalf("kid %q changed in a round trip", kid)
			}
		}
	})
}
