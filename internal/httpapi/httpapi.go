// Package httpapi is kk serve's HTTP face: knowledged's API (the same
// routes, field names, status codes, error texts and path rules, so that
// its kc and mcp-knowledged clients work unchanged) over kk's knowledge
// tree, plus /healthz and /metrics.
//
// Writes (POST, PUT and DELETE /content) are accepted into the durable
// job queue and answered 202 with a job id once the job is on disk; one
// worker hands each job to Backend.Apply. Reads go to the Backend at
// once. Every failure, unknown routes and wrong methods included, is
// answered with a JSON body {"error": "…"}.
//
// Unlike knowledged, the server keeps web pages out (guard.go: the Host
// of every request, the Origin and Content-Type of writes), decodes
// bodies strictly (op.DecodeStrict), and bounds the requests of each
// class that run at once, writing answers that list notes a note at a
// time (limits.go, stream.go), so that its memory stays bounded.
package httpapi

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/op"
)

// DefaultMaxBody caps a request body.
const DefaultMaxBody = 1 << 20

// Server timeouts. RequestTimeout bounds a handler's work (a model call
// included); WriteTimeout leaves room to send its answer.
var (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 30 * time.Second
	RequestTimeout    = 170 * time.Second
	WriteTimeout      = 180 * time.Second
	IdleTimeout       = 60 * time.Second
	// ShutdownTimeout bounds the wait for open requests at shutdown.
	ShutdownTimeout = 15 * time.Second
	// BodyTimeout bounds the read of a write's body (a route with a
	// method other than GET), from the moment its handler starts: the
	// body is read before the request waits for its class's slot, so
	// that a client sending it slowly holds a connection, never a slot.
	BodyTimeout = 20 * time.Second
	// StallTimeout bounds how long one write of an answer may wait for a
	// client that reads nothing of it: a client that stops reading is cut
	// then, and its request's slot is free (else it held the slot for
	// the whole WriteTimeout). The WriteTimeout still bounds the answer.
	StallTimeout = 20 * time.Second
)

// Options set up a Server.
type Options struct {
	Backend Backend
	Queue   *jobqueue.Queue
	// Token, when set, must come as "Authorization: Bearer <token>" on
	// every request but GET /healthz. Serve refuses to listen anywhere
	// but loopback without one. A request that carries it passes the
	// guard against web pages (guard.go) too.
	Token string
	// Addr is the address the server was asked to listen on (kk serve
	// --addr): a request may name it in its Host, besides the loopback
	// names at the port served.
	Addr string
	// MaxBody caps request bodies (default 1 MiB).
	MaxBody int64
	// Limits bound the requests of each class running at once (zero
	// fields: DefaultLimits').
	Limits Limits
	// MaxConns caps the connections open at once (0: DefaultMaxConns):
	// one more waits to be accepted until one closes.
	MaxConns int
	Logger   *slog.Logger
	// Page, when set, is a read-only web page answering GET and HEAD on
	// PagePaths (ServeMux patterns without a method, none of them an API
	// path): kk serve mounts kk browse's page at "/" this way. It shares
	// the API's token rule.
	Page      http.Handler
	PagePaths []string
	// PageSearchPaths are the page's paths (among PagePaths) that run a
	// search, bounded with GET /search (Limits.Searches).
	PageSearchPaths []string
}

// Server answers the API.
type Server struct {
	opts    Options
	handler http.Handler
	metrics *requestMetrics
	// hosts is what a request's Host may be, set by Serve once the
	// listener's port is known.
	hosts atomic.Pointer[hostSet]
	gates map[int]*gate // by route class
	// bodies is the room of the write bodies read at once (Limits.Bodies).
	bodies *bodyRoom
	// conns is the listener Serve accepts from, bounded by MaxConns.
	conns atomic.Pointer[limitListener]
	// stallTimeout and bodyTimeout are StallTimeout and BodyTimeout when
	// the server was made (a request in flight never reads the variables).
	stallTimeout, bodyTimeout time.Duration
}

// New returns a server over o.Backend and o.Queue.
func New(o Options) (*Server, error) {
	if o.Backend == nil || o.Queue == nil {
		return nil, errors.New("httpapi: a server needs a backend and a queue")
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns()
	}
	l, d := &o.Limits, DefaultLimits
	l.Reads, l.Searches = cmp.Or(l.Reads, d.Reads), cmp.Or(l.Searches, d.Searches)
	l.Models, l.Writes = cmp.Or(l.Models, d.Models), cmp.Or(l.Writes, d.Writes)
	l.Queue, l.Wait = cmp.Or(l.Queue, d.Queue), cmp.Or(l.Wait, d.Wait)
	// The room holds at least one body of the largest size (and the
	// chunk that finds its end).
	l.Bodies = max(cmp.Or(l.Bodies, d.Bodies), int(o.MaxBody)+BodyChunk-int(o.MaxBody)%BodyChunk)
	s := &Server{opts: o, stallTimeout: StallTimeout, bodyTimeout: BodyTimeout, metrics: newRequestMetrics(), gates: map[int]*gate{
		classRead:   newGate("read", l.Reads, l.Queue, l.Wait),
		classSearch: newGate("search", l.Searches, l.Queue, l.Wait),
		classModel:  newGate("model", l.Models, l.Queue, l.Wait),
		classWrite:  newGate("write", l.Writes, l.Queue, l.Wait),
	}, bodies: newBodyRoom(l.Bodies, l.Wait)}
	s.handler = s.routes()
	return s, nil
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// route is one entry of the API.
type route struct {
	method, pattern string
	handle          func(http.ResponseWriter, *http.Request)
	class           int // of Limits
}

func (s *Server) routeTable() []route {
	return []route{
		{"POST", "/content", s.postContent, classWrite},
		{"PUT", "/content", s.putContent, classWrite},
		{"DELETE", "/content", s.deleteContent, classWrite},
		{"GET", "/content", s.getContent, classRead},
		{"GET", "/search", s.search, classSearch},
		{"GET", "/answer", s.answer, classModel},
		{"POST", "/ask", s.ask, classModel},
		{"GET", "/jobs/{id}", s.getJob, classNone},
		{"GET", "/posts/recents", s.recentPosts, classRead},
		{"GET", "/tags", s.tags, classRead},
		{"GET", "/healthz", s.healthz, classNone},
		{"GET", "/metrics", s.serveMetrics, classNone},
	}
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	allowed := map[string][]string{} // pattern → methods
	for _, r := range s.routeTable() {
		mux.Handle(r.method+" "+r.pattern, s.wrap(r.pattern, r.method != "GET", r.class, http.HandlerFunc(r.handle)))
		allowed[r.pattern] = append(allowed[r.pattern], r.method)
	}
	// The page's paths, any method: to tell a path of the page asked
	// with another method than GET or HEAD (405) from no path (404).
	pagePaths := http.NewServeMux()
	if s.opts.Page != nil {
		page := s.wrap("page", false, classRead, s.opts.Page)
		pageSearch := s.wrap("page", false, classSearch, s.opts.Page)
		for _, p := range s.opts.PagePaths {
			if slices.Contains(s.opts.PageSearchPaths, p) {
				mux.Handle("GET "+p, pageSearch)
			} else {
				mux.Handle("GET "+p, page)
			}
			pagePaths.Handle(p, http.NotFoundHandler())
		}
	}
	// Whatever no route matches: a known path with another method is 405,
	// anything else 404, both in JSON. The page's paths are known too
	// (TRACE / was 404).
	mux.Handle("/", s.wrap("other", false, classNone, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := pagePaths.Handler(r); pattern != "" {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on "+r.URL.Path)
			return
		}
		for pattern, methods := range allowed {
			if matchPath(pattern, r.URL.Path) {
				if slices.Contains(methods, "GET") {
					methods = append(slices.Clone(methods), "HEAD")
				}
				w.Header().Set("Allow", strings.Join(slices.Sorted(slices.Values(methods)), ", "))
				writeError(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on "+r.URL.Path)
				return
			}
		}
		writeError(w, http.StatusNotFound, "not found: "+r.URL.Path)
	})))
	return mux
}

// matchPath matches a route pattern, where "{id}" stands for one non-empty
// segment.
func matchPath(pattern, p string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "{id}"); ok {
		rest, found := strings.CutPrefix(p, prefix)
		return found && rest != "" && !strings.Contains(rest, "/")
	}
	return pattern == p
}

// wrap adds what every route shares: the bearer token check, the guard
// against web pages (guard.go; write routes also check Origin and
// Content-Type), the bound of its class (Limits), the body cap, the
// request deadline, a recovered panic as a JSON 500, and the request
// counter for /metrics.
func (s *Server) wrap(name string, write bool, class int, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK, rc: http.NewResponseController(w), until: time.Now().Add(WriteTimeout), stall: s.stallTimeout}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.opts.Logger.Error("handler panicked", "route", name, "panic", fmt.Sprint(p))
				if !rec.wrote {
					writeError(rec, http.StatusInternalServerError, "internal error")
				}
			}
			s.metrics.count(name, rec.status)
		}()
		// No answer is to be read as another type than it says (an
		// answer echoes what the request gave, a path or a Host, with <
		// and > as they are), nor loaded by a page of another site as a
		// script, a style sheet or an image.
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cross-Origin-Resource-Policy", "same-origin")
		authed := s.opts.Token != "" && validBearer(r.Header.Get("Authorization"), s.opts.Token)
		if s.opts.Token != "" && name != "/healthz" && !authed {
			w.Header().Set("WWW-Authenticate", `Bearer realm="kk"`)
			writeError(rec, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		if !authed {
			if g := s.guard(r, write); g != nil {
				writeError(rec, g.status, g.msg)
				return
			}
		}
		if write {
			// The body is read, whole and bounded, before the request
			// takes its class's slot: a client that sends its body
			// slowly (or never) holds no slot meanwhile, and honest
			// writers go on.
			body, held, ok := s.readBody(w, rec, r)
			defer s.bodies.give(held)
			if !ok {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		} else {
			r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBody)
		}
		ctx, cancel := context.WithTimeout(r.Context(), RequestTimeout)
		defer cancel()
		if g := s.gates[class]; g != nil {
			if !g.enter(ctx) {
				g.busy(rec)
				return
			}
			defer g.leave()
		}
		if name == "page" {
			// The page reads the knowledge base on its own: when the
			// backend cannot answer now (its folder gone), neither can
			// the page, and it must not open the index at the old place.
			if u, ok := s.opts.Backend.(unavailable); ok {
				if err := u.Unavailable(); err != nil {
					writeError(rec, http.StatusServiceUnavailable, err.Error())
					return
				}
			}
		}
		h.ServeHTTP(rec, r.WithContext(ctx))
	})
}

// readBody reads a write's body, at most MaxBody bytes, within
// BodyTimeout, taking room for it (Limits.Bodies) a BodyChunk at a time
// before it reads it; it returns the body and the chunks of room taken
// (given back by the caller once the request ends), false when it
// answered the request instead: 413 for a body over the cap (at once for
// one whose Content-Length says so), 408 for one
// that did not come in time, 503 for one that found no room, 400 for
// one that could not be read. w is the connection's writer (its read
// deadline is set through it), rec the recorder answers go through.
func (s *Server) readBody(w http.ResponseWriter, rec *statusRecorder, r *http.Request) ([]byte, int, bool) {
	if r.ContentLength > s.opts.MaxBody {
		// Declared over the cap: answered from the headers, without
		// waiting for (or reading) a body that will not be taken, and
		// the connection closed, its body unread.
		rec.Header().Set("Connection", "close")
		writeError(rec, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", s.opts.MaxBody))
		return nil, 0, false
	}
	rc := http.NewResponseController(w)
	timer := time.NewTimer(s.bodyTimeout)
	defer timer.Stop()
	_ = rc.SetReadDeadline(time.Now().Add(s.bodyTimeout))
	defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	body := http.MaxBytesReader(w, r.Body, s.opts.MaxBody)
	var buf bytes.Buffer
	held := 0
	var err error
	for {
		if !s.bodies.take(r.Context(), timer.C) {
			if r.Context().Err() != nil {
				return nil, held, false // the client is gone
			}
			rec.Header().Set("Retry-After", "1")
			rec.Header().Set("Connection", "close")
			writeError(rec, http.StatusServiceUnavailable, fmt.Sprintf("too many request bodies being read at once (%d MiB); try again shortly", cap(s.bodies.tokens)*BodyChunk>>20))
			return nil, held, false
		}
		held++
		var n int64
		n, err = io.CopyN(&buf, body, BodyChunk)
		if err != nil || n < BodyChunk {
			break
		}
	}
	var tooBig *http.MaxBytesError
	switch {
	case err == nil, errors.Is(err, io.EOF):
		return buf.Bytes(), held, true
	case errors.As(err, &tooBig):
		writeError(rec, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", tooBig.Limit))
	case errors.Is(err, os.ErrDeadlineExceeded):
		rec.Header().Set("Connection", "close")
		writeError(rec, http.StatusRequestTimeout, fmt.Sprintf("the request body did not come within %s; nothing was queued", s.bodyTimeout))
	default:
		writeError(rec, http.StatusBadRequest, "invalid JSON body: reading it: "+err.Error())
	}
	return nil, held, false
}

// unavailable is a backend that can say it cannot answer now (an error
// matching ErrUnavailable), for what reads the knowledge base beside it
// (the web page).
type unavailable interface {
	Unavailable() error
}

// statusRecorder records an answer's status for /metrics, and gives
// each write of the answer StallTimeout to go out (within the request's
// WriteTimeout, until), so that a client that stops reading is cut
// instead of holding its request's slot.
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
	rc     *http.ResponseController
	until  time.Time
	stall  time.Duration // the server's StallTimeout
}

// progress moves the write deadline StallTimeout ahead of now, never past
// until.
func (r *statusRecorder) progress() {
	if r.rc == nil {
		return
	}
	d := time.Now().Add(r.stall)
	if d.After(r.until) {
		d = r.until
	}
	_ = r.rc.SetWriteDeadline(d)
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.progress()
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	r.progress()
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// writeJSON answers v as JSON, ending in a newline.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// decodeBody reads a JSON body into v with the strict decode every face
// uses for a parameter object (op.DecodeStrict, the core of
// schema.Decode): valid UTF-8, one JSON object, no key given twice (in
// any case: Go's decode takes a key for its field whatever its case), no
// NUL character in a string, no unknown field and nothing after the
// object. A body over the cap is 413; any other failure is 400 "invalid
// JSON body: …" naming the problem (an empty body: "…: EOF", as
// knowledged says it).
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	raw, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", tooBig.Limit))
		return false
	case err != nil:
		writeError(w, http.StatusBadRequest, "invalid JSON body: reading it: "+err.Error())
		return false
	case len(bytes.TrimSpace(raw)) == 0:
		writeError(w, http.StatusBadRequest, "invalid JSON body: EOF")
		return false
	}
	if err := op.DecodeStrict(raw, v); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+op.ErrorOf(err).Message)
		return false
	}
	return true
}

// ListenAddr checks that addr may be served with token: anything but a
// loopback address needs one.
func ListenAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if token != "" || isLoopback(host) {
		return nil
	}
	return fmt.Errorf("listening on %s, which is not a loopback address, needs a bearer token (--token-file)", addr)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve answers the API on ln and runs the worker until ctx is done; then
// it stops accepting requests, lets the current job finish, and returns.
// The worker hands each job to the backend; a worker error (the queue's
// folder unwritable) stops the server.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := ListenAddr(ln.Addr().String(), s.opts.Token); err != nil {
		return err
	}
	s.hosts.Store(newHostSet(ln.Addr().String(), s.opts.Addr))
	bounded := newLimitListener(ln, s.opts.MaxConns)
	s.conns.Store(bounded)
	s.opts.Logger.Info("connections open at once are capped", "max_conns", s.opts.MaxConns)
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		ConnState:         bounded.connState,
		ErrorLog:          slog.NewLogLogger(s.opts.Logger.Handler(), slog.LevelWarn),
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := s.opts.Queue.Run(ctx, s.apply); err != nil {
			errs <- fmt.Errorf("job worker: %w", err)
		}
		cancel()
	}()
	go func() {
		defer wg.Done()
		if err := srv.Serve(bounded); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs <- err
		}
		cancel()
	}()
	<-ctx.Done()
	shutdownCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer stop()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// apply runs one job from the queue through the backend.
func (s *Server) apply(ctx context.Context, w *jobqueue.Work) (string, error) {
	var req JobRequest
	if err := json.Unmarshal(w.Payload, &req); err != nil {
		return "", fmt.Errorf("the job's request is damaged: %w", err)
	}
	job := &Job{ID: w.Job.ID, Op: w.Job.Op, Request: req, Created: w.Job.Created, Attempt: w.Job.Attempts}
	job.OnTouch(w.Touch)
	job.OnDefer(w.Defer)
	job.OnNote(w.Note)
	return s.opts.Backend.Apply(ctx, job)
}

// enqueue accepts a write and answers 202 with the job.
func (s *Server) enqueue(w http.ResponseWriter, op string, req JobRequest, dedup bool) {
	payload, err := json.Marshal(req)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "failed to enqueue: "+err.Error())
		return
	}
	key := ""
	if dedup {
		sum := sha256.Sum256(append([]byte(op+"\x00"), payload...))
		key = hex.EncodeToString(sum[:])
	}
	j, dup, err := s.opts.Queue.Enqueue(jobqueue.Request{Op: op, Path: req.Path, Payload: payload, DedupKey: key})
	if err != nil {
		s.opts.Logger.Error("enqueue failed", "op", op, "error", err)
		if msg := unwritable(err); msg != "" {
			// Enqueue leaves nothing of a job it could not write: the
			// client may post again once there is room.
			w.Header().Set("Retry-After", DiskFullRetryAfter)
			writeError(w, http.StatusServiceUnavailable, msg)
			return
		}
		writeError(w, http.StatusInternalServerError, "failed to enqueue: "+err.Error())
		return
	}
	s.opts.Logger.Info("job accepted", "job_id", j.ID, "op", op, "path", req.Path, "dedup", dup)
	writeJSON(w, http.StatusAccepted, jobAccepted{JobID: j.ID, Status: string(j.Status)})
}

// DiskFullRetryAfter is the Retry-After, in seconds, of a write refused
// because the disk is full: room comes back when someone makes it.
const DiskFullRetryAfter = "60"

// unwritable is the answer to a write that could not be queued because
// the machine cannot take the queue's files: a full disk (ENOSPC), an
// exhausted disk quota (EDQUOT), a file-size limit (EFBIG), or a queue
// folder that cannot be written (kk's .state/ made read-only: EACCES or
// EPERM; a read-only file system: EROFS); "" for any other failure.
func unwritable(err error) string {
	const notQueued = ": the job was not queued; "
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "the disk is full (no space left on device)" + notQueued + "free space on the server's disk and post again"
	case errors.Is(err, syscall.EDQUOT):
		return "the disk is full for kk serve's user (disk quota exceeded)" + notQueued + "free space on the server's disk and post again"
	case errors.Is(err, syscall.EFBIG):
		return "a file would pass kk serve's file-size limit (ulimit -f, systemd's LimitFSIZE)" + notQueued + "raise the limit and post again"
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return ""
	}
	dir := filepath.Dir(pe.Path)
	switch {
	case errors.Is(err, syscall.EROFS):
		return "kk serve's queue folder " + dir + " is on a read-only file system" + notQueued + "make it writable and post again"
	case errors.Is(err, fs.ErrPermission):
		return "kk serve's queue folder " + dir + " cannot be written (permission denied)" + notQueued + "make it writable by kk serve's user and post again"
	}
	return ""
}

type jobAccepted struct {
	JobID  string `json:"job_id"`
	Status string `json:"status"`
}
