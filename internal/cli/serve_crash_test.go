//go:build unix

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/serve"
)

// crashServer is a kk serve process run by the crash test.
type crashServer struct {
	cmd    *exec.Cmd
	client *httpapi.Client
	log    *strings.Builder
}

// startCrashServer runs `kk serve` (the test binary, as testscript puts
// it on PATH) over root, its worker slowed by delay, and waits until it
// listens.
func startCrashServer(t *testing.T, root string, delay time.Duration) *crashServer {
	t.Helper()
	return startCrashServerWith(t, root, delay, nil)
}

// startCrashServerWith is startCrashServer; setup, when set, changes the
// command before it starts.
func startCrashServerWith(t *testing.T, root string, delay time.Duration, setup func(*exec.Cmd)) *crashServer {
	t.Helper()
	urlFile := filepath.Join(root, ".ai", "kenkeep", ".state", serve.URLFile)
	_ = os.Remove(urlFile) // a killed server leaves its own behind, or none
	cmd := exec.Command("kk", "serve", "--root", root, "--addr", "127.0.0.1:0", "--log-level", "debug")
	cmd.Env = append(os.Environ(), "KK_ROOT=", EnvServeTestDelay+"="+delay.String())
	if setup != nil {
		setup(cmd)
	}
	log := &strings.Builder{}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	// Bounded only so that a server that never starts fails the test.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if data, err := os.ReadFile(urlFile); err == nil && len(data) > 0 {
			return &crashServer{cmd: cmd, client: &httpapi.Client{BaseURL: strings.TrimSpace(string(data))}, log: log}
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait() // killed: its exit status says nothing
			t.Fatalf("kk serve did not start:\n%s", log)
		}
	}
}

// kill ends the server with SIGKILL, as a crash would.
func (s *crashServer) kill(t *testing.T) {
	t.Helper()
	_ = s.cmd.Process.Kill() // it may have ended already
	_ = s.cmd.Wait()         // killed: its exit status says nothing
}

// uncommittedLeaf reports whether a leaf is on disk that git has not
// committed: a job between its write and its commit.
func uncommittedLeaf(root string) bool {
	out, err := gitx.Read(context.Background(), root, "status", "--porcelain", "--untracked-files=all", "--", ".ai/kenkeep/nodes")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasSuffix(line, ".md") && !strings.HasSuffix(line, "index.md") {
			return true
		}
	}
	return false
}

// committedProcessing reports whether one of ids is committed while the
// server still says it is processing.
func committedProcessing(ctx context.Context, root string, c *httpapi.Client, ids []string) bool {
	out, err := gitx.Read(ctx, root, "log", "-3", "--format=%s")
	if err != nil {
		return false
	}
	for _, id := range ids {
		if strings.Contains(string(out), "("+id+"): ") {
			if j, err := c.Job(ctx, id); err == nil && j.Status == "processing" {
				return true
			}
		}
	}
	return false
}

// TestServeCrashRecovery posts 10 jobs to a slowed kk serve, kills it with
// SIGKILL at a different point in each of 5 rounds (between a job's file
// write and its commit; at once; after a job's commit but before the
// queue records its end; after some jobs are done), restarts
// it, and checks that every job of every round ends done with exactly one
// commit, no stray file and an empty queue.
func TestServeCrashRecovery(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	if testing.Short() {
		t.Skip("kills and restarts kk serve five times")
	}
	t.Parallel()
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "kb")
	const delay = 100 * time.Millisecond
	var all []string
	for round := range 5 {
		s := startCrashServer(t, root, delay)
		var ids []string
		for i := range 10 {
			j, err := s.client.Post(ctx, httpapi.PostRequest{
				Title:   fmt.Sprintf("Round %d note %d", round, i),
				Content: fmt.Sprintf("Crash round %d, note %d: the worker is killed and restarted.\n", round, i),
			})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, j.JobID)
		}
		all = append(all, ids...)
		switch round % 4 {
		case 0: // between a job's file write and its commit
			for deadline := time.Now().Add(time.Minute); !uncommittedLeaf(root); time.Sleep(2 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("round %d: no job was ever seen between its write and its commit", round)
				}
			}
		case 1: // as soon as the jobs are accepted
		case 2: // after a job's commit, before the queue records its end
			for deadline := time.Now().Add(time.Minute); !committedProcessing(ctx, root, s.client, ids); time.Sleep(2 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("round %d: no job was ever seen committed and still processing", round)
				}
			}
		case 3: // once a few jobs are done
			wctx, cancel := context.WithTimeout(ctx, time.Minute)
			if _, err := s.client.Wait(wctx, ids[2], 10*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			cancel()
		}
		s.kill(t)

		s = startCrashServer(t, root, 0)
		for _, id := range all {
			wctx, cancel := context.WithTimeout(ctx, time.Minute)
			j, err := s.client.Wait(wctx, id, 10*time.Millisecond)
			cancel()
			if err != nil {
				t.Fatalf("round %d: job %s: %v\n%s", round, id, err, s.log)
			}
			if j.Status != "done" {
				t.Fatalf("round %d: job %s ended %s: %s\n%s", round, id, j.Status, j.Error, s.log)
			}
		}
		var health struct {
			QueueDepth int `json:"queue_depth"`
			Processing int `json:"processing"`
		}
		if err := getJSON(s.client.BaseURL+"/healthz", &health); err != nil {
			t.Fatal(err)
		}
		if health.QueueDepth != 0 || health.Processing != 0 {
			t.Errorf("round %d: the queue is not empty: %+v", round, health)
		}
		subjects, err := gitx.Read(ctx, root, "log", "--format=%s")
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range all {
			if n := strings.Count(string(subjects), "store("+id+"): "); n != 1 {
				t.Errorf("round %d: job %s has %d commits", round, id, n)
			}
		}
		if st, err := gitx.Read(ctx, root, "status", "--porcelain", "--untracked-files=all"); err != nil || len(st) > 0 {
			t.Errorf("round %d: stray files: %s %v", round, st, err)
		}
		leaves, err := filepath.Glob(filepath.Join(root, ".ai", "kenkeep", "nodes", "*", "*.md"))
		if err != nil {
			t.Fatal(err)
		}
		if notes := len(leaves) - countIndexes(leaves); notes != len(all) {
			t.Errorf("round %d: %d notes on disk for %d jobs", round, notes, len(all))
		}
		if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := s.cmd.Wait(); err != nil {
			t.Fatalf("round %d: kk serve after SIGTERM: %v\n%s", round, err, s.log)
		}
		t.Logf("round %d: after the kill, %d interrupted job(s) were committed already, %d queued again",
			round, strings.Count(s.log.String(), "interrupted job was committed"), strings.Count(s.log.String(), "interrupted job queued again"))
	}
}

func countIndexes(paths []string) int {
	n := 0
	for _, p := range paths {
		if filepath.Base(p) == "index.md" {
			n++
		}
	}
	return n
}

// getJSON decodes the JSON answer of a GET.
func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
