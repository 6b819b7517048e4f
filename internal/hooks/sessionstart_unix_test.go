//go:build unix

package hooks

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/nobodytest"
)

// On a machine too busy for the whole call, session-start prints at its
// deadline ENTRY.md and the snapshot note, read first, instead of
// nothing: here the notes for the user (one: config.yaml is a named pipe,
// which kk refuses to read) go to a notifier that does not return until
// the test ends, past the deadline.
func TestSessionStartAnswersAtTheDeadline(t *testing.T) {
	k := newKB(t)
	addNode(t, k, contracts.NodeInput{Type: "practice", Title: "Wrap errors with the operation", Description: "Every returned error names what failed.", Body: "Use fmt.Errorf."}, false)
	want := sessionStartText(t, k, t0)

	cfg := k.ConfigPath()
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	// The worker the deadline abandons stays blocked in the notifier,
	// writing nothing more, until the test ends.
	hung := make(chan struct{})
	t.Cleanup(func() { close(hung) })
	inv, out, _ := invocation(t, k.Root, "session-start", `{"session_id":"`+sid+`","cwd":"`+k.Root+`"}`)
	inv.Notify = func(title, body string) error { <-hung; return nil }
	inv.Options = Options{Deadlines: map[harness.Event]time.Duration{harness.SessionStart: 300 * time.Millisecond}}
	Run(context.Background(), inv)
	var env struct{ Event, Context string }
	if err := json.Unmarshal(out.Bytes(), &env); err != nil || env.Context != want {
		t.Fatalf("stdout %q (%v), want the context\n%s", out, err, want)
	}
	ds := diagnostics(t, k)
	if len(ds) != 1 || ds[0].Phase != "deadline" || !strings.HasSuffix(ds[0].Error, "printed the answer found before") {
		t.Fatalf("diagnostics %+v", ds)
	}
}

// TestSessionStartEntryNotAFile: an ENTRY.md that is a named pipe, or a
// link to a device such as /dev/zero (a broken or hostile checkout), was
// read whole: the pipe held the call to its deadline and /dev/zero grew
// the hook to hundreds of MB, and either way the session got no context.
// Such an ENTRY.md is not read: the session gets the stand-in catalog and
// a note naming the problem, at once.
func TestSessionStartEntryNotAFile(t *testing.T) {
	for name, make := range map[string]func(path string) error{
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"/dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		t.Run(name, func(t *testing.T) {
			k := newKB(t)
			if err := os.Remove(k.EntryPath()); err != nil {
				t.Fatal(err)
			}
			if err := make(k.EntryPath()); err != nil {
				t.Fatal(err)
			}
			inv, out, _ := invocation(t, k.Root, "session-start", `{"session_id":"`+sid+`","cwd":"`+k.Root+`"}`)
			inv.Options = Options{Deadlines: map[harness.Event]time.Duration{harness.SessionStart: time.Minute}}
			Run(context.Background(), inv)
			var env struct{ Event, Context string }
			if err := json.Unmarshal(out.Bytes(), &env); err != nil {
				t.Fatalf("stdout %q: %v", out, err)
			}
			if !strings.Contains(env.Context, "has no ENTRY.md yet") || !strings.Contains(env.Context, "ENTRY.md is not a regular file") {
				t.Fatalf("context:\n%s", env.Context)
			}
			if ds := diagnostics(t, k); len(ds) != 0 {
				t.Fatalf("diagnostics %+v", ds)
			}
		})
	}
}

// A state.json that is a named pipe (a broken or hostile checkout) held
// session-start to its deadline, read whole: it is refused at once, as
// every file kk reads from the knowledge base, and the session gets its
// context in time.
func TestSessionStartStateNotAFile(t *testing.T) {
	k := newKB(t)
	if err := os.MkdirAll(filepath.Dir(statePath(k)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(statePath(k), 0o600); err != nil {
		t.Fatal(err)
	}
	inv, out, _ := invocation(t, k.Root, "session-start", `{"session_id":"`+sid+`","cwd":"`+k.Root+`"}`)
	inv.Options = Options{Deadlines: map[harness.Event]time.Duration{harness.SessionStart: 5 * time.Second}}
	Run(context.Background(), inv)
	var env struct{ Event, Context string }
	if err := json.Unmarshal(out.Bytes(), &env); err != nil || env.Context == "" {
		t.Fatalf("stdout %q: %v", out, err)
	}
	for _, d := range diagnostics(t, k) {
		if d.Phase == "deadline" {
			t.Fatalf("session-start met its deadline: %+v", d)
		}
	}
}

// A hook-error log that is a named pipe (a broken or hostile checkout, or
// a user's `mkfifo` to watch it) held the hook for ever: the log was
// opened for writing, which waits for a reader, and the deadline's own
// diagnostic waited behind it. The log is refused at once, the problem
// goes to stderr, and every event answers as it would without it.
func TestHookErrorLogNotAFile(t *testing.T) {
	for _, tc := range []struct{ event, payload string }{
		{"prompt-context", "not json"},
		{"session-start", "not json"},
		{"capture", `{"session_id":"` + sid + `"}`},
	} {
		t.Run(tc.event, func(t *testing.T) {
			k := newKB(t)
			log := LogPath(k, t0)
			if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(log, 0o600); err != nil {
				t.Fatal(err)
			}
			inv, out, errb := invocation(t, k.Root, tc.event, tc.payload)
			Run(context.Background(), inv)
			mustContain(t, errb.String(), `kk hook: {"ts":`, `"event":"`+tc.event+`"`)
			if tc.event == "session-start" && !strings.Contains(out.String(), "kenkeep") {
				t.Errorf("session-start printed %q, want ENTRY.md's context", out)
			}
			if fi, err := os.Lstat(log); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("the log's named pipe was replaced: %v, %v", fi, err)
			}
		})
	}
}

// A freshness record (.state/freshness.json) that is a named pipe held
// session-start to its deadline (it was read with os.ReadFile, which
// waits for a writer), and the notes for the user were lost: it is
// refused at once, the problem is logged naming the file, and the
// session gets its whole context in time.
func TestSessionStartFreshnessNotAFile(t *testing.T) {
	k := newKB(t)
	record := filepath.Join(k.StateDir(), "freshness.json")
	if err := os.MkdirAll(filepath.Dir(record), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(record, 0o600); err != nil {
		t.Fatal(err)
	}
	inv, out, _ := invocation(t, k.Root, "session-start", `{"session_id":"`+sid+`","cwd":"`+k.Root+`"}`)
	inv.Options = Options{Deadlines: map[harness.Event]time.Duration{harness.SessionStart: 5 * time.Second}}
	Run(context.Background(), inv)
	var env struct{ Event, Context string }
	if err := json.Unmarshal(out.Bytes(), &env); err != nil || env.Context == "" {
		t.Fatalf("stdout %q: %v", out, err)
	}
	logged := false
	for _, d := range diagnostics(t, k) {
		if d.Phase == "deadline" {
			t.Fatalf("session-start met its deadline: %+v", d)
		}
		logged = logged || d.Phase == "freshness" && strings.Contains(d.Error, "freshness.json")
	}
	if !logged {
		t.Errorf("no freshness diagnostic naming the file: %+v", diagnostics(t, k))
	}
}

// readOnly makes dir and everything under it read-only (chmod -R a-w) for
// the rest of the test.
func readOnly(t *testing.T, dir string) {
	t.Helper()
	var paths []string
	if err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		paths = append(paths, p)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for i := len(paths) - 1; i >= 0; i-- {
		fi, err := os.Lstat(paths[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(paths[i], fi.Mode().Perm()&^0o222); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, p := range paths {
			if fi, err := os.Lstat(p); err == nil {
				_ = os.Chmod(p, fi.Mode().Perm()|0o200)
			}
		}
	})
}

// TestSessionStartWithAReadOnlyState: a knowledge base whose .state/ is
// read-only (a teammate's checkout on a read-only mount, a CI cache) still
// gets its session-start context, with the note that the index is out of
// date, and every problem the hook logs names the file and what to do.
// Before, the summary of an index closed cleanly (no write-ahead log left)
// could not be read ("attempt to write a readonly database", naming
// neither the file nor the fix), and the session mark's permission error
// said nothing of the fix.
func TestSessionStartWithAReadOnlyState(t *testing.T) {
	if !nobodytest.Unprivileged(t) {
		return
	}
	for _, closed := range []bool{true, false} {
		t.Run(fmt.Sprintf("closed=%v", closed), func(t *testing.T) {
			k := newKB(t)
			addNode(t, k, contracts.NodeInput{Type: "practice", Title: "Wrap errors with the operation", Description: "Every returned error names what failed.", Body: "Use fmt.Errorf."}, false)
			addNode(t, k, contracts.NodeInput{Type: "practice", Title: "Never panic", Description: "Handlers return errors.", Body: "No panics."}, true)
			branch, err := index.CurrentBranch(context.Background(), k)
			if err != nil {
				t.Fatal(err)
			}
			db := index.Path(k, branch)
			if closed {
				// What the last process to close the index leaves: the
				// database alone, its write-ahead log checkpointed.
				sdb, err := sql.Open("sqlite", db)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := sdb.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
					t.Fatal(err)
				}
				if err := sdb.Close(); err != nil {
					t.Fatal(err)
				}
				for _, f := range []string{db + "-wal", db + "-shm"} {
					if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
						t.Fatal(err)
					}
				}
			} else if _, err := os.Stat(db + "-shm"); err != nil {
				t.Fatalf("the index has no shared-memory file to make read-only: %v", err)
			}
			readOnly(t, k.StateDir())
			inv, out, errb := invocation(t, k.Root, "session-start", `{"session_id":"`+sid+`","cwd":"`+k.Root+`"}`)
			inv.Options = Options{Deadlines: map[harness.Event]time.Duration{harness.SessionStart: time.Minute}}
			Run(context.Background(), inv)
			var env struct{ Event, Context string }
			if err := json.Unmarshal(out.Bytes(), &env); err != nil {
				t.Fatalf("stdout %q (%v); stderr %s", out, err, errb)
			}
			mustContain(t, env.Context, "Wrap errors with the operation", "The knowledge index is out of date")
			ds := diagnostics(t, k)
			for _, d := range ds {
				mustContain(t, d.Error, filepath.Join(".ai", "kenkeep", ".state"), "chmod -R u+w .ai/kenkeep/.state")
			}
			for _, d := range ds {
				if strings.Contains(d.Error, "readonly database") {
					t.Errorf("the index could not be read: %+v", d)
				}
			}
		})
	}
}
