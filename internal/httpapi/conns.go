package httpapi

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// ConnHeadroom is how many of the process's file descriptors the
// default cap on connections (DefaultMaxConns) leaves to the rest of kk
// serve: the worker's git commands (the pipes of each, three of them
// long-running), the SQLite index (database, WAL and shared memory per
// handle), the queue's and the transaction's files, the notes the reads
// and searches hold open, the watch of the tree, the locks and the log.
const ConnHeadroom = 128

// maxConnsFor is the default cap on connections under an open-file
// limit of limit descriptors: the limit less ConnHeadroom, and at least
// half of it (a low limit is shared), never below one.
func maxConnsFor(limit uint64) int {
	n := max(limit/2, limit-min(limit, ConnHeadroom))
	return int(max(1, min(n, 1<<20)))
}

// DefaultMaxConns is the cap on connections open at once when
// Options.MaxConns is 0: from the process's open-file limit
// (RLIMIT_NOFILE), by maxConnsFor.
func DefaultMaxConns() int { return maxConnsFor(openFileLimit()) }

// EvictAfter is how long a connection may wait for its request (its
// headers not all sent: a client sending them a byte at a time, or
// nothing; or kept alive, idle) before, when every connection kk serve
// accepts is taken, it is closed to make room for the next. A client
// sends its headers at once; slow ones (slowloris) held every slot until
// ReadHeaderTimeout, each, and honest requests waited behind them.
var EvictAfter = 2 * time.Second

// limitListener accepts at most cap(slots) connections open at once;
// Accept waits for one to close (the kernel's backlog holds the others),
// or, when one has waited for its request longer than EvictAfter, closes
// the one that has waited longest.
type limitListener struct {
	net.Listener
	slots      chan struct{}
	done       chan struct{}
	closeOnce  sync.Once
	open, peak atomic.Int64
	evictAfter time.Duration // EvictAfter when the listener was made

	mu sync.Mutex
	// waiting holds the open connections that wait for a request (new,
	// or idle between requests), with the time they began to.
	waiting map[*limitConn]time.Time
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{}), evictAfter: EvictAfter, waiting: map[*limitConn]time.Time{}}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for taken := false; !taken; {
		select {
		case l.slots <- struct{}{}:
			taken = true
			continue
		default:
		}
		// Every slot is taken: make room by closing the connection that
		// has waited longest for its request, if it has waited long
		// enough; else wait for a slot, and look again.
		wait := l.evict()
		timer := time.NewTimer(wait)
		select {
		case l.slots <- struct{}{}:
			taken = true
		case <-timer.C:
		case <-l.done:
			timer.Stop()
			return nil, net.ErrClosed
		}
		timer.Stop()
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	n := l.open.Add(1)
	for p := l.peak.Load(); n > p && !l.peak.CompareAndSwap(p, n); p = l.peak.Load() {
	}
	lc := &limitConn{Conn: c}
	lc.release = sync.OnceFunc(func() {
		l.mu.Lock()
		delete(l.waiting, lc)
		l.mu.Unlock()
		l.open.Add(-1)
		<-l.slots
	})
	l.mu.Lock()
	l.waiting[lc] = time.Now()
	l.mu.Unlock()
	return lc, nil
}

// evict closes the connection that has waited longest for its request,
// when it has waited evictAfter or more, and returns how long to wait
// before looking again.
func (l *limitListener) evict() time.Duration {
	now := time.Now()
	var oldest *limitConn
	var since time.Time
	l.mu.Lock()
	for c, t := range l.waiting {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	l.mu.Unlock()
	if oldest == nil {
		return l.evictAfter
	}
	if left := since.Add(l.evictAfter).Sub(now); left > 0 {
		return left
	}
	l.mu.Lock()
	_, still := l.waiting[oldest]
	delete(l.waiting, oldest)
	l.mu.Unlock()
	if still {
		_ = oldest.Close()
	}
	return 0
}

// connState follows each connection's state (http.Server.ConnState): one
// that reads a request, or is handed over, is not waiting for one.
func (l *limitListener) connState(c net.Conn, st http.ConnState) {
	lc, ok := c.(*limitConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch st {
	case http.StateIdle:
		if !lc.closed.Load() {
			l.waiting[lc] = time.Now()
		}
	case http.StateActive, http.StateHijacked, http.StateClosed:
		delete(l.waiting, lc)
	}
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back when it is closed (once).
type limitConn struct {
	net.Conn
	release func()
	closed  atomic.Bool
}

func (c *limitConn) Close() error {
	c.closed.Store(true)
	err := c.Conn.Close()
	c.release()
	return err
}

// Conns returns how many connections are open now and the most that
// were at once, since Serve began (for /metrics and the tests).
func (s *Server) Conns() (open, peak int) {
	l := s.conns.Load()
	if l == nil {
		return 0, 0
	}
	return int(l.open.Load()), int(l.peak.Load())
}
