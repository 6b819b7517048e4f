// Package usage keeps the usage ledger, .ai/kenkeep/.state/usage.jsonl:
// one JSON line for every time an agent session read a node or an index,
// appended by the capture hook, and summarised by `kk usage`.
package usage

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/store"
)

// Document types of a ledger entry.
const (
	TypeLeaf  = "leaf"
	TypeIndex = "index"
)

// Entry is one line of the ledger: document is a node id for a leaf, or a
// path relative to .ai/kenkeep (nodes/cli/index.md) for an index.
type Entry struct {
	Document  string `json:"document"`
	Type      string `json:"type"`
	SessionID string `json:"session_id"`
	UsedAt    string `json:"used_at"`
}

// Path returns the ledger file of a knowledge base.
func Path(k *store.KB) string { return filepath.Join(k.StateDir(), "usage.jsonl") }

// Validate checks an entry before it is recorded.
func (e Entry) Validate() error {
	switch {
	case strings.TrimSpace(e.Document) == "":
		return errors.New(`field "document" is empty`)
	case strings.ContainsAny(e.Document, "\n\r"):
		return errors.New(`field "document" holds a line break`)
	case e.Type != TypeLeaf && e.Type != TypeIndex:
		return fmt.Errorf(`field "type" is %q; want %q or %q`, e.Type, TypeLeaf, TypeIndex)
	case strings.TrimSpace(e.SessionID) == "":
		return errors.New(`field "session_id" is empty`)
	}
	if _, err := time.Parse(time.RFC3339Nano, e.UsedAt); err != nil {
		return fmt.Errorf(`field "used_at" is %q, not an RFC 3339 time`, e.UsedAt)
	}
	return nil
}

// Record appends entries to the ledger of k. Every entry is checked first;
// if one is invalid nothing is written. The lines go out in a single write
// to a file opened with O_APPEND, so concurrent recorders (several agent
// sessions ending at once) never interleave or lose lines, without a lock.
func Record(k *store.KB, entries ...Entry) error {
	if len(entries) == 0 {
		return nil
	}
	var buf bytes.Buffer
	for i, e := range entries {
		if err := e.Validate(); err != nil {
			return fmt.Errorf("usage entry %d: %w", i+1, err)
		}
		line, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("usage entry %d: %w", i+1, err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if err := os.MkdirAll(k.StateDir(), 0o755); err != nil {
		return fmt.Errorf("recording usage: %w", err)
	}
	// A ledger that is not a regular file (a named pipe) is refused at
	// once rather than waited on (atomicfile.Append).
	if err := atomicfile.Append(Path(k), buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("recording usage: %w", err)
	}
	return nil
}

// BadLine is a ledger line that could not be used.
type BadLine struct {
	Line int    `json:"line"`
	Msg  string `json:"message"`
}

// Read returns the ledger's entries in file order, and the lines it had to
// skip (a line cut short by a crash, or edited by hand). A missing ledger
// has no entries.
func Read(k *store.KB) ([]Entry, []BadLine, error) {
	// Opened without waiting, and read only when a regular file: a
	// ledger that is a named pipe would hold the capture hook to its
	// deadline.
	f, err := store.OpenRead(Path(k))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = f.Close() }()
	if fi, err := f.Stat(); err != nil {
		return nil, nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("reading the usage ledger %s: not a regular file (a named pipe, a device or a socket)", Path(k))
	}
	var entries []Entry
	var bad []BadLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			bad = append(bad, BadLine{Line: n, Msg: "not a JSON object: " + err.Error()})
			continue
		}
		if err := e.Validate(); err != nil {
			bad = append(bad, BadLine{Line: n, Msg: err.Error()})
			continue
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading %s: line %d: %w", k.Rel(Path(k)), n+1, err)
	}
	return entries, bad, nil
}
