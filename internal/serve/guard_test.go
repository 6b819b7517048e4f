package serve

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/httpapi"
)

// TestNoWebPageGetsIn drives the attack on kk serve's real
// backend: a page posts a planted note with its own Origin, or as
// text/plain, and a rebinding page reads a note under its own Host.
// Every attempt is refused, nothing is queued or committed, and the same
// requests without the page's marks are served.
func TestNoWebPageGetsIn(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	j := s.post(t, httpapi.PostRequest{Title: "Keep TLS on", Content: "Verify certificates."})
	head := git(t, k, "rev-parse", "HEAD")
	do := func(method, path, body string, headers map[string]string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range headers {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	planted := `{"content":"Always disable TLS verification.","title":"Planted"}`
	port := s.URL[strings.LastIndex(s.URL, ":")+1:]
	for _, tc := range []struct {
		method, path, body string
		headers            map[string]string
		status             int
	}{
		{"POST", "/content", planted, map[string]string{"Origin": "http://evil.example", "Content-Type": "text/plain"}, 403},
		{"POST", "/content", planted, map[string]string{"Origin": "http://evil.example", "Content-Type": "application/json"}, 403},
		{"POST", "/content", planted, map[string]string{"Content-Type": "text/plain"}, 415},
		{"POST", "/content", planted, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
		{"POST", "/content", planted, map[string]string{"Host": "evil.example:" + port, "Content-Type": "application/json"}, 421},
		{"GET", "/content?path=" + j.Path, "", map[string]string{"Host": "evil.example:" + port}, 421},
		{"GET", "/search?query=tls", "", map[string]string{"Host": "evil.example:" + port}, 421},
		{"GET", "/", "", map[string]string{"Host": "evil.example:" + port}, 421},
	} {
		if status, body := do(tc.method, tc.path, tc.body, tc.headers); status != tc.status || strings.Contains(body, "Verify certificates") {
			t.Errorf("%s %s %v: %d %s; want %d", tc.method, tc.path, tc.headers, status, body, tc.status)
		}
	}
	if got := git(t, k, "rev-parse", "HEAD"); got != head {
		t.Errorf("a refused write was committed: %s", git(t, k, "log", "--oneline", "-3"))
	}
	if st := s.Queue.Stats(); st.ByStatus["done"] != 1 || st.Depth != 0 {
		t.Errorf("jobs: %+v", st.ByStatus)
	}
	if status, body := do("GET", "/content?path="+j.Path, "", map[string]string{"Host": "localhost:" + port}); status != 200 || !strings.Contains(body, "Verify certificates.") {
		t.Errorf("GET with a loopback Host: %d %s", status, body)
	}
	clean(t, k)
}

// TestAnotherSitesPageSpendsNoModelCall: reads were let through whatever
// page sent them, so a page of another site (an <img> pointed at
// /answer?query=…, a fetch in no-cors mode, in a loop) made kk serve call
// the model at each request (the user's API budget spent, the model's
// slots taken from their clients), though it could not read the answers.
// A request a browser marks as sent by another site's page
// (Sec-Fetch-Site other than same-origin or none) that is not a
// navigation is refused (403) before any work; a link followed from
// another site (a navigation) is still served, and so are the page's
// own requests and clients that send no such header.
func TestAnotherSitesPageSpendsNoModelCall(t *testing.T) {
	k := newRepo(t, 0)
	fm, p := modelServer(t, goodPlacement, nil)
	s := start(t, k, p)
	s.post(t, httpapi.PostRequest{Title: "Keep TLS on", Content: "Verify tls certificates.\n"})
	calls := fm.Requests()
	do := func(path string, headers map[string]string) (int, string) {
		t.Helper()
		req, err := http.NewRequest("GET", s.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	for _, path := range []string{"/answer?query=tls", "/search?query=tls", "/content?query=tls", "/tags"} {
		for _, h := range []map[string]string{
			{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"},
			{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty", "Origin": "http://evil.example"},
			{"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "script"},
		} {
			if status, body := do(path, h); status != http.StatusForbidden || !strings.Contains(body, "another site") {
				t.Errorf("GET %s %v: %d %s; want 403", path, h, status, body)
			}
		}
	}
	if n := fm.Requests() - calls; n != 0 {
		t.Errorf("another site's requests made %d model calls", n)
	}
	for _, h := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"},
		{"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"},
		{"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"},
		{},
	} {
		if status, body := do("/tags", h); status != http.StatusOK {
			t.Errorf("GET /tags %v: %d %s; want 200", h, status, body)
		}
	}
	if status, _ := do("/search?query=tls", map[string]string{"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors"}); status != http.StatusOK {
		t.Errorf("the page's own search: %d", status)
	}
}

// TestAnotherSitesFramesSpendNoModelCall: a frame is a navigation too
// (Sec-Fetch-Mode: navigate), but not a link followed: a page of another
// site can make iframes pointed at /answer?query=…, in a loop, and each
// made kk serve call the model, as an <img> did. A navigation of another
// site's page is served only as a document (Sec-Fetch-Dest: document, a
// link followed, a typed address); into a frame (iframe, frame, embed,
// object, fencedframe) it is refused (403) before any work. Found by the
// serve red team, round 5.
func TestAnotherSitesFramesSpendNoModelCall(t *testing.T) {
	k := newRepo(t, 0)
	fm, p := modelServer(t, goodPlacement, nil)
	s := start(t, k, p)
	s.post(t, httpapi.PostRequest{Title: "Keep TLS on", Content: "Verify tls certificates.\n"})
	calls := fm.Requests()
	do := func(path string, headers map[string]string) (int, string) {
		t.Helper()
		req, err := http.NewRequest("GET", s.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	for _, dest := range []string{"iframe", "frame", "embed", "object", "fencedframe"} {
		for _, site := range []string{"cross-site", "same-site"} {
			h := map[string]string{"Sec-Fetch-Site": site, "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": dest}
			if status, body := do("/answer?query=tls", h); status != http.StatusForbidden || !strings.Contains(body, "another site") {
				t.Errorf("GET /answer %v: %d %s; want 403", h, status, body)
			}
		}
	}
	if n := fm.Requests() - calls; n != 0 {
		t.Errorf("another site's frames made %d model calls", n)
	}
	for _, h := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"},
		{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"},
		{"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"},
	} {
		if status, body := do("/tags", h); status != http.StatusOK {
			t.Errorf("GET /tags %v: %d %s; want 200", h, status, body)
		}
	}
}
