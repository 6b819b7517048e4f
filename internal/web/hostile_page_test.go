package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHostilePage sends kk browse's handler the requests a page of
// another site can make the user's browser send to it: subresource loads
// (fetch in no-cors mode, <img>, <script>, <iframe>) carry the browser's
// Sec-Fetch-Site: cross-site or same-site (a page on another localhost
// port), and were served, each running its search: the page cannot read
// the answer, but it can time it (cross-site search) and make kk work in a
// loop. They are refused before any work, as kk serve refuses them; a link
// followed to the page (a top-level navigation) and the page's own
// requests are served. Every answer says Cross-Origin-Resource-Policy:
// same-origin, and Host tricks aimed at the loopback check are refused.
func TestHostilePage(t *testing.T) {
	h := New(fixture(t), Options{LoopbackOnly: true})
	send := func(target, host string, hdr map[string]string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", target, nil)
		req.Host = host
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	const host = "127.0.0.1:8080"
	sub := map[string]map[string]string{
		"fetch no-cors":        {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "empty"},
		"img":                  {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"},
		"script":               {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "script"},
		"iframe":               {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"},
		"other localhost port": {"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"},
		"cors fetch":           {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty", "Origin": "https://evil.example"},
	}
	targets := []string{"/", "/api/find?q=retry", "/find?q=retry", "/node/req-login", "/trace", "/graph", "/folder/go", "/assets/kk.css"}
	for name, hdr := range sub {
		for _, target := range targets {
			w := send(target, host, hdr)
			if w.Code != http.StatusForbidden {
				t.Errorf("%s %s: status %d, want 403", name, target, w.Code)
			}
			if strings.Contains(w.Body.String(), "req-login") || strings.Contains(w.Body.String(), "backoff") {
				t.Errorf("%s %s: the answer holds the knowledge base:\n%.300s", name, target, w.Body.String())
			}
			if got := w.Header().Get("Access-Control-Allow-Origin"); got != "" {
				t.Errorf("%s %s: Access-Control-Allow-Origin %q", name, target, got)
			}
		}
	}
	// Served: the page's own requests, a link followed from another site,
	// an address typed, and clients that are not browsers.
	served := map[string]map[string]string{
		"own fetch":     {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"},
		"link followed": {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"},
		"typed address": {"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"},
		"curl":          {},
	}
	for name, hdr := range served {
		for _, target := range targets {
			w := send(target, host, hdr)
			if w.Code != http.StatusOK {
				t.Errorf("%s %s: status %d, want 200", name, target, w.Code)
			}
			if got := w.Header().Get("Cross-Origin-Resource-Policy"); got != "same-origin" {
				t.Errorf("%s %s: Cross-Origin-Resource-Policy %q, want same-origin", name, target, got)
			}
		}
	}
	// Host tricks: names that resolve anywhere, numeric forms a resolver
	// may read as loopback, a trailing dot, user info.
	for _, bad := range []string{"localhost.:8080", "localhost.evil.example", "127.1:8080", "2130706433:8080", "0x7f000001", "127.0.0.1:8080@evil.example", "evil.example#127.0.0.1", ""} {
		if w := send("/api/find?q=retry", bad, nil); w.Code != http.StatusMisdirectedRequest {
			t.Errorf("Host %q: status %d, want 421", bad, w.Code)
		}
	}
}
