package api

import "testing"

func TestGinPath(t *testing.T) {
	for in, want := range map[string]string{
		"/characters/{character_id}/search/": "/characters/:character_id/search/",
		"/search/":                           "/search/",
		"/corporations/{corporation_id}/wallets/{division}/journal/": "/corporations/:corporation_id/wallets/:division/journal/",
	} {
		if got := ginPath(in); got != want {
			t.Errorf("ginPath(%q) = %q, want %q", in, got, want)
		}
	}
}
