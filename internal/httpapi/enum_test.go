package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestUnknownEnumValuesAre400: a query parameter that takes one of a few
// values (mode: raw or synthesize; match: any or all) given another.
// Found by the serve10 red team: /search?query=x&mode=bogus answered as
// if mode were absent (so did mode on a tag search, match on a query
// search, and mode on /content?path=), and a client's typo
// (mode=rwa) silently gave another answer than the one asked for. Every
// value of the parameter, on every route that takes it, is checked: a
// 400 names the parameter and its values. The values knowledged's
// clients send (kc: mode=raw, match=any|all; mcp-knowledged: mode
// synthesize|raw) are taken, in any case.
func TestUnknownEnumValuesAre400(t *testing.T) {
	s := start(t, newRepo(t), nil, "")
	const mode, match = `mode must be "raw" or "synthesize"`, `match must be "any" or "all"`
	for _, tc := range []struct {
		path   string
		status int
		err    string
	}{
		{"/search?query=x&mode=bogus", 400, mode},
		{"/search?tag=a&mode=bogus", 400, mode},
		{"/search?tags=a,b&mode=", 200, ""},
		{"/search?query=x&mode=raw&mode=bogus", 400, mode},
		{"/search?query=x&match=bogus", 400, match},
		{"/search?tag=a&match=ALL&mode=RAW", 200, ""},
		{"/search?tag=a&mode=synthesize", 200, ""},
		{"/search?query=x&mode=raw&match=any", 200, ""},
		{"/content?path=a.md&mode=bogus", 400, mode},
		{"/content?query=x&mode=bogus", 400, mode},
	} {
		r := s.do("GET", tc.path, "")
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal([]byte(r.body), &e)
		if r.status != tc.status || e.Error != tc.err {
			t.Errorf("GET %s: %d %s; want %d %q", tc.path, r.status, strings.TrimSpace(r.body), tc.status, tc.err)
		}
	}
}
