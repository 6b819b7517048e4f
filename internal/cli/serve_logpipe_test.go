//go:build unix

package cli

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/serve"
)

// TestServeOutlivesItsLogReader: kk serve whose log goes into a pipe
// whose reader has gone (`kk serve 2>&1 | grep -m1 listening` to learn
// its URL, a `| tee` ended, a log collector restarted) goes on serving:
// the job posted then is done with its commit and the server still runs.
// Before, its next log line killed it with SIGPIPE (Go's default for a
// write to a closed stderr), at start or in the middle of a job.
func TestServeOutlivesItsLogReader(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed: kk serve commits its jobs with it")
	}
	root := filepath.Join(t.TempDir(), "kb")
	urlFile := filepath.Join(root, ".ai", "kenkeep", ".state", serve.URLFile)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	kk := startKK(t, []string{"KK_ROOT="}, nil, nil, w, "serve", "--root", root, "--addr", "127.0.0.1:0")
	// The reader takes the first line and goes.
	first, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("reading kk serve's first log line: %v", err)
	}
	_ = r.Close()
	t.Logf("first log line: %s", strings.TrimSpace(first))

	var c *httpapi.Client
	// Bounded only so that a server that never starts fails the test.
	for deadline := time.Now().Add(time.Minute); c == nil; time.Sleep(10 * time.Millisecond) {
		if ended, err := kk.ended(); ended {
			t.Fatalf("kk serve ended once its log reader had gone: %v", err)
		}
		if data, err := os.ReadFile(urlFile); err == nil && len(data) > 0 {
			c = &httpapi.Client{BaseURL: strings.TrimSpace(string(data))}
		}
		if time.Now().After(deadline) {
			t.Fatal("kk serve did not start")
		}
	}
	ctx := context.Background()
	j, err := c.Post(ctx, httpapi.PostRequest{Title: "Log reader gone", Content: "Posted after the log's reader went.\n"})
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	done, err := c.Wait(wctx, j.JobID, 10*time.Millisecond)
	if err != nil || done.Status != "done" {
		if ended, err := kk.ended(); ended {
			t.Fatalf("kk serve ended: %v", err)
		}
		t.Fatalf("job: %+v, %v", done, err)
	}
	if _, err := c.Job(ctx, j.JobID); err != nil {
		t.Fatalf("kk serve no longer answers after the job: %v", err)
	}
	out, err := exec.Command("git", "-C", root, "log", "--format=%s").Output()
	if err != nil || !strings.Contains(string(out), "store("+j.JobID+"): ") {
		t.Fatalf("no commit of the job: %v\n%s", err, out)
	}
}
