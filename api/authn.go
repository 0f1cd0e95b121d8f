package api

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"gds/api/auth"
)

// ScopeSearchStructures is the scope the character search route requires.
const ScopeSearchStructures = "esi-search.search_structures.v1"

// authorize authenticates the request's bearer token and checks that it
// speaks for character (0: any character) and grants scope ("": none
// needed). On failure it writes the 401 or 403 itself and reports false.
func (s *server) authorize(c *gin.Context, character int64, scope string) (auth.Claims, bool) {
	claims, err := s.authenticate(c)
	if err != nil {
		// RFC 6750: a 401 for a bearer-token route names the scheme.
		c.Header("WWW-Authenticate", `Bearer error="invalid_token"`)
		writeError(c, http.StatusUnauthorized, err.Error())
		return auth.Claims{}, false
	}
	if character != 0 && claims.CharacterID != character {
		writeError(c, http.StatusForbidden, fmt.Sprintf("token is for character %d, not %d", claims.CharacterID, character))
		return auth.Claims{}, false
	}
	if scope != "" && !claims.HasScope(scope) {
		writeError(c, http.StatusForbidden, fmt.Sprintf("token does not grant the scope %s", scope))
		return auth.Claims{}, false
	}
	return claims, true
}

// authenticate returns the claims of the request's token; every error
// means 401 and its message (from the auth sentinels) says what to fix.
// The outcome is kept on the request: the rate limiter reads the token
// before the handler does.
func (s *server) authenticate(c *gin.Context) (auth.Claims, error) {
	if v, ok := c.Get(ctxAuth); ok {
		a := v.(authResult)
		return a.claims, a.err
	}
	claims, err := s.verifyToken(c)
	c.Set(ctxAuth, authResult{claims, err})
	return claims, err
}

// ctxAuth holds the request's authResult once its token was verified.
const ctxAuth = "gds.auth"

type authResult struct {
	claims auth.Claims
	err    error
}

func (s *server) verifyToken(c *gin.Context) (auth.Claims, error) {
	token, err := auth.TokenFromRequest(c.Request)
	if err != nil {
		return auth.Claims{}, err
	}
	if s.d.Tokens == nil {
		// A server started without a key source accepts no token rather
		// than every token.
		return auth.Claims{}, fmt.Errorf("%w: this server has no keys to verify tokens with", auth.ErrUnknownKey)
	}
	return s.d.Tokens.Verify(c.Request.Context(), token)
}
