package serve

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/llm"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

func needGit(tb testing.TB) {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git not installed")
	}
}

// ownGitConfig gives the test's git processes a global configuration of
// their own (an identity only) and no system one: a test of git's
// safe.directory refusal (GIT_TEST_ASSUME_DIFFERENT_OWNER) would pass
// nothing on a machine whose ~/.gitconfig trusts every folder
// (safe.directory=*, which some developers and containers set).
func ownGitConfig(tb testing.TB) {
	tb.Helper()
	cfg := filepath.Join(tb.TempDir(), "gitconfig")
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = kk test\n\temail = kk-test@example.com\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	tb.Setenv("GIT_CONFIG_GLOBAL", cfg)
	tb.Setenv("GIT_CONFIG_NOSYSTEM", "1")
}

// newRepo bootstraps a knowledge repository in a new folder, with n
// generated leaves (benchtree, seed 1) committed when n > 0.
func newRepo(tb testing.TB, n int) *store.KB {
	tb.Helper()
	needGit(tb)
	ctx := context.Background()
	root := filepath.Join(tb.TempDir(), "repo")
	if n > 0 {
		if _, err := benchtree.Generate(root, benchtree.Options{Nodes: n, Seed: 1}); err != nil {
			tb.Fatal(err)
		}
		if _, err := gitx.Run(ctx, root, "init", "-q", "-b", "main"); err != nil {
			tb.Fatal(err)
		}
		// The first commit of a large tree would start git's automatic
		// maintenance in the background (a repack), which competes with
		// what is measured and writes into .git while the test's
		// clean-up removes it.
		for _, kv := range [][2]string{{"gc.auto", "0"}, {"maintenance.auto", "false"}} {
			if _, err := gitx.Run(ctx, root, "config", kv[0], kv[1]); err != nil {
				tb.Fatal(err)
			}
		}
	}
	opts := store.InitOptions{Version: "test", Now: time.Now(), Command: "test"}
	k, err := Bootstrap(ctx, root, opts)
	if err != nil {
		tb.Fatal(err)
	}
	if n > 0 {
		// benchtree writes no config, .gitignore or index files.
		if _, err := txn.Init(ctx, k, opts); err != nil {
			tb.Fatal(err)
		}
		if _, err := gitx.CommitPaths(ctx, root, DefaultAuthor(), "generated tree", []string{store.DirName}); err != nil {
			tb.Fatal(err)
		}
	} else {
		// The worker's git gc --auto (Backend.maintain) would pack in
		// the background of a test that posts many jobs: off, as for a
		// generated tree, but in the test of it.
		for _, kv := range [][2]string{{"gc.auto", "0"}, {"maintenance.auto", "false"}} {
			if _, err := gitx.Run(ctx, root, "config", kv[0], kv[1]); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return k
}

// server is a kk serve running in the test process.
type server struct {
	URL     string
	KB      *store.KB
	Backend *Backend
	Queue   *jobqueue.Queue
	HTTP    *httpapi.Server
	Client  *httpapi.Client
	stop    func()
}

// start runs the real backend over k (with provider p, nil for offline)
// behind the HTTP face on a loopback port until the test ends.
func start(tb testing.TB, k *store.KB, p llm.Provider) *server {
	tb.Helper()
	return startWith(tb, context.Background(), k, p)
}

// startWith is start with the server's context made from base (faults a
// test injects: txn.WithFaults).
func startWith(tb testing.TB, base context.Context, k *store.KB, p llm.Provider) *server {
	tb.Helper()
	return startOpts(tb, base, Options{KB: k, Provider: p})
}

// startOpts is start with the backend's options o.
func startOpts(tb testing.TB, base context.Context, o Options) *server {
	tb.Helper()
	return startQueue(tb, base, o, nil)
}

// startQueue is startOpts with the queue's options, the backend's, set
// by tweak when not nil (faults a test injects: jobqueue.Options.WriteFault).
func startQueue(tb testing.TB, base context.Context, o Options, tweak func(*jobqueue.Options)) *server {
	tb.Helper()
	return startHTTP(tb, base, o, tweak, httpapi.Options{})
}

// startHTTP is startQueue with the HTTP face's options ho (its Backend
// and Queue are set here).
func startHTTP(tb testing.TB, base context.Context, o Options, tweak func(*jobqueue.Options), ho httpapi.Options) *server {
	tb.Helper()
	k := o.KB
	if os.Getenv("KK_TEST_LOG") != "" { // the server's log on stderr, when debugging a test
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	b := New(o)
	ctx, cancel := context.WithCancel(base)
	if err := b.Open(ctx); err != nil {
		tb.Fatal(err)
	}
	qo := b.QueueOptions()
	if tweak != nil {
		tweak(&qo)
	}
	q, err := jobqueue.Open(filepath.Join(k.StateDir(), "queue"), qo)
	if err != nil {
		tb.Fatal(err)
	}
	ho.Backend, ho.Queue = b, q
	srv, err := httpapi.New(ho)
	if err != nil {
		tb.Fatal(err)
	}
	if err := b.Warm(context.Background()); err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("Serve: %v", err)
		}
		_ = b.Close()
	}
	tb.Cleanup(stop)
	url := "http://" + ln.Addr().String()
	return &server{URL: url, KB: k, Backend: b, Queue: q, HTTP: srv, Client: &httpapi.Client{BaseURL: url}, stop: stop}
}

// wait waits for job id's end (bounded only so that a stuck worker fails
// the test: a benchmark's last job waits for every job before it).
func (s *server) wait(tb testing.TB, id string) httpapi.JobStatus {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	j, err := s.Client.Wait(ctx, id, 5*time.Millisecond)
	if err != nil {
		tb.Fatal(err)
	}
	return j
}

// postMany posts n notes titled "<title> <i>", waits for the last one,
// and checks that every job is done; it returns the jobs.
func (s *server) postMany(t *testing.T, n int, title string) []jobqueue.Job {
	t.Helper()
	var ids []string
	for i := range n {
		j, err := s.Client.Post(ctx, httpapi.PostRequest{Title: fmt.Sprintf("%s %d", title, i), Content: fmt.Sprintf("Note %d of %s.\n", i, title)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.JobID)
	}
	s.wait(t, ids[len(ids)-1])
	jobs := make([]jobqueue.Job, len(ids))
	for i, id := range ids {
		j, ok := s.Queue.Get(id)
		if !ok || j.Status != jobqueue.Done {
			t.Fatalf("job %s: %+v", id, j)
		}
		jobs[i] = j
	}
	return jobs
}
