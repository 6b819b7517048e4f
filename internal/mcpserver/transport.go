package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainTimeout bounds how long a server whose client closed its input
// waits for the answers to requests already read.
const drainTimeout = time.Minute

// Run serves one session over in and out (newline-delimited JSON-RPC)
// until the client closes its input or its end of the connection, or ctx
// ends. Neither counts as an error. Malformed messages are answered with a
// JSON-RPC error and the session goes on; log receives a warning for each.
func Run(ctx context.Context, srv *mcp.Server, in io.Reader, out io.Writer, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	err := srv.Run(ctx, &lineTransport{in: in, out: out, log: log, max: MaxFrameBytes})
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// lineTransport is kk's stdio transport. The go-sdk's own (v1.8.0) ends the
// session at the first line it can't decode, with no answer; this one
// decodes each line itself (decodeFrame), answers a bad one with a JSON-RPC
// error, and hands the SDK only valid messages.
type lineTransport struct {
	in  io.Reader
	out io.Writer
	log *slog.Logger
	max int // frame cap in bytes
}

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{
		out:    t.out,
		log:    t.log,
		frames: make(chan frameOrErr),
		closed: make(chan struct{}),
		open:   map[jsonrpc.ID]int{},
		inUse:  map[jsonrpc.ID]bool{},
	}
	go c.readLoop(newFrameReader(t.in, t.max))
	return c, nil
}

type frameOrErr struct {
	frame []byte
	err   error
}

// lineConn is one session's connection. Reads happen on their own
// goroutine so that Close unblocks Read at once, whatever in is (the
// goroutine itself stays blocked until in yields, as in the SDK).
type lineConn struct {
	out    io.Writer
	log    *slog.Logger
	frames chan frameOrErr

	writeMu sync.Mutex

	closeOnce sync.Once
	closed    chan struct{}

	// open counts, by id, the requests read whose answer is not written
	// yet. A client may write its requests and close its input at once; at
	// end of input Read waits for them to be answered (or drainTimeout)
	// before it reports the end, which ends the session, so none is
	// dropped. An id counts twice when a client that read an answer
	// reuses its id before the server's write of that answer returned.
	mu   sync.Mutex
	open map[jsonrpc.ID]int
	idle chan struct{} // closed when open empties; nil when no one waits
	// cancelled holds the open requests the client cancelled
	// (notifications/cancelled): their answers are not written, as MCP
	// asks of the receiver of a cancellation.
	cancelled map[jsonrpc.ID]bool
	// inUse holds the ids of the requests read whose answer has not been
	// handed to the writer yet: a request reusing one is refused. (open
	// keeps an id until its answer is written, for drain.)
	inUse map[jsonrpc.ID]bool
	// initialize is the id of the initialize request while it is open.
	initialize jsonrpc.ID
}

func (c *lineConn) readLoop(fr *frameReader) {
	for {
		frame, err := fr.next()
		select {
		case c.frames <- frameOrErr{frame, err}:
		case <-c.closed:
			return
		}
		var big *oversizeError
		if err != nil && !errors.As(err, &big) {
			return
		}
	}
}

// Read returns the next valid message, answering every refused frame on
// the way.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		var r frameOrErr
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case r = <-c.frames:
		}
		var big *oversizeError
		switch {
		case errors.As(r.err, &big):
			if err := c.refuse(ctx, oversize(big), big.Size); err != nil {
				return nil, err
			}
			continue
		case errors.Is(r.err, io.EOF):
			c.drain(ctx)
			return nil, io.EOF
		case peerGone(r.err):
			// The client closed its end of a socket: nothing written from
			// now on would reach it.
			c.log.Debug("the client closed the connection", "error", r.err)
			return nil, io.EOF
		case r.err != nil:
			return nil, fmt.Errorf("reading the client's messages: %w", r.err)
		}
		msg, ref := decodeFrame(r.frame)
		if ref != nil {
			if err := c.refuse(ctx, ref, int64(len(r.frame))); err != nil {
				return nil, err
			}
			continue
		}
		if msg == nil {
			continue // a blank line
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			c.mu.Lock()
			dup := c.inUse[req.ID]
			if !dup {
				c.open[req.ID]++
				c.inUse[req.ID] = true
				if req.Method == "initialize" {
					c.initialize = req.ID
				}
			}
			c.mu.Unlock()
			if dup {
				// The go-sdk drops a request whose id is in use, unanswered.
				// It is refused here, with a null id: an answer carrying the
				// id would read as the answer to the request still open.
				id, _ := json.Marshal(req.ID.Raw())
				if err := c.refuse(ctx, invalid(nil, "the id %s is that of a request not answered yet; ids of open requests must differ", id), int64(len(r.frame))); err != nil {
					return nil, err
				}
				continue
			}
		} else if ok && req.Method == "notifications/cancelled" && !c.cancel(req.Params) {
			// MCP forbids cancelling initialize; the go-sdk would cancel
			// it all the same, and its answer would be dropped.
			c.log.Warn("ignored a notifications/cancelled naming the initialize request, which MCP says is never cancelled")
			continue
		}
		return msg, nil
	}
}

// refuse logs a refused frame and, unless it is quiet, answers it.
func (c *lineConn) refuse(ctx context.Context, r *refusal, size int64) error {
	if r.Quiet {
		c.log.Warn("ignored a message", "reason", r.Message, "bytes", size)
		return nil
	}
	c.log.Warn("refused a message", "code", r.Code, "reason", r.Message, "bytes", size)
	return c.write(ctx, r.reply())
}

// drain waits until every request read has its answer, for at most
// drainTimeout.
func (c *lineConn) drain(ctx context.Context) {
	c.mu.Lock()
	if len(c.open) == 0 {
		c.mu.Unlock()
		return
	}
	if c.idle == nil {
		c.idle = make(chan struct{})
	}
	idle := c.idle
	c.mu.Unlock()
	timer := time.NewTimer(drainTimeout)
	defer timer.Stop()
	select {
	case <-idle:
	case <-c.closed:
	case <-ctx.Done():
	case <-timer.C:
		c.log.Warn("the client closed its input; gave up waiting for the answers still due", "after", drainTimeout)
	}
}

// cancel records the request a notifications/cancelled names, when it is
// still open; the notification goes on to the go-sdk, which cancels the
// request's context. It returns false, recording nothing, when the
// request named is the open initialize request: that notification is not
// to reach the go-sdk.
func (c *lineConn) cancel(params json.RawMessage) bool {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == nil {
		return true
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[id] > 0 && c.initialize.IsValid() && id == c.initialize {
		return false
	}
	if c.open[id] > 0 {
		if c.cancelled == nil {
			c.cancelled = map[jsonrpc.ID]bool{}
		}
		c.cancelled[id] = true
	}
	return true
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	msg = withErrorCode(msg)
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	resp, isResp := msg.(*jsonrpc.Response)
	c.mu.Lock()
	dropped := isResp && c.cancelled[resp.ID]
	if isResp {
		// The answer is on its way: from now on the client may reuse the
		// id, having read the answer.
		delete(c.inUse, resp.ID)
		if resp.ID == c.initialize {
			c.initialize = jsonrpc.ID{}
		}
	}
	c.mu.Unlock()
	if dropped {
		c.log.Debug("dropped the answer to a request the client cancelled", "id", resp.ID.Raw())
	} else {
		err = c.write(ctx, append(data, '\n'))
	}
	if isResp {
		c.mu.Lock()
		if c.open[resp.ID]--; c.open[resp.ID] <= 0 {
			delete(c.open, resp.ID)
		}
		delete(c.cancelled, resp.ID)
		if len(c.open) == 0 && c.idle != nil {
			close(c.idle)
			c.idle = nil
		}
		c.mu.Unlock()
	}
	return err
}

// withErrorCode gives an error answer without a JSON-RPC code one: the
// go-sdk answers a request the session's state does not allow (one before
// initialize, a second initialize) with a plain error, which goes out as
// code 0, a code JSON-RPC does not define and no client can act on. Such
// an answer becomes -32600, invalid request, its message kept.
func withErrorCode(msg jsonrpc.Message) jsonrpc.Message {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error == nil {
		return msg
	}
	var werr *jsonrpc.Error
	if errors.As(resp.Error, &werr) && werr.Code != 0 {
		return msg
	}
	out := *resp
	out.Error = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: resp.Error.Error()}
	return &out
}

// write writes one line. When the client is gone, it closes the
// connection and returns an error that reads as io.EOF, which ends the
// session without an error.
func (c *lineConn) write(ctx context.Context, line []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.writeMu.Lock()
	_, err := c.out.Write(line)
	c.writeMu.Unlock()
	if err != nil && peerGone(err) {
		_ = c.Close()
		return clientGoneError{err}
	}
	return err
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

func (c *lineConn) SessionID() string { return "" }

// clientGoneError is a write that failed because the client closed its end.
// It matches io.EOF: the SDK ends the session on it without an error.
type clientGoneError struct{ err error }

func (e clientGoneError) Error() string   { return "the client closed the connection: " + e.err.Error() }
func (e clientGoneError) Unwrap() []error { return []error{io.EOF, e.err} }
