package serve

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFaultJobGitThatHangsIsNamedAndEndsWithTheStop: a git command of a
// job that never ends (here git hash-object of the commit's files, which
// runs a clean filter of .gitattributes that hangs: git-lfs waiting on a
// stalled server, a network file system) held the job "processing" for
// ever while /healthz said ok, and kk serve's stop (SIGTERM) never
// ended: the stop waits for the job in progress, and nothing ended its
// git command. /healthz now names the git command the job waits for;
// the stop ends it 10 s later, the job is left to the next start, which
// (the filter fixed) commits it once.
func TestFaultJobGitThatHangsIsNamedAndEndsWithTheStop(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	head := git(t, k, "rev-parse", "HEAD")
	// Bounded, so that a failing run ends; far past the test's waits.
	stall := filepath.Join(t.TempDir(), "stall")
	if err := os.WriteFile(stall, []byte("#!/bin/sh\nexec sleep 300\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	attrs := filepath.Join(k.Root, ".git", "info", "attributes")
	if err := os.MkdirAll(filepath.Dir(attrs), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(attrs, []byte("*.md filter=stall\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, k, "config", "filter.stall.clean", stall)
	id := s.postAsync(t, "Held by a filter that hangs")
	s.waitHealth(t, "git hash-object")
	stopped := make(chan struct{})
	go func() { s.stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(2 * time.Minute):
		t.Fatal("the server's stop did not end while the job's git command hung")
	}
	if got := git(t, k, "rev-parse", "HEAD"); got != head {
		t.Fatalf("a commit during the stop: %s", git(t, k, "log", "--oneline", "-2"))
	}
	git(t, k, "config", "--unset", "filter.stall.clean")
	if err := os.Remove(attrs); err != nil {
		t.Fatal(err)
	}
	s = start(t, k, nil)
	j := s.wait(t, id)
	if j.Status != "done" {
		t.Fatalf("the job after the restart: %+v", j)
	}
	jobCommit(t, k, "store", j)
	clean(t, k)
}
