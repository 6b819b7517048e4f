package store

import (
	"errors"
	"io"
	"sync"
)

// memo holds the process caches of one knowledge base: the open index
// handles, the graph read at an index generation, the traceability
// snapshot, the hints of where each id's leaf lives. A long-running
// process (kk mcp, kk serve) makes its KB once and every request reuses
// them; a command-line run makes one KB and they die with it. They live
// here, on the value that stands for the knowledge base, instead of in
// package globals keyed by path, so two knowledge bases in one process
// (tests, kk serve for several repositories) never share or evict each
// other's state, and Close releases them.
type memo struct {
	mu     sync.Mutex
	values map[any]any
	order  []any // creation order, for Close
}

func newMemo() *memo { return &memo{values: map[any]any{}} }

// Memo returns the value k keeps under key, making it with mk on first
// use. Each package keys its cache with an unexported type of its own, so
// keys never collide. The value must be safe for concurrent use: every
// caller of Memo gets the same one. A KB not made by New or Find (a zero
// value) keeps nothing: every call makes a fresh value.
func Memo[T any](k *KB, key any, mk func() *T) *T {
	if k == nil || k.memo == nil {
		return mk()
	}
	m := k.memo
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.values[key]; ok {
		return v.(*T)
	}
	v := mk()
	m.values[key] = v
	m.order = append(m.order, key)
	return v
}

// Close releases what k keeps open (the index handles of its memo) and
// forgets every cached value. The KB stays usable: a later call opens
// what it needs again.
func (k *KB) Close() error {
	if k == nil || k.memo == nil {
		return nil
	}
	m := k.memo
	m.mu.Lock()
	values, order := m.values, m.order
	m.values, m.order = map[any]any{}, nil
	m.mu.Unlock()
	var errs []error
	for i := len(order) - 1; i >= 0; i-- {
		if c, ok := values[order[i]].(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// skips is what the reads of a knowledge base skipped, for the face to
// warn about once.
type skips struct {
	mu   sync.Mutex
	seen map[string]bool
	list []error
}

type skipsKey struct{}

// NoteSkipped records leaves a read of k skipped (each a problem of a
// Tree, or of the index sync): a face (a command, kk mcp, kk serve) warns
// about each once, with TakeSkipped, so that the core needs no output of its
// own.
func (k *KB) NoteSkipped(problems []error) {
	if len(problems) == 0 {
		return
	}
	s := Memo(k, skipsKey{}, func() *skips { return &skips{seen: map[string]bool{}} })
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range problems {
		if msg := p.Error(); !s.seen[msg] {
			s.seen[msg] = true
			s.list = append(s.list, p)
		}
	}
}

// TakeSkipped returns, and forgets, the problems noted since the last call,
// in the order they were first noted.
func (k *KB) TakeSkipped() []error {
	s := Memo(k, skipsKey{}, func() *skips { return &skips{seen: map[string]bool{}} })
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.list
	s.list = nil
	return out
}
