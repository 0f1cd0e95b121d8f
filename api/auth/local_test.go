package auth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestEnsureLocalKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data") // not there yet: created
	key, err := EnsureLocalKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	keyPath, jwksPath := filepath.Join(dir, LocalKeyFile), filepath.Join(dir, LocalJWKSFile)
	st, err := os.Stat(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o600 {
		t.Errorf("%s has mode %v, want 0600", LocalKeyFile, perm)
	}
	if bits := key.Private.N.BitLen(); bits != 2048 {
		t.Errorf("key has %d bits, want 2048", bits)
	}
	if key.ID != Thumbprint(&key.Private.PublicKey) {
		t.Errorf("kid %q is not the key's thumbprint", key.ID)
	}
	pemBefore, _ := os.ReadFile(keyPath)

	// The published JWKS verifies what the key signs.
	pub, err := LoadJWKSFile(jwksPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(pub) != 1 || !pub[key.ID].Equal(&key.Private.PublicKey) {
		t.Fatalf("jwks.json holds %v, want the key %q", pub, key.ID)
	}

	// A second call finds the same key and leaves the file alone.
	again, err := EnsureLocalKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != key.ID || !again.Private.Equal(key.Private) {
		t.Error("second EnsureLocalKey returned a different key")
	}
	if pemAfter, _ := os.ReadFile(keyPath); !bytes.Equal(pemBefore, pemAfter) {
		t.Error("second EnsureLocalKey rewrote the private key")
	}

	// A lost or stale JWKS is rewritten from the private key.
	for _, damage := range []func() error{
		func() error { return os.Remove(jwksPath) },
		func() error { return os.WriteFile(jwksPath, jwksOf(t, KeySet{"old": &keyA().PublicKey}), 0o644) },
	} {
		if err := damage(); err != nil {
			t.Fatal(err)
		}
		if _, err := EnsureLocalKey(dir); err != nil {
			t.Fatal(err)
		}
		pub, err := LoadJWKSFile(jwksPath)
		if err != nil || pub[key.ID] == nil || len(pub) != 1 {
			t.Errorf("jwks.json not healed: %v, %v", pub, err)
		}
	}

	// No temporary files are left behind.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != LocalKeyFile && e.Name() != LocalJWKSFile {
			t.Errorf("stray file %s in the data directory", e.Name())
		}
	}
}

func TestEnsureLocalKeyRefusesBadKeyFile(t *testing.T) {
	for name, content := range map[string]string{
		"not PEM":        "hello",
		"a certificate":  "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
		"broken PKCS #8": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, LocalKeyFile)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := EnsureLocalKey(dir)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: EnsureLocalKey: %v, want an error naming %s", name, err, path)
		}
		if got, _ := os.ReadFile(path); string(got) != content {
			t.Errorf("%s: the broken key file was overwritten", name)
		}
	}
}

func TestMintVerifies(t *testing.T) {
	key := NewSigningKey(keyA())
	ctx := context.Background()
	v := testVerifier(t, key.KeySet(), nil)
	tests := []struct {
		name   string
		opts   MintOptions
		config func(*Config)
		want   Claims
		scp    any // the raw scp claim
	}{
		{
			name: "defaults, two scopes",
			opts: MintOptions{CharacterID: 90000001, Scopes: []string{"a", "b"}, Now: testNow},
			want: Claims{CharacterID: 90000001, Scopes: []string{"a", "b"}, Expiry: testNow.Add(DefaultTTL)},
			scp:  []any{"a", "b"},
		},
		{
			name: "one scope is a string, as EVE SSO writes it",
			opts: MintOptions{CharacterID: 7, Scopes: []string{"a"}, TTL: time.Hour, Name: "Pilot", Now: testNow},
			want: Claims{CharacterID: 7, Scopes: []string{"a"}, Name: "Pilot", Expiry: testNow.Add(time.Hour)},
			scp:  "a",
		},
		{
			name: "no scopes",
			opts: MintOptions{CharacterID: 7, Now: testNow},
			want: Claims{CharacterID: 7, Expiry: testNow.Add(DefaultTTL)},
		},
		{
			name: "EVE issuer and audience",
			opts: MintOptions{CharacterID: 7, Issuer: "login.eveonline.com", Audience: []string{"cid", "EVE Online"}, Now: testNow},
			config: func(c *Config) {
				*c = EVEConfig("cid")
			},
			want: Claims{CharacterID: 7, Expiry: testNow.Add(DefaultTTL)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, err := Mint(key, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			v := v
			if tt.config != nil {
				v = testVerifier(t, key.KeySet(), func(c *Config) { tt.config(c); c.Now = func() time.Time { return testNow } })
			}
			got, err := v.Verify(ctx, tok)
			if err != nil {
				t.Fatal(err)
			}
			if got.CharacterID != tt.want.CharacterID || !slices.Equal(got.Scopes, tt.want.Scopes) ||
				got.Name != tt.want.Name || !got.Expiry.Equal(tt.want.Expiry) {
				t.Errorf("claims = %+v, want %+v", got, tt.want)
			}
			payload, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
			if err != nil {
				t.Fatal(err)
			}
			var raw map[string]any
			if err := json.Unmarshal(payload, &raw); err != nil {
				t.Fatal(err)
			}
			if tt.scp == nil {
				if _, ok := raw["scp"]; ok {
					t.Errorf("scp = %v, want absent", raw["scp"])
				}
			} else if b1, _ := json.Marshal(raw["scp"]); string(b1) != string(must(json.Marshal(tt.scp))) {
				t.Errorf("scp = %s, want %s", b1, must(json.Marshal(tt.scp)))
			}
		})
	}

	// The token expires when it says.
	tok, err := Mint(key, MintOptions{CharacterID: 7, TTL: time.Minute, Now: testNow.Add(-time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, tok); !errors.Is(err, ErrExpired) {
		t.Errorf("token minted a TTL ago: %v, want ErrExpired", err)
	}
}

func TestMintRefuses(t *testing.T) {
	key := NewSigningKey(keyA())
	for name, c := range map[string]struct {
		key  SigningKey
		opts MintOptions
	}{
		"no character":       {key, MintOptions{}},
		"negative character": {key, MintOptions{CharacterID: -1}},
		"negative ttl":       {key, MintOptions{CharacterID: 1, TTL: -time.Minute}},
		"no key":             {SigningKey{}, MintOptions{CharacterID: 1}},
	} {
		if tok, err := Mint(c.key, c.opts); err == nil {
			t.Errorf("%s: Mint gave %q", name, tok)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
