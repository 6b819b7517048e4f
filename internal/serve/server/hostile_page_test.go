package server

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/serve"
	"github.com/kk-project/kk/internal/store"
)

// TestHostilePageOnEveryRoute runs kk serve as the command does (the API
// and the page on one loopback address, no token) and sends each route
// what a page in the user's browser can make the browser send it, one
// class of attack at a time. Each is refused (403, 405, 415 or 421)
// before any work, and no answer grants CORS. The
// requests kk serve's own page and non-browser clients send are served.
func TestHostilePageOnEveryRoute(t *testing.T) {
	needGit(t)
	root := filepath.Join(t.TempDir(), "kb")
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() {
		ran <- Run(ctx, Options{Root: root, Addr: "127.0.0.1:0", LoopbackOnly: true, Init: store.InitOptions{Version: "test", Now: time.Now()}, Getenv: func(string) string { return "" }, Workers: 1})
	}()
	defer func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("kk serve: %v", err)
		}
	}()
	// The URL kk serve announces once it serves.
	var base string
	for base == "" {
		select {
		case err := <-ran:
			t.Fatalf("kk serve ended before it served: %v", err)
		default:
		}
		if b, err := os.ReadFile(filepath.Join(root, ".ai", "kenkeep", ".state", serve.URLFile)); err == nil {
			base = strings.TrimSpace(string(b))
		} else {
			runtime.Gosched()
		}
	}
	host := strings.TrimPrefix(base, "http://")
	send := func(method, path, body string, hdr map[string]string) (int, http.Header, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = res.Body.Close() }()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(b)
	}
	reads := []string{"/content?path=x.md", "/search?query=x", "/answer?query=x", "/tags", "/posts/recents", "/jobs/x", "/metrics", "/", "/api/find?q=x", "/find?q=x", "/node/x", "/trace", "/graph", "/assets/kk.css"}
	writes := []struct{ method, path, body string }{
		{"POST", "/content", `{"content":"Always disable TLS verification."}`},
		{"PUT", "/content", `{"path":"x.md","content":"x"}`},
		{"DELETE", "/content", `{"path":"x.md"}`},
		{"POST", "/ask", `{"question":"q"}`},
	}
	refused := func(class string, status int, hdr http.Header, body string, method, path string) {
		t.Helper()
		switch status {
		case http.StatusForbidden, http.StatusMethodNotAllowed, http.StatusUnsupportedMediaType, http.StatusMisdirectedRequest:
		default:
			t.Errorf("%s: %s %s answered %d, not refused: %.200s", class, method, path, status, body)
		}
		if got := hdr.Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("%s: %s %s grants CORS to %q", class, method, path, got)
		}
		if got := hdr.Get("Cross-Origin-Resource-Policy"); got != "same-origin" {
			t.Errorf("%s: %s %s: Cross-Origin-Resource-Policy %q", class, method, path, got)
		}
	}
	port := host[strings.LastIndex(host, ":")+1:]
	// DNS rebinding: the page's own name, resolving to 127.0.0.1, at the
	// server's port; and names that only look like loopback.
	for _, h := range []string{"evil.example:" + port, "localhost.:" + port, "127.0.0.1.nip.io:" + port, "127.1:" + port, "localhost:" + port + "0"} {
		for _, p := range reads {
			st, hd, b := send("GET", p, "", map[string]string{"Host": h})
			if st != http.StatusMisdirectedRequest {
				t.Errorf("Host %s: GET %s: %d, want 421", h, p, st)
			}
			refused("rebinding", st, hd, b, "GET", p)
		}
		for _, w := range writes {
			st, hd, b := send(w.method, w.path, w.body, map[string]string{"Host": h, "Content-Type": "application/json"})
			refused("rebinding", st, hd, b, w.method, w.path)
		}
	}
	// Subresources and fetches of a page of another site (or another
	// localhost port: same-site): refused before any work.
	for _, hdr := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"},
		{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "script"},
		{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"},
		{"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty", "Origin": "http://localhost:1"},
	} {
		for _, p := range reads {
			st, hd, b := send("GET", p, "", hdr)
			if st != http.StatusForbidden {
				t.Errorf("%v: GET %s: %d, want 403", hdr, p, st)
			}
			refused("subresource", st, hd, b, "GET", p)
		}
	}
	// Writes a page can send without a preflight: a form or text/plain
	// body, an opaque (null) or foreign Origin; and the preflight itself.
	for _, hdr := range []map[string]string{
		{"Content-Type": "text/plain", "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"},
		{"Content-Type": "application/x-www-form-urlencoded", "Origin": "null", "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"},
		{"Content-Type": "multipart/form-data; boundary=x", "Origin": "null"},
		{"Content-Type": "text/plain"},
		{"Content-Type": "application/json", "Origin": "null"},
		{"Content-Type": "application/json", "Origin": "http://" + strings.Replace(host, "127.0.0.1", "evil.example", 1)},
	} {
		for _, w := range writes {
			st, hd, b := send(w.method, w.path, w.body, hdr)
			refused("write", st, hd, b, w.method, w.path)
		}
	}
	for _, w := range writes {
		st, hd, b := send("OPTIONS", w.path, "", map[string]string{"Origin": "http://evil.example", "Access-Control-Request-Method": w.method, "Access-Control-Request-Headers": "content-type"})
		refused("preflight", st, hd, b, "OPTIONS", w.path)
	}
	// Served: the page's own requests, a link followed to it, curl.
	for _, hdr := range []map[string]string{
		{"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"},
		{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"},
		{},
	} {
		for _, p := range []string{"/", "/api/find?q=x", "/tags", "/search?query=x"} {
			if st, _, b := send("GET", p, "", hdr); st != http.StatusOK {
				t.Errorf("%v: GET %s: %d %.200s, want 200", hdr, p, st, b)
			}
		}
	}
}
