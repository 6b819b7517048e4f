package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
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
	// version is the protocol version the session negotiated (the
	// answer to initialize), "" before.
	version string
	// queue holds the messages of a batch not handed to the SDK yet;
	// batchOf maps the id of each request of a batch to its slot in the
	// batch's answer, written as one array once each request has its own.
	queue   []jsonrpc.Message
	batchOf map[jsonrpc.ID]batchSlot
}

// batchReply is the answer to a batch being gathered: one slot per
// request of the batch and per element refused, in the batch's order.
type batchReply struct {
	slots   []json.RawMessage // empty: a request not answered, or cancelled
	pending int               // requests not answered yet
}

// batchSlot is where a request's answer goes in its batch's.
type batchSlot struct {
	b *batchReply
	i int
}

// batchesUntil is the first protocol version without JSON-RPC batches;
// sessions at an earlier version take them, as MCP 2025-03-26 asks.
const batchesUntil = "2025-06-18"

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
		if len(c.queue) > 0 {
			msg := c.queue[0]
			c.queue = c.queue[1:]
			return msg, nil
		}
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
		if ref != nil && ref.Batch && c.batches() {
			if err := c.batch(ctx, r.frame); err != nil {
				return nil, err
			}
			continue
		}
		if ref == nil && msg != nil {
			ref = c.admit(msg, nil)
		}
		if ref != nil {
			if err := c.refuse(ctx, ref, int64(len(r.frame))); err != nil {
				return nil, err
			}
			continue
		}
		if msg == nil {
			continue // a blank line
		}
		if !c.cancelAllowed(msg) {
			continue
		}
		return msg, nil
	}
}

// admit records a request read: open, its id in use, and its slot in
// the answer to its batch (nil: none). It returns the refusal of a
// request whose id is that of a request not answered yet: the go-sdk
// drops such a request, unanswered, and an answer carrying the id would
// read as the answer to the request still open, so the refusal has a
// null id.
func (c *lineConn) admit(msg jsonrpc.Message, slot *batchSlot) *refusal {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inUse[req.ID] {
		id, _ := json.Marshal(req.ID.Raw())
		return invalid(nil, "the id %s is that of a request not answered yet; ids of open requests must differ", id)
	}
	c.open[req.ID]++
	c.inUse[req.ID] = true
	if req.Method == "initialize" {
		c.initialize = req.ID
		// The version the answer will name, when the SDK supports the
		// one asked for: a client may write its next lines before it
		// reads the answer (which then sets the version again).
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		// A second initialize, which the SDK refuses, changes nothing.
		if c.version == "" && json.Unmarshal(req.Params, &p) == nil && slices.Contains(mcp.SupportedProtocolVersions(), p.ProtocolVersion) {
			c.version = p.ProtocolVersion
		}
	}
	if slot != nil {
		if c.batchOf == nil {
			c.batchOf = map[jsonrpc.ID]batchSlot{}
		}
		c.batchOf[req.ID] = *slot
		slot.b.pending++
	}
	return nil
}

// cancelAllowed reports whether msg goes on to the SDK: not a
// notifications/cancelled naming the open initialize request (MCP forbids
// cancelling it; the go-sdk would cancel it all the same, and its answer
// would be dropped). A cancellation it lets through is recorded (cancel).
func (c *lineConn) cancelAllowed(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.IsCall() || req.Method != "notifications/cancelled" || c.cancel(req.Params) {
		return true
	}
	c.log.Warn("ignored a notifications/cancelled naming the initialize request, which MCP says is never cancelled")
	return false
}

// batches reports whether the session takes batches: its protocol
// version is one before batchesUntil.
func (c *lineConn) batches() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version != "" && c.version < batchesUntil
}

// batch reads a batch (a JSON array that is not empty, valid JSON): each
// element is decoded as a line is, and the valid messages go to the SDK
// one by one (queue). The answer, one array, is written when the last
// request of the batch has its own (Write), or at once when the batch
// holds no request, only refused elements; a batch of notifications and
// responses gets none. initialize is refused in a batch, as MCP asks.
func (c *lineConn) batch(ctx context.Context, frame []byte) error {
	var elems []json.RawMessage
	if err := json.Unmarshal(frame, &elems); err != nil {
		return c.refuse(ctx, parseError("%v", err), int64(len(frame)))
	}
	b := &batchReply{}
	var msgs []jsonrpc.Message
	for _, e := range elems {
		msg, ref := decodeFrame(e)
		switch {
		case ref != nil && ref.Batch:
			ref = invalid(nil, "a batch holds messages, not batches")
		case ref == nil && msg == nil:
			ref = invalid(nil, "an element of a batch is empty")
		}
		if req, ok := msg.(*jsonrpc.Request); ref == nil && ok && req.Method == "initialize" {
			id, _ := json.Marshal(req.ID.Raw())
			ref = invalid(id, "initialize is never part of a batch")
		}
		slot := &batchSlot{b: b, i: len(b.slots)}
		if ref == nil {
			ref = c.admit(msg, slot)
		}
		switch {
		case ref != nil && ref.Quiet:
			c.log.Warn("ignored a message", "reason", ref.Message, "bytes", len(e))
		case ref != nil:
			c.log.Warn("refused a message", "code", ref.Code, "reason", ref.Message, "bytes", len(e))
			b.slots = append(b.slots, bytes.TrimSuffix(ref.reply(), []byte("\n")))
		case !c.cancelAllowed(msg):
		default:
			if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
				b.slots = append(b.slots, nil)
			}
			msgs = append(msgs, msg)
		}
	}
	c.queue = append(c.queue, msgs...)
	c.mu.Lock()
	done := b.pending == 0
	c.mu.Unlock()
	if done {
		return c.writeBatch(ctx, b)
	}
	return nil
}

// writeBatch writes the answer to a batch whose requests all have their
// answers: the slots that hold one, as one array; nothing when none does.
func (c *lineConn) writeBatch(ctx context.Context, b *batchReply) error {
	var parts [][]byte
	for _, s := range b.slots {
		if len(s) > 0 {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	line := append([]byte{'['}, bytes.Join(parts, []byte{','})...)
	return c.write(ctx, append(line, ']', '\n'))
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
	var slot batchSlot
	inBatch, batchDone := false, false
	if isResp {
		// The answer is on its way: from now on the client may reuse the
		// id, having read the answer.
		delete(c.inUse, resp.ID)
		if resp.ID == c.initialize {
			c.initialize = jsonrpc.ID{}
			var r struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if resp.Error == nil && json.Unmarshal(resp.Result, &r) == nil {
				c.version = r.ProtocolVersion
			}
		}
		// An answer to a request of a batch goes into the batch's answer.
		if slot, inBatch = c.batchOf[resp.ID]; inBatch {
			delete(c.batchOf, resp.ID)
			if !dropped {
				slot.b.slots[slot.i] = data
			}
			slot.b.pending--
			batchDone = slot.b.pending == 0
		}
	}
	c.mu.Unlock()
	switch {
	case batchDone:
		err = c.writeBatch(ctx, slot.b)
	case inBatch:
	case dropped:
		c.log.Debug("dropped the answer to a request the client cancelled", "id", resp.ID.Raw())
	default:
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
