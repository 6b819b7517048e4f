package serve

// Faults found by an exploratory QA run of kk serve, as an outside team
// would run it: each test fails on the code before its fix.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
	"github.com/kk-project/kk/internal/web"
)

// blackHole listens on loopback and accepts connections it never
// answers: a remote behind a stuck proxy, a server that hangs.
func blackHole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// A --push-every tick whose origin never answers (a black hole: git
// fetch connects and waits for ever) gives up after ShareNetTimeout and
// is tried again at the next tick; the jobs go on. Found by the QA run:
// the tick's git fetch had no deadline, the worker runs the tick between
// jobs, and every job stayed queued for as long as the remote hung, with
// /healthz saying "ok".
func TestFaultShareWithAHangingRemoteGivesUp(t *testing.T) {
	s, logs := startLogged(t)
	defer func(d time.Duration) { ShareNetTimeout = d }(ShareNetTimeout)
	ShareNetTimeout = 500 * time.Millisecond
	git(t, s.KB, "remote", "add", "origin", "http://"+blackHole(t)+"/kb.git")

	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Backend.Share(ctx)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the push tick still waits for a remote that never answers (ShareNetTimeout %v); log:\n%s", ShareNetTimeout, logs)
	}
	if out := logs.String(); !strings.Contains(out, "sharing with origin failed; retried at the next tick") || !strings.Contains(out, "did not answer within") {
		t.Errorf("log:\n%s", out)
	}
	if j := s.post(t, httpapi.PostRequest{Title: "After the hang", Content: "Posted after a tick whose origin hung.\n"}); j.Status != "done" {
		t.Fatalf("a post after the tick: %+v", j)
	}
}

// The work tree moved away (or deleted) under a running server: a post
// is refused, naming the folder that is gone, and nothing is made at the
// old place; a job queued before waits, /healthz saying the work tree is
// gone; once the tree is back, the job is done with its one commit.
// Found by the QA run: the queue made .ai/kenkeep/.state/queue again at
// the old place and answered 202, the job was lost ("reading the job's
// payload") when the tree came back, the folder it made kept the tree
// from being moved back, and /healthz said the work tree had a detached
// HEAD checked out.
func TestFaultWorkTreeMovedAway(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	if j := s.post(t, httpapi.PostRequest{Title: "Before", Content: "Before the move.\n"}); j.Status != "done" {
		t.Fatalf("before: %+v", j)
	}
	// A job held by a lock, so that it is queued when the tree goes.
	lock := filepath.Join(k.Root, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	held := s.postAsync(t, "Queued before the move")
	s.waitHealth(t, "index.lock")
	moved := k.Root + ".moved"
	if err := os.Rename(k.Root, moved); err != nil {
		t.Fatal(err)
	}
	h := s.waitHealth(t, "is gone")
	if !strings.Contains(h.WaitingFor, k.Root) {
		t.Errorf("health: %+v", h)
	}
	resp, err := http.Post(s.URL+"/content", "application/json", strings.NewReader(`{"title":"While gone","content":"Posted while the tree was away.\n"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode == http.StatusAccepted || !strings.Contains(string(body), "is gone") {
		t.Errorf("a post while the tree is away: %d %s", resp.StatusCode, body)
	}
	if _, err := os.Lstat(k.Root); !errors.Is(err, fs.ErrNotExist) {
		entries, _ := filepath.Glob(filepath.Join(k.Root, "*", "*", "*"))
		t.Fatalf("something was made at the old place of the tree: %v %v", err, entries)
	}
	if err := os.Rename(moved, k.Root); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	j := s.waitJob(t, held, 30*time.Second)
	if j.Status != "done" {
		t.Fatalf("the job queued before the move: %+v", j)
	}
	jobCommit(t, k, "store", j)
	if j := s.post(t, httpapi.PostRequest{Title: "After", Content: "After the move back.\n"}); j.Status != "done" {
		t.Fatalf("after: %+v", j)
	}
	clean(t, k)
}

// A job whose writes find the machine unable to take them (the disk full,
// the user's quota spent, the file system read-only, kk's .state/ folder
// not writable) is the environment's, as a held lock is: the job waits,
// /healthz says why, and once the writes can land it is done with its
// one commit. Found by the QA run: with .state/ made read-only under a
// running server, each job failed ("journal: open …: permission
// denied"), one after the other, and the posts were lost; on a full disk
// every queued job failed the same way.
func TestFaultUnwritableMachineHoldsTheJob(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  func(k *store.KB) error
		says string
	}{
		{"ENOSPC", func(k *store.KB) error {
			return &fs.PathError{Op: "write", Path: k.NodePath("inbox/x.md"), Err: syscall.ENOSPC}
		}, "the disk is full"},
		{"EDQUOT", func(k *store.KB) error {
			return &fs.PathError{Op: "write", Path: k.NodePath("inbox/x.md"), Err: syscall.EDQUOT}
		}, "disk quota"},
		{"EROFS", func(k *store.KB) error {
			return &fs.PathError{Op: "open", Path: k.NodePath("inbox/x.md"), Err: syscall.EROFS}
		}, "read-only"},
		{"state EACCES", func(k *store.KB) error {
			return &fs.PathError{Op: "open", Path: filepath.Join(k.StateDir(), "txn", "cs.journal.tmp"), Err: syscall.EACCES}
		}, "cannot be written"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newRepo(t, 0)
			var full atomic.Bool
			full.Store(true)
			faulty := txn.WithFaults(context.Background(), txn.Faults{Write: func(string) error {
				if full.Load() {
					return tc.err(k)
				}
				return nil
			}})
			s := startWith(t, faulty, k, nil)
			id := s.postAsync(t, "Unwritable "+tc.name)
			s.waitHealth(t, tc.says)
			if j, _ := s.Client.Job(ctx, id); j.Status == "failed" || j.Status == "done" {
				t.Fatalf("the job ended while the machine could not write: %+v", j)
			}
			full.Store(false)
			j := s.waitJob(t, id, 30*time.Second)
			if j.Status != "done" {
				t.Fatalf("the job once the machine could write: %+v", j)
			}
			jobCommit(t, k, "store", j)
			if h := s.health(t); h.Status != "ok" {
				t.Errorf("health after: %+v", h)
			}
			clean(t, k)
		})
	}
}

// A post that cannot be queued because kk's .state/ folder cannot be
// written (made read-only: EACCES, or a read-only file system: EROFS)
// is answered 503 with Retry-After and an error naming the folder and
// what to do, as a full disk is; nothing of it is left, and once the
// folder is writable a post is queued and committed. Found by the QA
// run, which got 500 "failed to enqueue: writing …: permission denied".
func TestFaultUnwritableQueueAtPostIs503(t *testing.T) {
	for _, tc := range []struct {
		errno syscall.Errno
		says  string
	}{{syscall.EACCES, "cannot be written (permission denied)"}, {syscall.EROFS, "read-only file system"}} {
		t.Run(tc.errno.Error(), func(t *testing.T) {
			k := newRepo(t, 0)
			var denied atomic.Bool
			s := startQueue(t, context.Background(), Options{KB: k}, func(o *jobqueue.Options) {
				o.WriteFault = func(path string) error {
					if denied.Load() {
						return &fs.PathError{Op: "open", Path: path + ".tmp", Err: tc.errno}
					}
					return nil
				}
			})
			queueDir := filepath.Join(k.StateDir(), "queue")
			before := listDir(t, queueDir)
			denied.Store(true)
			body := postUnavailable(t, s.URL, `{"title":"Denied","content":"On a read-only state folder.\n"}`)
			if !strings.Contains(body.Error, tc.says) || !strings.Contains(body.Error, queueDir) || strings.Contains(body.Error, "\n") {
				t.Errorf("error %q: want one line naming %s and saying %q", body.Error, queueDir, tc.says)
			}
			if after := listDir(t, queueDir); !slices.Equal(after, before) {
				t.Errorf("the queue's folder was %v before the post, %v after", before, after)
			}
			denied.Store(false)
			j := s.post(t, httpapi.PostRequest{Title: "Writable again", Content: "Once the folder could be written.\n"})
			if j.Status != "done" {
				t.Fatalf("a post once the folder is writable: %+v", j)
			}
			jobCommit(t, k, "store", j)
		})
	}
}

// A --push-every tick that fails (origin refuses the push, cannot be
// reached) says so in /healthz, with when the failures began and git's
// meaningful line, until a tick shares again; the jobs are unaffected and
// the status stays ok. Found by the QA run: a remote whose hook refused
// every push was only in the log, and /healthz, what monitoring reads,
// said ok with nothing more for as long as nothing was shared.
func TestHealthSaysSharingFails(t *testing.T) {
	s, logs := startLogged(t)
	remote := filepath.Join(t.TempDir(), "remote.git")
	git(t, s.KB, "init", "-q", "--bare", remote)
	hook := filepath.Join(remote, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'refused by policy' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, s.KB, "remote", "add", "origin", remote)
	if j := s.post(t, httpapi.PostRequest{Title: "To share", Content: "A note for origin.\n"}); j.Status != "done" {
		t.Fatalf("post: %+v", j)
	}
	type health struct {
		Status  string `json:"status"`
		Sharing string `json:"sharing_failed"`
	}
	get := func() health {
		t.Helper()
		resp, err := http.Get(s.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		var h health
		if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	if h := get(); h.Sharing != "" {
		t.Errorf("before any tick: %+v", h)
	}
	s.Backend.Share(ctx)
	s.Backend.Share(ctx)
	h := get()
	if h.Status != "ok" || !strings.Contains(h.Sharing, "refused by policy") || !strings.Contains(h.Sharing, "since ") || !strings.Contains(h.Sharing, "2 ticks") || strings.Contains(h.Sharing, "\n") {
		t.Errorf("after two refused pushes: %+v\n%s", h, logs)
	}
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	s.Backend.Share(ctx)
	if h := get(); h.Status != "ok" || h.Sharing != "" {
		t.Errorf("after a push that went through: %+v\n%s", h, logs)
	}
}

// Reads while the work tree is away (moved or deleted under a running
// server) answer that the folder is gone (503), not an empty knowledge
// base, and make nothing at its old place; /healthz says so with no job
// queued; once the tree is back, they answer from it. Found by the QA
// run: a search made .ai/kenkeep/.state/branches/main/index.db again at
// the old place (which then kept the tree from being moved back; the web
// page's search did the same), and it and /tags, /content?path=INDEX.md and /posts/recents answered 200 with
// nothing in them, /healthz saying ok.
func TestFaultReadsWhileTheWorkTreeIsAway(t *testing.T) {
	k := newRepo(t, 0)
	s := startHTTP(t, context.Background(), Options{KB: k}, nil, httpapi.Options{Page: web.New(k, web.Options{}), PagePaths: web.Paths, PageSearchPaths: web.SearchPaths})
	if j := s.post(t, httpapi.PostRequest{Title: "Goroutines", Content: "Goroutines are cheap threads.\n", Tags: []string{"golang"}}); j.Status != "done" {
		t.Fatalf("post: %+v", j)
	}
	moved := k.Root + ".moved"
	if err := os.Rename(k.Root, moved); err != nil {
		t.Fatal(err)
	}
	// The web page first: its search opened the index at the old place.
	reads := []string{"/", "/find?q=goroutines", "/search?query=goroutines", "/search?tag=golang", "/tags", "/content?path=INDEX.md", "/posts/recents"}
	for _, p := range reads {
		resp, err := http.Get(s.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "is gone") {
			t.Errorf("GET %s while the tree is away: %d %s", p, resp.StatusCode, body)
		}
	}
	if h := s.health(t); h.Status != "waiting" || !strings.Contains(h.WaitingFor, "is gone") {
		t.Errorf("health while the tree is away: %+v", h)
	}
	if _, err := os.Lstat(k.Root); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("something was made at the old place of the tree: %v", err)
	}
	if err := os.Rename(moved, k.Root); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(s.URL + "/search?query=goroutines")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "map-goroutines.md") {
		t.Errorf("a search once the tree is back: %d %s", resp.StatusCode, body)
	}
	if h := s.health(t); h.Status != "ok" {
		t.Errorf("health once the tree is back: %+v", h)
	}
}
