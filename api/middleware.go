package api

import "github.com/gin-gonic/gin"

// middleware is what runs before every route of the public API, outermost
// first: metrics see every answer (420s too), the error limiter counts
// what the client finally gets (size refusals too), and compression wraps
// the body last.
func (s *server) middleware() []gin.HandlerFunc {
	return []gin.HandlerFunc{
		s.observe,
		s.errs.handle,
		s.requestLimits,
		compress,
	}
}
