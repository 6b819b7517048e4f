package serve

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
)

// kk serve accepts at most MaxConns connections at once: one more waits
// (in the kernel's backlog) until one closes, so that an accept storm
// cannot take the file descriptors the worker's git commands and the
// index need. A job posted behind a full set of connections is taken
// once one closes, and is done and committed. Found by a QA run with a
// low ulimit -n: a storm of connections made a job's git fail to open
// its files, and the job failed.
func TestConnectionsBeyondTheCapWait(t *testing.T) {
	k := newRepo(t, 0)
	const maxConns = 2
	s := startHTTP(t, context.Background(), Options{KB: k}, nil, httpapi.Options{MaxConns: maxConns})
	addr := s.URL[len("http://"):]
	// Connections that say nothing hold their slots.
	var held []net.Conn
	for range maxConns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	defer func() {
		for _, c := range held {
			_ = c.Close()
		}
	}()
	waitConns(t, s, maxConns)
	type posted struct {
		j   httpapi.JobStatus
		err error
	}
	done := make(chan posted, 1)
	dialed := make(chan struct{})
	var d net.Dialer
	client := &httpapi.Client{BaseURL: s.URL, HTTP: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			close(dialed) // connected: the kernel holds it until the server accepts it
			return c, err
		}}}}
	go func() {
		j, err := client.Post(ctx, httpapi.PostRequest{Title: "Behind the storm", Content: "Posted while every connection was taken.\n"})
		done <- posted{j, err}
	}()
	<-dialed
	// A server without the cap would accept it, and answer: it is given
	// a moment to (the test cannot fail for a slow machine, only miss a
	// missing cap on one).
	for range 40 {
		select {
		case p := <-done:
			t.Fatalf("a post beyond the cap was answered while %d connections were open: %+v %v", maxConns, p.j, p.err)
		case <-time.After(5 * time.Millisecond):
		}
		if open, peak := s.HTTP.Conns(); open > maxConns || peak > maxConns {
			t.Fatalf("%d connections open, %d at most; the cap is %d", open, peak, maxConns)
		}
	}
	// One closes: the post is accepted, and its job is done and committed.
	_ = held[0].Close()
	held = held[1:]
	p := <-done
	if p.err != nil {
		t.Fatal(p.err)
	}
	// The job is waited for on the post's own connection: the other
	// slot is still taken.
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	j, err := client.Wait(wctx, p.j.JobID, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != "done" {
		t.Fatalf("the job behind the storm: %+v", j)
	}
	jobCommit(t, k, "store", j)
	if _, peak := s.HTTP.Conns(); peak > maxConns {
		t.Errorf("%d connections were open at once; the cap is %d", peak, maxConns)
	}
}

// waitConns waits (bounded) until the server has n connections open.
func waitConns(t *testing.T, s *server, n int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if open, _ := s.HTTP.Conns(); open == n {
			return
		}
		if time.Now().After(deadline) {
			open, _ := s.HTTP.Conns()
			t.Fatalf("the server has %d connections open, not %d", open, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
