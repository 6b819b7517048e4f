package serve

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
)

// TestSlowHeadersDoNotShutOthersOut: slowloris. Clients that open every
// connection kk serve accepts and send their headers a byte at a time
// (or nothing) held each slot until ReadHeaderTimeout ended it, and
// opened the next: an honest request waited behind them, every time.
// Now, with every slot taken, the connection that has waited longest for
// its request (past EvictAfter) is closed to make room, and the honest
// client is served while the slow ones keep coming. ReadHeaderTimeout
// is made an hour here, so that only that rule can serve it. Found by
// the serve red team, round 6: with `ulimit -n 1024` (896 connections),
// 1,000 slow clients held /healthz for 10 s each round.
func TestSlowHeadersDoNotShutOthersOut(t *testing.T) {
	defer func(d time.Duration) { httpapi.ReadHeaderTimeout = d }(httpapi.ReadHeaderTimeout)
	httpapi.ReadHeaderTimeout = time.Hour
	defer func(d time.Duration) { httpapi.EvictAfter = d }(httpapi.EvictAfter)
	httpapi.EvictAfter = 200 * time.Millisecond
	k := newRepo(t, 0)
	const maxConns = 8
	s := startHTTP(t, context.Background(), Options{KB: k}, nil, httpapi.Options{MaxConns: maxConns})
	addr := strings.TrimPrefix(s.URL, "http://")
	// The slow clients: each opens a connection and drips a request's
	// headers into it, and opens another whenever the server closes one.
	stop := make(chan struct{})
	dripped := make(chan struct{})
	go func() {
		defer close(dripped)
		head := fmt.Sprintf("GET /healthz HTTP/1.1\r\nHost: %s\r\nX-Slow: %s\r\n\r\n", addr, strings.Repeat("a", 4096))
		conns := make([]net.Conn, maxConns)
		defer func() {
			for _, c := range conns {
				if c != nil {
					_ = c.Close()
				}
			}
		}()
		for i := 0; ; i++ {
			for n, c := range conns {
				if c == nil {
					var err error
					if c, err = net.Dial("tcp", addr); err != nil {
						continue
					}
					conns[n] = c
				}
				_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
				if _, err := c.Write([]byte{head[i%(len(head)-4)]}); err != nil {
					_ = c.Close()
					conns[n] = nil
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	defer func() { close(stop); <-dripped }()
	waitConns(t, s, maxConns)
	hc := &http.Client{Timeout: time.Minute} // a bound, so that a failing run ends
	for i := range 3 {
		resp, err := hc.Get(s.URL + "/healthz")
		if err != nil {
			t.Fatalf("GET /healthz %d behind %d slow clients: %v", i, maxConns, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /healthz %d: %d", i, resp.StatusCode)
		}
	}
	c := &httpapi.Client{BaseURL: s.URL, HTTP: hc}
	j, err := c.Post(ctx, httpapi.PostRequest{Title: "Beside the slow clients", Content: "Posted while slow clients took every connection.\n"})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if j, err = c.Wait(wctx, j.JobID, 10*time.Millisecond); err != nil || j.Status != "done" {
		t.Fatalf("job beside the slow clients: %+v %v", j, err)
	}
	if open, peak := s.HTTP.Conns(); open > maxConns || peak > maxConns {
		t.Fatalf("%d connections open, %d at most; the cap is %d", open, peak, maxConns)
	}
}
