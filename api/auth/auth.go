// Package auth verifies EVE SSO v2 style access tokens: RS256 JWTs whose
// signing keys come from a JWKS (a file, a URL, or the key pair the service
// generates for local use), whose subject names a character and whose scp
// claim lists the scopes granted.
//
// Every error Verify returns means "this request is not authenticated" and
// maps to HTTP 401; its message says what to fix. The sentinel errors let the
// HTTP layer tell the cases apart with errors.Is when it wants to.
package auth

import (
	"context"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Why a token was refused. Verify wraps exactly one of these, with detail.
var (
	ErrMalformed     = errors.New("token is malformed")
	ErrExpired       = errors.New("token has expired")
	ErrNotYetValid   = errors.New("token is not valid yet")
	ErrAlgorithm     = errors.New("token signing algorithm is not accepted")
	ErrUnknownKey    = errors.New("token is signed by an unknown key")
	ErrBadSignature  = errors.New("token signature is invalid")
	ErrWrongIssuer   = errors.New("token issuer is not accepted")
	ErrWrongAudience = errors.New("token audience is not accepted")
	ErrBadSubject    = errors.New("token subject is not a character")
	ErrLifetime      = errors.New("token lifetime is too long")
)

// Algorithm is the only signing algorithm accepted, as EVE SSO signs with it.
const Algorithm = "RS256"

// maxTokenLen bounds the work done on outside input; EVE SSO tokens stay
// under 5 KiB even with every scope.
const maxTokenLen = 16 << 10

// EVEIssuers are the iss values EVE SSO puts in its tokens.
var EVEIssuers = []string{"login.eveonline.com", "https://login.eveonline.com"}

// EVEAudience is the audience every EVE SSO token carries besides the
// application's client ID.
const EVEAudience = "EVE Online"

// Defaults for tokens minted with the local key (gds token).
const (
	LocalIssuer   = "gds-local"
	LocalAudience = "gds"
)

// Claims is what a verified token says about its bearer.
type Claims struct {
	CharacterID int64
	// ClientID is the application the token was issued to: the azp claim,
	// or else the audience that is not EVEAudience (rate limits are kept
	// per application and character).
	ClientID string
	Scopes   []string
	Name     string
	Expiry   time.Time
}

// HasScope reports whether the token grants scope.
func (c Claims) HasScope(scope string) bool {
	return slices.Contains(c.Scopes, scope)
}

// Keys finds the public key that verifies tokens carrying kid. A lookup
// of an unknown kid returns an error wrapping ErrUnknownKey.
type Keys interface {
	Key(ctx context.Context, kid string) (*rsa.PublicKey, error)
}

// Config says which tokens a Verifier accepts.
type Config struct {
	// Issuers lists the accepted iss values; a token must carry one of them.
	Issuers []string
	// Audiences lists values that must all appear in the token's aud (EVE
	// SSO: the application's client ID and "EVE Online").
	Audiences []string
	// Leeway tolerates clock skew on exp and nbf. Keep it small (seconds).
	Leeway time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxLifetime refuses tokens valid for longer (exp after iat, or after
	// now); 0 means DefaultMaxLifetime.
	MaxLifetime time.Duration
}

// LocalConfig accepts the tokens `gds token` mints by default.
func LocalConfig() Config {
	return Config{Issuers: []string{LocalIssuer}, Audiences: []string{LocalAudience}}
}

// EVEConfig accepts tokens EVE SSO issues to the application clientID.
func EVEConfig(clientID string) Config {
	return Config{Issuers: slices.Clone(EVEIssuers), Audiences: []string{clientID, EVEAudience}}
}

// Verifier checks tokens against keys and a Config. It is safe for
// concurrent use.
type Verifier struct {
	keys   Keys
	cfg    Config
	parser *jwt.Parser
}

// maxLeeway keeps a misconfiguration from turning expiry into a suggestion.
const maxLeeway = 5 * time.Minute

// NewVerifier returns a Verifier, refusing a Config that would accept any
// issuer or any audience.
func NewVerifier(keys Keys, cfg Config) (*Verifier, error) {
	if keys == nil {
		return nil, errors.New("auth: no keys to verify tokens with")
	}
	if len(cfg.Issuers) == 0 || slices.Contains(cfg.Issuers, "") {
		return nil, errors.New("auth: at least one issuer is required and none may be empty")
	}
	if len(cfg.Audiences) == 0 || slices.Contains(cfg.Audiences, "") {
		return nil, errors.New("auth: at least one audience is required and none may be empty")
	}
	if cfg.Leeway < 0 || cfg.Leeway > maxLeeway {
		return nil, fmt.Errorf("auth: leeway must be between 0 and %v, got %v", maxLeeway, cfg.Leeway)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxLifetime < 0 {
		return nil, fmt.Errorf("auth: maximum token lifetime must not be negative, got %v", cfg.MaxLifetime)
	}
	if cfg.MaxLifetime == 0 {
		cfg.MaxLifetime = DefaultMaxLifetime
	}
	cfg.Issuers = slices.Clone(cfg.Issuers)
	cfg.Audiences = slices.Clone(cfg.Audiences)
	// Issuer, audience and subject are checked here rather than by the
	// parser, so each failure gets its own sentinel and message.
	p := jwt.NewParser(
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(cfg.Leeway),
		jwt.WithTimeFunc(cfg.Now),
		jwt.WithStrictDecoding(),
	)
	return &Verifier{keys: keys, cfg: cfg, parser: p}, nil
}

// tokenClaims is the JSON shape of an EVE SSO access token's payload.
type tokenClaims struct {
	jwt.RegisteredClaims
	Scopes scopes `json:"scp"`
	Name   string `json:"name,omitempty"`
	Azp    string `json:"azp,omitempty"`
}

// scopes is EVE SSO's scp claim: a single string when the token has one
// scope, an array of strings when it has several.
type scopes []string

func (s *scopes) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = scopes{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("scp must be a string or an array of strings")
	}
	*s = many
	return nil
}

// Verify checks token and returns its claims. ctx bounds a key refresh
// triggered by an unknown kid.
func (v *Verifier) Verify(ctx context.Context, token string) (Claims, error) {
	if token == "" {
		return Claims{}, fmt.Errorf("%w: empty token", ErrMalformed)
	}
	if len(token) > maxTokenLen {
		return Claims{}, fmt.Errorf("%w: longer than %d bytes", ErrMalformed, maxTokenLen)
	}
	if err := checkPayload(token); err != nil {
		return Claims{}, err
	}
	var tc tokenClaims
	// The keyfunc's own error carries the useful detail; the jwt library
	// would bury it in its wrapping.
	var keyErr error
	_, err := v.parser.ParseWithClaims(token, &tc, func(t *jwt.Token) (any, error) {
		keyErr = checkHeader(t)
		if keyErr != nil {
			return nil, keyErr
		}
		kid := t.Header["kid"].(string)
		k, err := v.keys.Key(ctx, kid)
		if err != nil {
			keyErr = err
			if !errors.Is(err, ErrUnknownKey) {
				keyErr = fmt.Errorf("%w: kid %q: %v", ErrUnknownKey, kid, err)
			}
		}
		return k, keyErr
	})
	if keyErr != nil {
		return Claims{}, keyErr
	}
	if err != nil {
		return Claims{}, classify(err, &tc)
	}
	if err := checkLifetime(&tc, v.cfg.Now(), v.cfg.MaxLifetime, v.cfg.Leeway); err != nil {
		return Claims{}, err
	}
	if !slices.Contains(v.cfg.Issuers, tc.Issuer) {
		return Claims{}, fmt.Errorf("%w: iss %q, want one of %q", ErrWrongIssuer, tc.Issuer, v.cfg.Issuers)
	}
	for _, want := range v.cfg.Audiences {
		if !slices.Contains(tc.Audience, want) {
			return Claims{}, fmt.Errorf("%w: aud %q does not include %q", ErrWrongAudience, []string(tc.Audience), want)
		}
	}
	id, err := ParseSubject(tc.Subject)
	if err != nil {
		return Claims{}, err
	}
	return Claims{
		CharacterID: id,
		ClientID:    clientID(&tc),
		Scopes:      slices.Clip([]string(tc.Scopes)),
		Name:        tc.Name,
		Expiry:      tc.ExpiresAt.Time.UTC(),
	}, nil
}

// clientID is the token's application: azp, as EVE SSO writes it, or the
// first audience besides EVEAudience.
func clientID(tc *tokenClaims) string {
	if tc.Azp != "" {
		return tc.Azp
	}
	for _, a := range tc.Audience {
		if a != EVEAudience {
			return a
		}
	}
	return ""
}

// checkHeader checks what the header must say before a key is looked up.
func checkHeader(t *jwt.Token) error {
	// Checked here, not with WithValidMethods, so a wrong alg gets its own
	// error. Pinning the method type also rules out "none" and HS256 keyed
	// with the public key.
	if m, ok := t.Method.(*jwt.SigningMethodRSA); !ok || m.Alg() != Algorithm {
		return fmt.Errorf("%w: alg %q, only %s is accepted", ErrAlgorithm, t.Method.Alg(), Algorithm)
	}
	if kid, _ := t.Header["kid"].(string); kid == "" {
		return fmt.Errorf("%w: the header has no kid", ErrUnknownKey)
	}
	return nil
}

// classify maps the jwt library's errors onto this package's sentinels
// with a message that says what is wrong; tc holds whatever claims decoded.
func classify(err error, tc *tokenClaims) error {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return fmt.Errorf("%w: %s", ErrMalformed, strings.TrimPrefix(err.Error(), jwt.ErrTokenMalformed.Error()+": "))
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		// The alg header is missing or names no method the library knows.
		return fmt.Errorf("%w: %s", ErrAlgorithm, strings.TrimPrefix(err.Error(), jwt.ErrTokenUnverifiable.Error()+": "))
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return fmt.Errorf("%w: it was not made by the key its kid names", ErrBadSignature)
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return fmt.Errorf("%w: the exp claim is required", ErrMalformed)
	case errors.Is(err, jwt.ErrTokenExpired) && tc.ExpiresAt != nil:
		return fmt.Errorf("%w at %s; get a new access token", ErrExpired, tc.ExpiresAt.UTC().Format(time.RFC3339))
	case errors.Is(err, jwt.ErrTokenNotValidYet) && tc.NotBefore != nil:
		return fmt.Errorf("%w: usable from %s (nbf)", ErrNotYetValid, tc.NotBefore.UTC().Format(time.RFC3339))
	}
	// A claim of the wrong type, or anything the library adds later.
	return fmt.Errorf("%w: %v", ErrMalformed, err)
}

// subjectPrefix starts the sub claim of every EVE SSO character token.
const subjectPrefix = "CHARACTER:EVE:"

// ParseSubject returns the character ID of a sub claim
// "CHARACTER:EVE:<positive integer>".
func ParseSubject(sub string) (int64, error) {
	digits, ok := strings.CutPrefix(sub, subjectPrefix)
	if !ok {
		return 0, fmt.Errorf("%w: sub %q, want %s<character id>", ErrBadSubject, sub, subjectPrefix)
	}
	// ParseInt alone would accept "+7" and "007"; IDs are written plainly.
	if digits == "" || digits[0] == '0' || strings.Trim(digits, "0123456789") != "" {
		return 0, fmt.Errorf("%w: sub %q does not end in a positive integer", ErrBadSubject, sub)
	}
	id, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: sub %q: character id out of range", ErrBadSubject, sub)
	}
	return id, nil
}
