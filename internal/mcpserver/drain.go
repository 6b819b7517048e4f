package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// drainTimeout bounds how long a server whose client closed stdin waits
// for the answers to requests already read.
const drainTimeout = time.Minute

// pending counts the requests read from the client that have no answer
// yet. A client may write its requests and close stdin at once; the SDK
// ends the session at end of input, so the reader holds the end of input
// back until every request read so far has been answered (or drainTimeout
// passed), and none is dropped.
type pending struct {
	mu   sync.Mutex
	open map[string]bool // ids of requests read and not yet answered
	done *sync.Cond
}

func newPending() *pending {
	p := &pending{open: map[string]bool{}}
	p.done = sync.NewCond(&p.mu)
	return p
}

// message is the part of a JSON-RPC message that tells requests from
// responses.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func (p *pending) lines(data []byte, fn func(m message)) {
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		var m message
		if len(bytes.TrimSpace(line)) > 0 && json.Unmarshal(line, &m) == nil && len(m.ID) > 0 && string(m.ID) != "null" {
			fn(m)
		}
	}
}

// reader wraps the client's input: it notes every request, and answers the
// end of input only once they are all answered.
type drainReader struct {
	r    io.Reader
	p    *pending
	part []byte // an incomplete last line
}

func (d *drainReader) Read(b []byte) (int, error) {
	n, err := d.r.Read(b)
	if n > 0 {
		buf := append(d.part, b[:n]...)
		i := bytes.LastIndexByte(buf, '\n')
		d.p.mu.Lock()
		d.p.lines(buf[:i+1], func(m message) {
			if m.Method != "" {
				d.p.open[string(m.ID)] = true
			}
		})
		d.p.mu.Unlock()
		d.part = append([]byte(nil), buf[i+1:]...)
	}
	if err == io.EOF {
		d.p.wait(drainTimeout)
	}
	return n, err
}

// wait blocks until no request is open, or for at most limit.
func (p *pending) wait(limit time.Duration) {
	timer := time.AfterFunc(limit, func() {
		p.mu.Lock()
		clear(p.open)
		p.mu.Unlock()
		p.done.Broadcast()
	})
	defer timer.Stop()
	p.mu.Lock()
	for len(p.open) > 0 {
		p.done.Wait()
	}
	p.mu.Unlock()
}

// drainWriter wraps the output: every response written closes its request.
type drainWriter struct {
	w    io.Writer
	p    *pending
	part []byte
}

func (d *drainWriter) Write(b []byte) (int, error) {
	n, err := d.w.Write(b)
	buf := append(d.part, b[:n]...)
	i := bytes.LastIndexByte(buf, '\n')
	d.p.mu.Lock()
	d.p.lines(buf[:i+1], func(m message) {
		if m.Method == "" {
			delete(d.p.open, string(m.ID))
		}
	})
	d.p.mu.Unlock()
	d.p.done.Broadcast()
	d.part = append([]byte(nil), buf[i+1:]...)
	return n, err
}
