package deps
import (
 _ "github.com/blevesearch/bleve/v2"
 _ "github.com/gin-gonic/gin"
 _ "github.com/robfig/cron/v3"
 _ "github.com/rs/zerolog"
 _ "github.com/prometheus/client_golang/prometheus"
 _ "github.com/golang-jwt/jwt/v5"
 _ "gopkg.in/yaml.v3"
 _ "golang.org/x/text/cases"
 _ "github.com/RoaringBitmap/roaring/v2"
 _ "github.com/getkin/kin-openapi/openapi3"
 _ "github.com/jackc/pgx/v5"
 _ "golang.org/x/term"
)
