package serve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
)

// TestShareStoppedWithTheServerDoesNotWarn: kk serve stopped (SIGINT,
// SIGTERM: its context cancelled) while a --push-every tick waited for
// git's fetch or push logged "sharing with origin failed; retried at the
// next tick" at WARN with "context canceled", and counted the tick as a
// failed one: a normal stop looked like a fault. The stop is now said at
// INFO, and the tick is not counted as failed; a tick that fails while
// the server runs still warns (TestKnowledgedPushTick).
func TestShareStoppedWithTheServerDoesNotWarn(t *testing.T) {
	needGit(t)
	for _, stage := range []string{"fetch", "push"} {
		t.Run(stage, func(t *testing.T) {
			s, logs := startLogged(t)
			k := s.KB
			remote := filepath.Join(t.TempDir(), "remote.git")
			git(t, k, "init", "-q", "--bare", remote)
			git(t, k, "remote", "add", "origin", remote)
			s.Backend.Share(ctx) // origin has the branch
			if p := s.Backend.SharingProblem(); p != "" {
				t.Fatalf("the first tick failed: %s\n%s", p, logs)
			}
			dir := t.TempDir()
			started := filepath.Join(dir, "started")
			// git hangs at this stage until the stop; bounded, so that a
			// failing run ends.
			script := "#!/bin/sh\n: > '" + started + "'\nexec sleep 300\n"
			hang := filepath.Join(dir, "hang")
			if stage == "push" {
				hang = filepath.Join(k.Root, ".git", "hooks", "pre-push")
			}
			if err := os.WriteFile(hang, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			if stage == "fetch" {
				git(t, k, "config", "remote.origin.uploadpack", hang)
			}
			if j := s.post(t, httpapi.PostRequest{Title: "Kept", Content: "Committed before the stop.\n"}); j.Status != "done" {
				t.Fatalf("post: %+v", j)
			}
			mark := len(logs.String())
			tctx, stop := context.WithCancel(context.Background())
			defer stop()
			done := make(chan struct{})
			go func() {
				defer close(done)
				s.Backend.Share(tctx)
			}()
			for {
				if _, err := os.Stat(started); err == nil {
					break
				}
				select {
				case <-done:
					t.Fatalf("the tick ended before git reached the %s:\n%s", stage, logs)
				case <-time.After(10 * time.Millisecond):
				}
			}
			stop() // the server's stop
			<-done
			tick := logs.String()[mark:]
			if strings.Contains(tick, "level=WARN") || strings.Contains(tick, "level=ERROR") {
				t.Errorf("a stop during the tick's %s warned:\n%s", stage, tick)
			}
			if !strings.Contains(tick, `level=INFO msg="sharing with origin stopped with the server`) {
				t.Errorf("the stop during the tick's %s is not said at INFO:\n%s", stage, tick)
			}
			if p := s.Backend.SharingProblem(); p != "" {
				t.Errorf("a stopped tick counted as failed: %s", p)
			}
		})
	}
}
