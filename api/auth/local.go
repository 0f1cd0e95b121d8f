package auth

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"gds/snapshots/disk"
)

// Files of the local signing key in the data directory.
const (
	// LocalKeyFile is the private key, PKCS #8 PEM, readable by the owner only.
	LocalKeyFile = "signing-key.pem"
	// LocalJWKSFile is its public half as a JWKS, for anyone verifying tokens.
	LocalJWKSFile = "jwks.json"
)

// DefaultTTL is how long minted tokens live unless told otherwise; EVE SSO
// access tokens live 20 minutes too.
const DefaultTTL = 20 * time.Minute

// SigningKey is an RSA private key and the kid its tokens carry.
type SigningKey struct {
	ID      string
	Private *rsa.PrivateKey
}

// NewSigningKey names priv by its RFC 7638 thumbprint.
func NewSigningKey(priv *rsa.PrivateKey) SigningKey {
	return SigningKey{ID: Thumbprint(&priv.PublicKey), Private: priv}
}

// KeySet is the public half, to verify what this key signs.
func (k SigningKey) KeySet() KeySet {
	return KeySet{k.ID: &k.Private.PublicKey}
}

// EnsureLocalKey returns the data directory's signing key, creating an
// RSA-2048 key pair the first time: the private key in LocalKeyFile (mode
// 0600) and the public JWKS in LocalJWKSFile, both written atomically. The
// JWKS is rewritten whenever it does not match the private key, so it heals
// if deleted or left stale.
func EnsureLocalKey(dataDir string) (SigningKey, error) {
	if err := os.MkdirAll(dataDir, disk.PrivateDir); err != nil {
		return SigningKey{}, fmt.Errorf("local signing key: %w", err)
	}
	keyPath := filepath.Join(dataDir, LocalKeyFile)
	priv, err := readPrivateKey(keyPath)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createPrivateKey(keyPath); err != nil {
			return SigningKey{}, err
		}
		// Read back what is on disk: if another gds process created a key at
		// the same moment, the one whose rename landed last is the key.
		priv, err = readPrivateKey(keyPath)
	}
	if err != nil {
		return SigningKey{}, err
	}
	key := NewSigningKey(priv)
	jwks, err := MarshalJWKS(key.KeySet())
	if err != nil {
		return SigningKey{}, err
	}
	jwksPath := filepath.Join(dataDir, LocalJWKSFile)
	if old, err := os.ReadFile(jwksPath); err != nil || !bytes.Equal(old, jwks) {
		if err := disk.WriteFileAtomic(jwksPath, jwks, disk.PrivateFile); err != nil {
			return SigningKey{}, fmt.Errorf("local signing key: writing %s: %w", jwksPath, err)
		}
	}
	return key, nil
}

func createPrivateKey(path string) error {
	priv, err := rsa.GenerateKey(rand.Reader, minKeyBits)
	if err != nil {
		return fmt.Errorf("local signing key: generating: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return fmt.Errorf("local signing key: encoding: %w", err)
	}
	data := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	if err := disk.WriteFileAtomic(path, data, disk.PrivateFile); err != nil {
		return fmt.Errorf("local signing key: writing %s: %w", path, err)
	}
	return nil
}

// readPrivateKey reads an RSA private key in PKCS #8 or PKCS #1 PEM.
func readPrivateKey(path string) (*rsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%s: no PEM block; delete the file to have a new key made", path)
	}
	var parsed any
	switch block.Type {
	case "PRIVATE KEY":
		parsed, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		parsed, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("%s: PEM block %q is not a private key", path, block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	priv, ok := parsed.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: %T is not an RSA key; tokens are signed with %s", path, parsed, Algorithm)
	}
	if priv.N.BitLen() < minKeyBits {
		return nil, fmt.Errorf("%s: %d-bit key, at least %d bits required", path, priv.N.BitLen(), minKeyBits)
	}
	return priv, nil
}

// MintOptions describe a token to mint; zero values take the defaults.
type MintOptions struct {
	CharacterID int64
	Scopes      []string
	// TTL is the token's lifetime (default DefaultTTL).
	TTL time.Duration
	// ClientID is the azp claim, the application the token was issued to
	// (default none: the audience names the application).
	ClientID string
	// Issuer is the iss claim (default LocalIssuer).
	Issuer string
	// Audience is the aud claim (default LocalAudience alone).
	Audience []string
	// Name is the character's name, as EVE SSO puts it in the token.
	Name string
	// Now is the issue time (default the current time).
	Now time.Time
}

// Mint returns a token signed by key, shaped like an EVE SSO access token.
func Mint(key SigningKey, o MintOptions) (string, error) {
	if key.Private == nil || key.ID == "" {
		return "", errors.New("mint: no signing key")
	}
	if o.CharacterID <= 0 {
		return "", fmt.Errorf("mint: character id must be a positive integer, got %d", o.CharacterID)
	}
	if o.TTL < 0 {
		return "", fmt.Errorf("mint: ttl must not be negative, got %v", o.TTL)
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.Issuer == "" {
		o.Issuer = LocalIssuer
	}
	if len(o.Audience) == 0 {
		o.Audience = []string{LocalAudience}
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	// JWT times are whole seconds; truncating keeps exp exactly Now+TTL.
	now := o.Now.UTC().Truncate(time.Second)
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", fmt.Errorf("mint: %w", err)
	}
	claims := jwt.MapClaims{
		"sub": subjectPrefix + strconv.FormatInt(o.CharacterID, 10),
		"iss": o.Issuer,
		"aud": o.Audience,
		"iat": now.Unix(),
		"exp": now.Add(o.TTL).Unix(),
		"jti": hex.EncodeToString(jti),
	}
	// Like EVE SSO: one scope is a string, several an array, none absent.
	switch len(o.Scopes) {
	case 0:
	case 1:
		claims["scp"] = o.Scopes[0]
	default:
		claims["scp"] = o.Scopes
	}
	if o.Name != "" {
		claims["name"] = o.Name
	}
	if o.ClientID != "" {
		claims["azp"] = o.ClientID
	}
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	t.Header["kid"] = key.ID
	s, err := t.SignedString(key.Private)
	if err != nil {
		return "", fmt.Errorf("mint: signing: %w", err)
	}
	return s, nil
}
