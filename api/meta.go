package api

import "github.com/gin-gonic/gin"

// registerMeta adds the routes about the API itself (swagger.json,
// status.json), generated from the route table.
func (s *server) registerMeta(e *gin.Engine) {}
