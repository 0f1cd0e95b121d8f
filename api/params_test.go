package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

// paramContext is a gin context for rawQuery with one path parameter.
func paramContext(rawQuery, name, value string) (*gin.Context, *httptest.ResponseRecorder) {
	gin.SetMode(gin.ReleaseMode) // as New does; debug mode only adds noise
	rec := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(rec)
	c.Request = httptest.NewRequest(http.MethodGet, "/", nil)
	c.Request.URL.RawQuery = rawQuery
	if name != "" {
		c.Params = gin.Params{{Key: name, Value: value}}
	}
	return c, rec
}

func TestParseID(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want int64
		ok   bool
	}{
		{"1", 1, true},
		{"2112000001", 2112000001, true},
		{"1000000000001", 1000000000001, true},
		{"9007199254740992", 1 << 53, true},
		{"9007199254740993", 0, false},
		{"0", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"01", 0, false},
		{"", 0, false},
		{"1e3", 0, false},
		{"0x10", 0, false},
		{"12a", 0, false},
		{"١٢", 0, false},
		{"99999999999999999999999", 0, false},
	} {
		c, rec := paramContext("", "structure_id", tc.raw)
		got, ok := parseID(c, "structure_id")
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseID(%q) = %d, %v, want %d, %v", tc.raw, got, ok, tc.want, tc.ok)
		}
		if !ok {
			if rec.Code != http.StatusBadRequest || !strings.HasPrefix(errorOf(t, rec), "structure_id: must be a positive integer up to 9007199254740992, got ") {
				t.Errorf("parseID(%q): %d %s", tc.raw, rec.Code, rec.Body)
			}
		}
	}
}

func TestParsePage(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  int
		ok    bool
		msg   string
	}{
		{"", 1, true, ""},
		{"page=1", 1, true, ""},
		{"page=7", 7, true, ""},
		{"page=2147483647", 2147483647, true, ""},
		{"page=2147483648", 0, false, `page: must be an integer from 1 to 2147483647, got "2147483648"`},
		{"page=0", 0, false, `page: must be an integer from 1 to 2147483647, got "0"`},
		{"page=-2", 0, false, `page: must be an integer from 1 to 2147483647, got "-2"`},
		{"page=%2B2", 0, false, `page: must be an integer from 1 to 2147483647, got "+2"`},
		{"page=+2", 0, false, `page: must be an integer from 1 to 2147483647, got " 2"`},
		{"page=", 0, false, `page: must be an integer from 1 to 2147483647, got ""`},
		{"page=two", 0, false, `page: must be an integer from 1 to 2147483647, got "two"`},
		{"page=1&page=2", 0, false, "page: given 2 times, send it once"},
	} {
		c, rec := paramContext(tc.query, "", "")
		got, ok := parsePage(c)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%q: %d, %v, want %d, %v", tc.query, got, ok, tc.want, tc.ok)
		}
		if !ok && errorOf(t, rec) != tc.msg {
			t.Errorf("%q: %q, want %q", tc.query, errorOf(t, rec), tc.msg)
		}
	}
}

func TestParseDatasourceAndBool(t *testing.T) {
	for q, ok := range map[string]bool{
		"": true, "datasource=tranquility": true, "datasource=": false, "datasource=Tranquility": false,
		"datasource=serenity": false, "datasource=tranquility&datasource=tranquility": false,
	} {
		c, _ := paramContext(q, "", "")
		if got := parseDatasource(c); got != ok {
			t.Errorf("parseDatasource(%q) = %v", q, got)
		}
	}
	for _, tc := range []struct {
		query    string
		def      bool
		want, ok bool
	}{
		{"", true, true, true}, {"", false, false, true}, {"strict=true", false, true, true},
		{"strict=false", true, false, true}, {"strict=1", false, false, false}, {"strict=TRUE", false, false, false},
	} {
		c, _ := paramContext(tc.query, "", "")
		if got, ok := parseBool(c, "strict", tc.def); got != tc.want || ok != tc.ok {
			t.Errorf("parseBool(%q, %v) = %v, %v", tc.query, tc.def, got, ok)
		}
	}
}

func TestAcceptLanguage(t *testing.T) {
	for _, tc := range []struct {
		headers []string
		want    string
	}{
		{nil, "en"},
		{[]string{""}, "en"},
		{[]string{"de"}, "de"},
		{[]string{"DE"}, "de"},
		{[]string{"en-US"}, "en"},
		{[]string{"en-GB, de;q=0.9"}, "en"},
		{[]string{"de-AT"}, "de"},
		{[]string{"zh-Hans-CN;q=0.8, ko;q=0.3"}, "zh"},
		{[]string{"zh-TW"}, "zh"},
		// The matcher does not take Traditional for the Simplified zh
		// when the client names a language it also reads.
		{[]string{"zh-Hant-TW;q=0.8, ko;q=0.3"}, "ko"},
		{[]string{"gsw"}, "de"}, // Swiss German reads German
		{[]string{"nl, de;q=0.5"}, "de"},
		{[]string{"fr;q=0.5", "ru;q=0.6"}, "ru"},
		{[]string{"es;q=0.5, ja;q=0.5"}, "es"},
		{[]string{"*"}, "en"},
		{[]string{"*, ja;q=0.1"}, "ja"},
		{[]string{"de;q=2"}, "en"},
		{[]string{"de;q=-1, fr"}, "fr"},
		{[]string{"de ;q=0.7 , fr;q=0.6"}, "de"},
		{[]string{"de;Q = 0.7 , fr;q=0.6"}, "fr"}, // a malformed weight drops its range only
		{[]string{"en;q=0.5, de-DE;q=0.9, xx;q=1"}, "de"},
		{[]string{"de;q=0"}, "en"},
		{[]string{"tlh, x-klingon"}, "en"},
		{[]string{";;;,,,=;q="}, "en"},
		{[]string{strings.Repeat("xx,", 40) + "de"}, "en"}, // beyond the ranges looked at
	} {
		if got := acceptLanguage(tc.headers); got != tc.want {
			t.Errorf("acceptLanguage(%q) = %q, want %q", tc.headers, got, tc.want)
		}
	}
}

func TestParseLanguage(t *testing.T) {
	for _, tc := range []struct {
		query, header, want string
		ok                  bool
	}{
		{"", "", "en", true},
		{"language=de", "ja", "de", true},
		{"language=en-us", "ja", "en", true},
		{"language=zh", "", "zh", true},
		{"", "ja", "ja", true},
		{"language=EN", "", "", false},
		{"language=de-de", "", "", false},
		{"language=", "de", "", false},
		{"language=de&language=fr", "", "", false},
	} {
		c, rec := paramContext(tc.query, "", "")
		c.Request.Header.Set("Accept-Language", tc.header)
		got, ok := parseLanguage(c)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%q / %q: %q, %v, want %q, %v", tc.query, tc.header, got, ok, tc.want, tc.ok)
		}
		if !ok && rec.Code != http.StatusBadRequest {
			t.Errorf("%q: status %d", tc.query, rec.Code)
		}
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"abc":                    `"abc"`,
		"a\x00b":                 `"a\x00b"`,
		"\xff":                   `"\xff"`,
		strings.Repeat("é", 40):  `"` + strings.Repeat("é", 32) + `"…`,
		strings.Repeat("a", 100): `"` + strings.Repeat("a", 64) + `"…`,
	} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// A handler stops at the first bad parameter: one answer, one message.
func TestOneErrorPerRequest(t *testing.T) {
	c, rec := paramContext("search=a&categories=foo&strict=maybe", "", "")
	if _, ok := parseSearchRequest(c, publicCategories); ok {
		t.Fatal("accepted")
	}
	if got := rec.Body.String(); got != `{"error":"search: must be at least 3 characters","status":400,`+
		`"details":[{"location":"query.search","message":"must be at least 3 characters","value":"a"}]}` {
		t.Errorf("body %s", got)
	}
}
