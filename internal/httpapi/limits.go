package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"
)

// Limits bound the work requests do at once, so that memory stays
// bounded whatever the request mix: each route belongs to a class, and a
// class runs at most so many requests at a time. A request that finds its
// class full waits for a slot, with at most Queue others, for at most
// Wait; past either it is answered 503 with Retry-After. A write's body
// is read (at most MaxBody, within BodyTimeout) before it waits, so that
// a client sending its body slowly holds its connection, never a slot;
// the bytes of the bodies held at once are bounded by Bodies.
//
// Answers are written a note at a time (writeDocs), so an answer holds at
// most one note (node.MaxSize, 1 MiB) and a small encoding buffer: the
// notes all the answers being written hold together are at most Reads +
// Searches of them.
type Limits struct {
	// Reads: GET /content, /tags, /posts/recents and the web page.
	Reads int
	// Searches: GET /search and the web page's searches. A search ranks
	// its candidates (at most three times its limit, at least 50) with
	// their text in memory before it answers.
	Searches int
	// Models: GET /answer and POST /ask, which call the model (and read
	// up to five notes for it).
	Models int
	// Writes: POST, PUT and DELETE /content (a body of up to MaxBody,
	// decoded, then queued).
	Writes int
	// Bodies bounds the bytes of write bodies read and held at once
	// (each is read before its request waits for its slot): a body takes
	// room a BodyChunk at a time, before it reads it, and holds it until
	// its request ends; one that finds no room waits for it (Wait), and
	// is then answered 503. A slow body holds the room of what it sent.
	Bodies int
	// Queue is how many requests of one class may wait for a slot.
	Queue int
	// Wait is how long a request waits for a slot.
	Wait time.Duration
}

// DefaultLimits are kk serve's.
var DefaultLimits = Limits{Reads: 8, Searches: 4, Models: 4, Writes: 8, Bodies: 64 << 20, Queue: 64, Wait: 30 * time.Second}

// BodyChunk is the unit of Limits.Bodies: a body takes room this much at
// a time.
const BodyChunk = 32 << 10

// bodyRoom is Limits.Bodies: one token per BodyChunk.
type bodyRoom struct {
	tokens chan struct{}
	wait   time.Duration
}

func newBodyRoom(bytes int, wait time.Duration) *bodyRoom {
	return &bodyRoom{tokens: make(chan struct{}, max(1, bytes/BodyChunk)), wait: wait}
}

// take takes one chunk of room, waiting for it for at most the room's
// wait (and until deadline or ctx's end); false when none came.
func (b *bodyRoom) take(ctx context.Context, deadline <-chan time.Time) bool {
	select {
	case b.tokens <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(b.wait)
	defer t.Stop()
	select {
	case b.tokens <- struct{}{}:
		return true
	case <-t.C:
	case <-deadline:
	case <-ctx.Done():
	}
	return false
}

// give gives n chunks of room back.
func (b *bodyRoom) give(n int) {
	for range n {
		<-b.tokens
	}
}

// The classes of routes. Unbounded routes (/healthz, /metrics,
// /jobs/{id}, the 404 and 405 answers) hold next to nothing.
const (
	classNone = iota
	classRead
	classSearch
	classModel
	classWrite
)

// gate bounds one class of requests.
type gate struct {
	name    string
	slots   chan struct{}
	waiting atomic.Int64
	queue   int64
	wait    time.Duration
}

func newGate(name string, n, queue int, wait time.Duration) *gate {
	return &gate{name: name, slots: make(chan struct{}, max(1, n)), queue: int64(max(0, queue)), wait: wait}
}

// enter takes a slot, waiting for one if it must; false when the class
// stays full (or the request ends first).
func (g *gate) enter(ctx context.Context) bool {
	select {
	case g.slots <- struct{}{}:
		return true
	default:
	}
	if g.waiting.Add(1) > g.queue {
		g.waiting.Add(-1)
		return false
	}
	defer g.waiting.Add(-1)
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

func (g *gate) leave() { <-g.slots }

// busy answers a request its class turned away.
func (g *gate) busy(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("too many %s requests at once (%d running, %d waiting); try again shortly", g.name, cap(g.slots), g.queue))
}
