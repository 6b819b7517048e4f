package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:0": "127.0.0.1:0", "127.0.0.1:8080": "127.0.0.1:8080", "localhost:9": "127.0.0.1:9",
		"LocalHost:0": "127.0.0.1:0", "[::1]:0": "[::1]:0", "127.1.2.3:80": "127.1.2.3:80",
		"0.0.0.0:0": "", ":8080": "", "[::]:0": "", "10.0.0.1:80": "", "example.com:80": "", "127.0.0.1": "", "localhost.evil.example:1": "",
	} {
		got, err := loopbackAddr(addr)
		if want == "" {
			var u *UsageError
			if !errors.As(err, &u) {
				t.Errorf("%s: %q, %v; want a usage error", addr, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", addr, got, err, want)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for one writer and one reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startBrowse runs kk browse with args in dir until the returned stop is
// called, and returns what it printed on stdout once ready says it is
// complete.
func startBrowse(t *testing.T, dir string, ready func(stdout string) bool, args ...string) (stdout string, stop func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, append([]string{"browse"}, args...), IO{In: strings.NewReader(""), Out: &out, Err: &errb},
			func(k string) string {
				if k == "KK_ROOT" {
					return dir
				}
				return ""
			})
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !ready(out.String()) {
		select {
		case code := <-done:
			cancel()
			t.Fatalf("kk browse exited %d: %s", code, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("kk browse printed nothing in 20s; stderr: %s", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return out.String(), func() (int, string) {
		cancel()
		select {
		case code := <-done:
			return code, errb.String()
		case <-time.After(10 * time.Second):
			t.Fatal("kk browse did not stop within 10s of its context ending")
			return -1, ""
		}
	}
}

func httpDo(t *testing.T, method, url, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestBrowseServesAndStops(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := run(t, dir, "", "init"); code != 0 {
		t.Fatalf("init: %d %s", code, errs)
	}
	if code, _, errs := run(t, dir, "Wrap every error.\n", "node", "write", "practice", "Wrap errors", "--summary", "Wrap them"); code != 0 {
		t.Fatalf("node write: %d %s", code, errs)
	}
	url, stop := startBrowse(t, dir, func(s string) bool { return strings.HasSuffix(s, "\n") })
	url = strings.TrimSpace(url)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/") {
		t.Fatalf("printed %q, want http://127.0.0.1:PORT/", url)
	}
	if code, body := httpDo(t, "GET", url, ""); code != 200 || !strings.Contains(body, "Wrap errors") {
		t.Errorf("GET /: %d %s", code, body)
	}
	if code, body := httpDo(t, "GET", url+"api/find?q=wrap", ""); code != 200 || !strings.Contains(body, `"id":"practice-wrap-errors"`) {
		t.Errorf("GET /api/find: %d %s", code, body)
	}
	if code, _ := httpDo(t, "POST", url, ""); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d, want 405", code)
	}
	if code, _ := httpDo(t, "GET", url, "evil.example"); code != http.StatusMisdirectedRequest {
		t.Errorf("GET / with Host evil.example: %d, want 421", code)
	}
	code, stderr := stop()
	if code != 0 {
		t.Fatalf("exit %d after the interrupt: %s", code, stderr)
	}
	if !strings.Contains(stderr, "read-only at "+url) {
		t.Errorf("stderr %q", stderr)
	}
}

func TestBrowseJSON(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := run(t, dir, "", "init"); code != 0 {
		t.Fatalf("init: %d %s", code, errs)
	}
	var out struct {
		SchemaVersion int    `json:"schema_version"`
		URL           string `json:"url"`
	}
	stdout, stop := startBrowse(t, dir, func(s string) bool { return json.Unmarshal([]byte(s), &out) == nil },
		"--json", "--quiet", "--addr", "localhost:0")
	code, stderr := stop()
	if out.SchemaVersion != 1 || !strings.HasPrefix(out.URL, "http://127.0.0.1:") || strings.Count(stdout, "\n") != 4 {
		t.Errorf("stdout %q", stdout)
	}
	if code != 0 || stderr != "" {
		t.Errorf("exit %d, stderr %q (--quiet)", code, stderr)
	}
}
