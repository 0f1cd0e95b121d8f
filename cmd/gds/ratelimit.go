package main

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"gds/api"
	"gds/api/clientip"
	"gds/api/ratelimit"
)

// rateLimitFlag is --rate-limit: repeatable, each a comma list of
// GROUP=N/WINDOW, or "off".
type rateLimitFlag struct {
	spec ratelimit.Spec
	set  []string
}

func (f *rateLimitFlag) String() string { return strings.Join(f.set, ",") }

func (f *rateLimitFlag) Set(v string) error {
	s, err := parseRateLimits(v)
	if err != nil {
		return err
	}
	if f.spec.Off || (s.Off && len(f.spec.Groups) > 0) {
		return errors.New("off turns every rate limit off and takes no group budgets")
	}
	if f.spec.Groups == nil {
		f.spec.Groups = map[string]ratelimit.Limit{}
	}
	for g, l := range s.Groups {
		if _, dup := f.spec.Groups[g]; dup {
			return fmt.Errorf("rate limit for group %q given twice", g)
		}
		f.spec.Groups[g] = l
	}
	f.spec.Off = s.Off
	f.set = append(f.set, v)
	return nil
}

// parseRateLimits reads one --rate-limit value and checks that its groups
// are the route table's.
func parseRateLimits(v string) (ratelimit.Spec, error) {
	s, err := ratelimit.ParseSpec(v)
	if err != nil {
		return s, err
	}
	known := api.RateLimitGroups()
	for g := range s.Groups {
		if _, ok := known[g]; !ok {
			return s, fmt.Errorf("unknown rate-limit group %q (groups: %s)", g,
				strings.Join(slices.Sorted(maps.Keys(known)), ", "))
		}
	}
	return s, nil
}

// proxiesFlag is --trusted-proxies.
type proxiesFlag struct{ r clientip.Resolver }

func (f *proxiesFlag) String() string { return f.r.String() }

func (f *proxiesFlag) Set(v string) error {
	r, err := clientip.Parse(v)
	f.r = r
	return err
}

// addRateLimitFlags declares --rate-limit and --trusted-proxies on fs.
func addRateLimitFlags(fs *flag.FlagSet, rl *rateLimitFlag, proxies *proxiesFlag) {
	var defaults []string
	for _, g := range slices.Sorted(maps.Keys(api.RateLimitGroups())) {
		defaults = append(defaults, g+"="+api.RateLimitGroups()[g].String())
	}
	fs.Var(rl, "rate-limit", "GROUP=TOKENS/WINDOW[,...] replaces a rate-limit group's budget (repeatable), or off; "+
		"defaults: "+strings.Join(defaults, ", "))
	fs.Var(proxies, "trusted-proxies", "CIDR[,...] of load balancers whose X-Forwarded-For names the client (default: none, the TCP peer is the client)")
}
