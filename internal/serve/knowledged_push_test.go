package serve

// Ports of knowledged's push tests (wiztools/knowledged
// internal/queue/queue_test.go TestPushOriginCurrentBranch_LogsErrorOnFailure,
// TestRunScheduledPush_LogsSkippedWithoutOrigin,
// TestNextPushDelay_UsesPersistedLastAttempt,
// TestNextPushDelay_DueImmediatelyWhenMissingOrExpired, and
// internal/store/store_test.go TestPushOriginCurrentBranch, at da946d4)
// to kk serve's --push-every tick (Backend.Share), on real git.

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
)

// syncBuffer is a log the server's goroutines write to at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startLogged(t *testing.T) (*server, *syncBuffer) {
	t.Helper()
	k := newRepo(t, 0)
	logs := &syncBuffer{}
	s := startOpts(t, context.Background(), Options{KB: k, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	return s, logs
}

// A tick without an origin remote pushes nothing and says so; one whose
// origin cannot be reached logs the failure, and the jobs go on; one
// with a reachable origin pushes the served branch there.
func TestKnowledgedPushTick(t *testing.T) {
	s, logs := startLogged(t)
	k := s.KB
	s.Backend.Share(ctx)
	if !strings.Contains(logs.String(), "no origin remote; nothing to push") {
		t.Errorf("no origin, log:\n%s", logs)
	}

	git(t, k, "remote", "add", "origin", "/path/that/does/not/exist")
	s.Backend.Share(ctx)
	if out := logs.String(); !strings.Contains(out, "level=WARN msg=\"sharing with origin failed; retried at the next tick\"") || !strings.Contains(out, "/path/that/does/not/exist") {
		t.Errorf("unreachable origin, log:\n%s", out)
	}
	if j := s.post(t, httpapi.PostRequest{Title: "Hello", Content: "hello world\n"}); j.Status != "done" {
		t.Fatalf("a post after a failed push: %+v", j)
	}

	remote := filepath.Join(t.TempDir(), "remote.git")
	git(t, k, "init", "-q", "--bare", remote)
	git(t, k, "remote", "set-url", "origin", remote)
	s.Backend.Share(ctx)
	if got, want := git(t, k, "--git-dir", remote, "rev-parse", "main"), git(t, k, "rev-parse", "HEAD"); got != want {
		t.Errorf("origin's main %s, HEAD %s\n%s", got, want, logs)
	}
}

// The period of the tick carries over a restart: it starts from the last
// tick recorded under .state/ (from the start when none is, recorded
// then), and every tick records its time.
func TestKnowledgedPushPeriodCarriesOver(t *testing.T) {
	s, _ := startLogged(t)
	t0 := time.Date(2026, 4, 12, 10, 0, 0, 0, time.UTC)
	if got := s.Backend.ShareFrom(t0); !got.Equal(t0) {
		t.Errorf("with nothing recorded: %v, want the start %v", got, t0)
	}
	if _, err := os.Stat(filepath.Join(s.KB.StateDir(), shareClock)); err != nil {
		t.Errorf("the start was not recorded: %v", err)
	}
	if got := s.Backend.ShareFrom(t0.Add(23 * time.Hour)); !got.Equal(t0) {
		t.Errorf("a later start: %v, want the recorded %v", got, t0)
	}
	before := time.Now()
	s.Backend.Share(ctx)
	if got := s.Backend.ShareFrom(time.Now()); got.Before(before) {
		t.Errorf("a tick did not record its time: %v", got)
	}
	// A recorded time after the start (a clock set back) counts as the start.
	late := time.Now().Add(48 * time.Hour)
	s.Backend.recordShare(late)
	if now := time.Now(); !s.Backend.ShareFrom(now).Equal(now) {
		t.Error("a recorded time in the future was kept")
	}
}

// A tick logs "pushed to origin" only when its push moved origin's
// branch: a tick with nothing new to share says nothing at info level.
// Found by a QA run: a server with --push-every logged a push at every
// tick of an idle day.
func TestPushTickLogsOnlyAPushThatMovedOrigin(t *testing.T) {
	s, logs := startLogged(t)
	k := s.KB
	remote := filepath.Join(t.TempDir(), "remote.git")
	git(t, k, "init", "-q", "--bare", remote)
	git(t, k, "remote", "add", "origin", remote)
	const pushed = `level=INFO msg="pushed to origin"`
	s.Backend.Share(ctx) // the branch is new there
	if n := strings.Count(logs.String(), pushed); n != 1 {
		t.Fatalf("first tick: %d push lines, want 1; log:\n%s", n, logs)
	}
	s.Backend.Share(ctx)
	s.Backend.Share(ctx)
	if n := strings.Count(logs.String(), pushed); n != 1 {
		t.Errorf("two ticks with nothing to push: %d push lines, want still 1; log:\n%s", n, logs)
	}
	if j := s.post(t, httpapi.PostRequest{Title: "Hello", Content: "hello world\n"}); j.Status != "done" {
		t.Fatalf("post: %+v", j)
	}
	s.Backend.Share(ctx)
	if n := strings.Count(logs.String(), pushed); n != 2 {
		t.Errorf("a tick after a job: %d push lines, want 2; log:\n%s", n, logs)
	}
	if got, want := git(t, k, "--git-dir", remote, "rev-parse", "main"), git(t, k, "rev-parse", "HEAD"); got != want {
		t.Errorf("origin's main %s, HEAD %s", got, want)
	}
}
