package httpapi

import (
	"net"
	"sync"
	"sync/atomic"
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

// limitListener accepts at most cap(slots) connections open at once;
// Accept waits for one to close (the kernel's backlog holds the others).
type limitListener struct {
	net.Listener
	slots      chan struct{}
	done       chan struct{}
	closeOnce  sync.Once
	open, peak atomic.Int64
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	n := l.open.Add(1)
	for p := l.peak.Load(); n > p && !l.peak.CompareAndSwap(p, n); p = l.peak.Load() {
	}
	return &limitConn{Conn: c, release: sync.OnceFunc(func() { l.open.Add(-1); <-l.slots })}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back when it is closed (once).
type limitConn struct {
	net.Conn
	release func()
}

func (c *limitConn) Close() error {
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
