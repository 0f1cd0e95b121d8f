package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gds/api/auth"
)

func init() { register("token", "mint a signed test token for the local signing key", runToken) }

// runToken prints a token for the data directory's signing key (made on
// first use), so the authenticated routes can be tried without EVE SSO.
// Only the token goes to stdout: TOKEN=$(gds token ...) just works.
func runToken(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "token", "--data DIR --character ID [--scopes a,b] [--ttl 20m] [--issuer ISS] [--audience AUD[,AUD]] [--name NAME]")
	data := fs.String("data", "", "data directory holding the local signing key (created if missing)")
	character := fs.Int64("character", 0, "character ID the token is for (sub CHARACTER:EVE:<ID>)")
	scopes := fs.String("scopes", "", "comma-separated scopes, e.g. esi-search.search_structures.v1")
	ttl := fs.Duration("ttl", auth.DefaultTTL, "lifetime of the token")
	issuer := fs.String("issuer", auth.LocalIssuer, "iss claim")
	audience := fs.String("audience", auth.LocalAudience, "aud claim, comma-separated for several")
	name := fs.String("name", "", "character name to put in the token (optional)")
	if err := parseOnlyFlags(env, fs, args); err != nil {
		return err
	}
	if err := requireFlags(fs, "data"); err != nil {
		return err
	}
	if *character <= 0 {
		return errors.New("token: --character must be a positive character ID")
	}
	if *ttl <= 0 {
		return fmt.Errorf("token: --ttl must be positive, got %v", *ttl)
	}
	// A closure, not a package function: other commands share this package.
	split := func(s string) []string {
		var out []string
		for part := range strings.SplitSeq(s, ",") {
			if p := strings.TrimSpace(part); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	aud := split(*audience)
	if len(aud) == 0 || strings.TrimSpace(*issuer) == "" {
		return errors.New("token: --issuer and --audience must not be empty")
	}
	key, err := auth.EnsureLocalKey(*data)
	if err != nil {
		return fmt.Errorf("token: %w", err)
	}
	tok, err := auth.Mint(key, auth.MintOptions{
		CharacterID: *character,
		Scopes:      split(*scopes),
		TTL:         *ttl,
		Issuer:      strings.TrimSpace(*issuer),
		Audience:    aud,
		Name:        *name,
		Now:         time.Now(),
	})
	if err != nil {
		return fmt.Errorf("token: %w", err)
	}
	_, err = fmt.Fprintln(env.Stdout, tok)
	return err
}
