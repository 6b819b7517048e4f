package serve

// Faults found by an exploratory QA run of kk serve, as an outside team
// would run it: each test fails on the code before its fix.

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
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
