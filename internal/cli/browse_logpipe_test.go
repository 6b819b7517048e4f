//go:build unix

package cli

import (
	"bufio"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBrowseOutlivesItsStderrReader: kk browse whose stderr goes into a
// pipe whose reader has gone (`kk browse 2>&1 | grep -m1 http`, which
// ends after the URL, before kk browse's next line) goes on serving the
// page. Before, its note ("serving … press Ctrl-C to stop"), written after
// the URL, killed it with SIGPIPE (Go's default for a write to a closed
// stderr).
func TestBrowseOutlivesItsStderrReader(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := run(t, dir, "", "init"); code != 0 {
		t.Fatalf("init: %d %s", code, errs)
	}
	// The browser kk browse starts after its note marks that the note
	// was written.
	opened := filepath.Join(t.TempDir(), "opened")
	browser := filepath.Join(t.TempDir(), "browser")
	if err := os.WriteFile(browser, []byte("#!/bin/sh\necho \"$1\" > '"+opened+".tmp' && mv '"+opened+".tmp' '"+opened+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// The stderr's reader has gone before kk browse writes to it.
	kk := startKK(t, []string{"KK_ROOT=" + dir, "BROWSER=" + browser}, nil, outW, closedPipe(t), "browse", "--addr", "127.0.0.1:0", "--open")
	url, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatalf("reading kk browse's URL: %v", err)
	}
	url = strings.TrimSpace(url)
	// The browser runs once the note has been written: kk browse has
	// met the closed stderr by then, or it has ended.
	for {
		if ended, err := kk.ended(); ended {
			t.Fatalf("kk browse ended once its stderr's reader had gone: %v", err)
		}
		if b, err := os.ReadFile(opened); err == nil {
			if got := strings.TrimSpace(string(b)); got != url {
				t.Fatalf("the browser was given %q, want %q", got, url)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("kk browse no longer answers: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if ended, err := kk.ended(); ended {
		t.Fatalf("kk browse ended: %v", err)
	}
}
