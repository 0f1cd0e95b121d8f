package auth

import (
	"context"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// minKeyBits refuses keys too weak to trust; EVE SSO and the local key use
// 2048 bits.
const minKeyBits = 2048

// maxJWKSSize bounds what a JWKS file or URL may make us read; real ones are
// a few KiB.
const maxJWKSSize = 1 << 20

// KeySet is a fixed set of RSA public keys by kid. It is itself a Keys.
type KeySet map[string]*rsa.PublicKey

// Key returns the key for kid.
func (s KeySet) Key(_ context.Context, kid string) (*rsa.PublicKey, error) {
	if k, ok := s[kid]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("%w: kid %q is not in the JWKS", ErrUnknownKey, kid)
}

// jwk is the part of an RFC 7517 JSON Web Key that RSA signing keys use.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid,omitempty"`
	Use string `json:"use,omitempty"`
	Alg string `json:"alg,omitempty"`
	N   string `json:"n,omitempty"`
	E   string `json:"e,omitempty"`
}

type jwkSet struct {
	Keys []jwk `json:"keys"`
}

// ParseJWKS reads the RS256 signing keys of a JWKS document. Keys of other
// types or uses are skipped (EVE SSO also publishes an ES256 key); a set
// without one usable RSA key is an error, as is a broken RSA key.
func ParseJWKS(data []byte) (KeySet, error) {
	var doc jwkSet
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	set := KeySet{}
	for i, k := range doc.Keys {
		if k.Kty != "RSA" || (k.Use != "" && k.Use != "sig") || (k.Alg != "" && k.Alg != Algorithm) {
			continue
		}
		if k.Kid == "" {
			// Tokens pick their key by kid, so a key without one is unusable.
			continue
		}
		if _, dup := set[k.Kid]; dup {
			return nil, fmt.Errorf("jwks: keys[%d]: kid %q appears twice", i, k.Kid)
		}
		pub, err := k.rsaPublicKey()
		if err != nil {
			return nil, fmt.Errorf("jwks: keys[%d] (kid %q): %w", i, k.Kid, err)
		}
		set[k.Kid] = pub
	}
	if len(set) == 0 {
		return nil, errors.New("jwks: no RSA signing key with a kid")
	}
	return set, nil
}

func (k jwk) rsaPublicKey() (*rsa.PublicKey, error) {
	n, err := decodeBigInt(k.N)
	if err != nil {
		return nil, fmt.Errorf("n: %w", err)
	}
	e, err := decodeBigInt(k.E)
	if err != nil {
		return nil, fmt.Errorf("e: %w", err)
	}
	if n.BitLen() < minKeyBits {
		return nil, fmt.Errorf("n: %d-bit modulus, at least %d bits required", n.BitLen(), minKeyBits)
	}
	if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || e.Bit(0) == 0 {
		return nil, fmt.Errorf("e: %v is not a usable public exponent", e)
	}
	return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
}

func decodeBigInt(s string) (*big.Int, error) {
	if s == "" {
		return nil, errors.New("missing")
	}
	// RFC 7518 says unpadded base64url; some publishers pad anyway.
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, fmt.Errorf("not base64url: %w", err)
	}
	return new(big.Int).SetBytes(b), nil
}

// publicJWK is the JWKS entry of pub under kid.
func publicJWK(kid string, pub *rsa.PublicKey) jwk {
	return jwk{
		Kty: "RSA", Kid: kid, Use: "sig", Alg: Algorithm,
		N: base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		E: base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
	}
}

// Thumbprint is the RFC 7638 SHA-256 thumbprint of pub, used as the kid of
// the local key so the kid changes exactly when the key does.
func Thumbprint(pub *rsa.PublicKey) string {
	k := publicJWK("", pub)
	// RFC 7638: the required members only, in lexical order, no whitespace.
	canon := `{"e":"` + k.E + `","kty":"RSA","n":"` + k.N + `"}`
	sum := sha256.Sum256([]byte(canon))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// MarshalJWKS writes keys as a JWKS document, in a stable order.
func MarshalJWKS(keys KeySet) ([]byte, error) {
	var doc jwkSet
	for _, kid := range slices.Sorted(maps.Keys(keys)) {
		doc.Keys = append(doc.Keys, publicJWK(kid, keys[kid]))
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	return append(b, '\n'), nil
}

// LoadJWKSFile reads a JWKS document from a file.
func LoadJWKSFile(path string) (KeySet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxJWKSSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxJWKSSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxJWKSSize)
	}
	keys, err := ParseJWKS(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return keys, nil
}

// RemoteOptions tunes a RemoteKeys; zero values take the defaults.
type RemoteOptions struct {
	// Client fetches the JWKS; nil means a plain http.Client.
	Client *http.Client
	// Timeout bounds one fetch (default 10s).
	Timeout time.Duration
	// RefreshInterval is how often Run re-fetches (default 15m).
	RefreshInterval time.Duration
	// MinRefetch is the least time between two fetches caused by tokens with
	// an unknown kid (default 1m), so a flood of made-up kids cannot turn
	// into a flood of requests to the key server.
	MinRefetch time.Duration
	// Now is the clock for MinRefetch; nil means time.Now.
	Now func() time.Time
}

// RemoteKeys is a JWKS fetched from a URL: refreshed by Run in the
// background and on demand when a token names a kid it does not hold
// (rate-limited, since that is how key rotation shows up first). A failed
// fetch keeps the last good keys. Safe for concurrent use.
type RemoteKeys struct {
	url  string
	opts RemoteOptions

	fetchMu   sync.Mutex // one fetch at a time
	lastFetch time.Time  // start of the last fetch, good or bad; under fetchMu

	mu      sync.RWMutex
	keys    KeySet
	fetched time.Time // when keys were last fetched successfully
	lastErr error     // outcome of the last fetch
}

// NewRemoteKeys returns a RemoteKeys for rawURL (http or https) holding no
// keys yet; call Refresh to fetch them and Run to keep them fresh.
func NewRemoteKeys(rawURL string, opts RemoteOptions) (*RemoteKeys, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("jwks url: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("jwks url %q: must be an absolute http or https URL", rawURL)
	}
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.RefreshInterval <= 0 {
		opts.RefreshInterval = 15 * time.Minute
	}
	if opts.MinRefetch <= 0 {
		opts.MinRefetch = time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &RemoteKeys{url: rawURL, opts: opts}, nil
}

// Key returns the key for kid, re-fetching the JWKS first when kid is
// unknown and the last fetch is at least MinRefetch old.
func (r *RemoteKeys) Key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	if k, ok := r.lookup(kid); ok {
		return k, nil
	}
	r.fetchMu.Lock()
	defer r.fetchMu.Unlock()
	// Another caller may have fetched while this one waited for the lock.
	if k, ok := r.lookup(kid); ok {
		return k, nil
	}
	if !r.lastFetch.IsZero() && r.opts.Now().Sub(r.lastFetch) < r.opts.MinRefetch {
		return nil, fmt.Errorf("%w: kid %q is not in the JWKS at %s", ErrUnknownKey, kid, r.url)
	}
	if err := r.fetchLocked(ctx); err != nil {
		return nil, fmt.Errorf("%w: kid %q: %v", ErrUnknownKey, kid, err)
	}
	if k, ok := r.lookup(kid); ok {
		return k, nil
	}
	return nil, fmt.Errorf("%w: kid %q is not in the JWKS at %s", ErrUnknownKey, kid, r.url)
}

func (r *RemoteKeys) lookup(kid string) (*rsa.PublicKey, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	k, ok := r.keys[kid]
	return k, ok
}

// Refresh fetches the JWKS now. On failure the keys held so far stay.
func (r *RemoteKeys) Refresh(ctx context.Context) error {
	r.fetchMu.Lock()
	defer r.fetchMu.Unlock()
	return r.fetchLocked(ctx)
}

// Run refreshes the keys every RefreshInterval until ctx is done. Failures
// are visible through Status and keep the last good keys.
func (r *RemoteKeys) Run(ctx context.Context) {
	t := time.NewTicker(r.opts.RefreshInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = r.Refresh(ctx)
		}
	}
}

// Status reports, for operators, how many keys are held, when they were
// fetched, and the error of the last fetch (nil if it worked).
func (r *RemoteKeys) Status() (keys int, fetched time.Time, lastErr error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.keys), r.fetched, r.lastErr
}

func (r *RemoteKeys) fetchLocked(ctx context.Context) error {
	r.lastFetch = r.opts.Now()
	keys, err := r.fetch(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastErr = err
	if err != nil {
		return err
	}
	r.keys = keys
	r.fetched = r.lastFetch
	return nil
}

func (r *RemoteKeys) fetch(ctx context.Context) (KeySet, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return nil, fmt.Errorf("jwks %s: %w", r.url, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := r.opts.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jwks %s: HTTP %s", r.url, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSSize+1))
	if err != nil {
		return nil, fmt.Errorf("jwks %s: reading body: %w", r.url, err)
	}
	if len(data) > maxJWKSSize {
		return nil, fmt.Errorf("jwks %s: larger than %d bytes", r.url, maxJWKSSize)
	}
	keys, err := ParseJWKS(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.url, err)
	}
	return keys, nil
}

// OpenKeys opens a JWKS given as an http(s) URL or a file path, as the
// --jwks flag of gds serve takes it. A URL is fetched once now, so a wrong
// URL fails at start-up rather than on the first request, then refreshed in
// the background until ctx is done.
func OpenKeys(ctx context.Context, source string, opts RemoteOptions) (Keys, error) {
	if !strings.HasPrefix(source, "http://") && !strings.HasPrefix(source, "https://") {
		return LoadJWKSFile(source)
	}
	r, err := NewRemoteKeys(source, opts)
	if err != nil {
		return nil, err
	}
	if err := r.Refresh(ctx); err != nil {
		return nil, err
	}
	go r.Run(ctx)
	return r, nil
}
