package main

import "strings"

// exception is a known difference from ESI's 2021-06 document that the
// interface gds implements requires; docs/api.md ("ESI conformance") says
// why for each.
type exception struct {
	label    string // version label, "" for any
	method   string
	template string
	contains string // a part of the violation's text
	why      string
}

var exceptions = []exception{
	{"", "get", "/characters/{character_id}/", `property "birthday" is missing`,
		"an agent (NPC character): the static data export has no birthday, gender, race or bloodline for NPC characters, and gds invents none"},
	{"legacy", "get", "/corporations/{corporation_id}/structures/", `property "state" is missing`,
		"the spec keeps v1 of the structures list, legacy only, in its old shape (current_vul and next_vul, no state or reinforce_*)"},
	{"v1", "get", "/corporations/{corporation_id}/structures/", `property "state" is missing`,
		"the spec keeps v1 of the structures list, legacy only, in its old shape (current_vul and next_vul, no state or reinforce_*)"},
}

// excepted returns why violation v of cl under label is a known exception,
// or "".
func excepted(label string, cl call, v string) string {
	for _, e := range exceptions {
		if (e.label == "" || e.label == label) && strings.EqualFold(e.method, cl.method) &&
			e.template == cl.template && strings.Contains(v, e.contains) {
			return e.why
		}
	}
	return ""
}
