package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/kk-project/kk/internal/freshness"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/hooks/hookstest"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/session"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

const staleNote = "The knowledge index is out of date"

func sessionStartText(t *testing.T, k *store.KB, now time.Time) string {
	t.Helper()
	r, warnings := request(k, harness.HookInput{})
	r.Now = now
	text, err := SessionStartContext(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if len(*warnings) > 0 {
		t.Fatalf("warnings: %v", *warnings)
	}
	return text
}

func TestSessionStartContext(t *testing.T) {
	k := newKB(t)
	addNode(t, k, contracts.NodeInput{Type: "practice", Title: "Wrap errors with the operation", Description: "Every returned error names what failed.", Body: "Use fmt.Errorf."}, false)
	entry := readFile(t, k.EntryPath())
	_, body, _ := strings.Cut(strings.TrimPrefix(entry, "---\n"), "\n---\n")

	text := sessionStartText(t, k, t0)
	if want := strings.TrimSpace(body) + "\n\n" + snapshotNote + "\n"; text != want {
		t.Fatalf("context:\n%s\nwant:\n%s", text, want)
	}
	mustNotContain(t, text, "nodes_hash", "---")

	r, _ := request(k, harness.HookInput{})
	out, err := SessionStart(context.Background(), r)
	var env struct{ Event, Context string }
	if err != nil || json.Unmarshal(out, &env) != nil || env.Event != "session-start" || env.Context != text {
		t.Fatalf("hook output %q: %v", out, err)
	}
	r.Adapter = &hookstest.Adapter{NoContext: true}
	if out, err := SessionStart(context.Background(), r); err != nil || out != nil {
		t.Fatalf("a harness without a context channel got %q (%v)", out, err)
	}
}

func TestSessionStartStaleness(t *testing.T) {
	k := newKB(t)
	addNode(t, k, contracts.NodeInput{Type: "practice", Title: "First", Description: "d", Body: "b", Folder: "errors"}, false)
	if text := sessionStartText(t, k, t0); strings.Contains(text, staleNote) {
		t.Fatalf("fresh index reported stale:\n%s", text)
	}

	// A leaf written by kk without the index files: the write's index
	// update records the tree's new state, and the drift is seen at once.
	addNode(t, k, contracts.NodeInput{Type: "practice", Title: "Second", Description: "d", Body: "b", Folder: "errors"}, true)
	mustContain(t, sessionStartText(t, k, t0), staleNote, "`kk index rebuild`")

	// Rebuilding makes it fresh again.
	if _, err := txn.Rebuild(context.Background(), k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		t.Fatal(err)
	}
	if text := sessionStartText(t, k, t0); strings.Contains(text, staleNote) {
		t.Fatalf("rebuilt index reported stale:\n%s", text)
	}

	// A change made outside kk (rm, git restore, an editor) is what the
	// index's last sync found: seen once a sync (the background sync
	// session-start starts, any kk command that reads) has looked.
	leaf := filepath.Join(k.NodesDir(), "errors", "practice-second.md")
	if err := os.Remove(leaf); err != nil {
		t.Fatal(err)
	}
	if text := sessionStartText(t, k, t0); strings.Contains(text, staleNote) {
		t.Fatal("the removal was seen before any sync: session-start reads the tree, not the index's summary")
	}
	syncIndex(t, k)
	mustContain(t, sessionStartText(t, k, t0), staleNote)
	if _, err := txn.Rebuild(context.Background(), k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		t.Fatal(err)
	}
	sessionStartText(t, k, t0)

	// An edit in place, which changes no folder, is found by the next
	// sync like any other (it compares every leaf's size and mtime).
	first := filepath.Join(k.NodesDir(), "errors", "practice-first.md")
	f, err := os.OpenFile(first, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("\nEdited in place.\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	syncIndex(t, k)
	mustContain(t, sessionStartText(t, k, t0), staleNote)
}

// syncIndex syncs the branch index as `kk sync` (the background sync)
// would.
func syncIndex(t *testing.T, k *store.KB) {
	t.Helper()
	if _, err := index.ReadTree(context.Background(), k); err != nil {
		if _, bad := errors.AsType[*store.TreeError](err); !bad {
			t.Fatal(err)
		}
	}
}

// Session-start starts a background sync when the index's summary is
// missing or older than backgroundSyncEvery, and not otherwise.
func TestSessionStartStartsABackgroundSync(t *testing.T) {
	k := newKB(t)
	addNode(t, k, contracts.NodeInput{Type: "practice", Title: "First", Description: "d", Body: "b"}, false)
	args := filepath.Join(t.TempDir(), "args")
	script := filepath.Join(t.TempDir(), "kk")
	writeFile(t, script, "#!/bin/sh\necho \"$@\" >> "+args+"\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(k.StateDir(), "prompt-sync")
	start := func() {
		t.Helper()
		r, warnings := request(k, harness.HookInput{})
		r.Executable = func() (string, error) { return script, nil }
		if _, err := SessionStartContext(context.Background(), r); err != nil || len(*warnings) > 0 {
			t.Fatalf("%v %v", err, *warnings)
		}
	}
	start()
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a background sync was started with a summary just written")
	}
	// The summary of a sync two minutes ago is old.
	db := indexDB(t, k)
	old := time.Now().Add(-2 * time.Minute).UTC().Format(time.RFC3339Nano)
	if _, err := db.Exec(`UPDATE meta SET value = ? WHERE key = 'last_sync'`, old); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	start()
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, _ := os.ReadFile(args)
		if string(data) == "sync --root "+k.Root+"\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background sync ran as %q", data)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSessionStartNotes(t *testing.T) {
	t.Run("no ENTRY.md", func(t *testing.T) {
		k := newKB(t)
		if err := os.Remove(k.EntryPath()); err != nil {
			t.Fatal(err)
		}
		text := sessionStartText(t, k, t0)
		mustContain(t, text, "has no ENTRY.md yet", "kk index rebuild", snapshotNote)
		mustNotContain(t, text, staleNote)
	})
	t.Run("ENTRY.md without nodes_hash", func(t *testing.T) {
		k := newKB(t)
		writeFile(t, k.EntryPath(), "---\nschema_version: 3\n---\n# kenkeep\n\nHand written.\n")
		mustContain(t, sessionStartText(t, k, t0), "# kenkeep\n\nHand written.\n\n", "records no nodes_hash")
	})
	t.Run("unreadable leaf", func(t *testing.T) {
		k := newKB(t)
		writeFile(t, filepath.Join(k.NodesDir(), "broken.md"), "---\ntitle: [\n---\n")
		syncIndex(t, k)
		mustContain(t, sessionStartText(t, k, t0), "1 leaf file(s) kk cannot read")
	})
	t.Run("invalid config", func(t *testing.T) {
		k := newKB(t)
		setConfig(t, k, "bogus: 1\n")
		mustContain(t, sessionStartText(t, k, t0), "config.yaml could not be read", `unknown setting "bogus"`, "writes, searches and prompt context stop")
	})
	t.Run("freshness", func(t *testing.T) {
		// kenkeep reports the nodes that describe changed code at session
		// start; kk reports what the last check (kk freshness, status,
		// doctor, the lint tick) recorded.
		k := newKB(t)
		mustNotContain(t, sessionStartText(t, k, t0), "changed since they were written")
		rep := &freshness.Report{Available: true, ConsideredNodes: 3, FlaggedCount: 1, Flagged: []freshness.Flagged{{ID: "practice-retry"}}}
		if err := freshness.Record(k, rep, t0); err != nil {
			t.Fatal(err)
		}
		mustContain(t, sessionStartText(t, k, t0), "When last checked (2026-05-20T08:30:00Z), 1 knowledge node(s) described code that has changed since they were written (practice-retry); `kk freshness` lists them")
		rep.FlaggedCount, rep.Flagged = 0, nil
		if err := freshness.Record(k, rep, t0); err != nil {
			t.Fatal(err)
		}
		mustNotContain(t, sessionStartText(t, k, t0), "changed since they were written")
	})
	t.Run("lint errors", func(t *testing.T) {
		k := newKB(t)
		writeFile(t, lintStatePath(k), `{"sessions_since_lint": 3, "last_run_at": "2026-05-19T10:00:00.000Z", "last_errors": 2, "last_findings": 7}`)
		mustContain(t, sessionStartText(t, k, t0), "The last lint run (2026-05-19T10:00:00.000Z) found 2 error(s)", "`kk lint`")
		writeFile(t, lintStatePath(k), `{"sessions_since_lint": 3, "last_errors": 0, "last_findings": 7}`)
		mustNotContain(t, sessionStartText(t, k, t0), "lint run")
		// kenkeep's own file, as its lint tick writes it.
		writeFile(t, lintStatePath(k), `{"schema_version":1,"sessions_since_last_lint":0,"last_lint_at":"2026-05-20T09:00:00.000Z","last_errors":1,"last_findings":0}`)
		mustContain(t, sessionStartText(t, k, t0), "The last lint run (2026-05-20T09:00:00.000Z) found 1 error(s)")
		st, err := ReadLintState(k)
		if err != nil || st.SessionsSinceLint != 0 || st.LastErrors != 1 {
			t.Fatalf("kenkeep's lint state read as %+v %v", st, err)
		}
		writeFile(t, lintStatePath(k), `{"schema_version":1,"sessions_since_last_lint":4,"last_lint_at":null,"last_errors":1,"last_findings":0}`)
		mustContain(t, sessionStartText(t, k, t0), "The last lint run found 1 error(s)")
		// What kk writes, kenkeep reads: its keys, null before the first run.
		data, err := json.Marshal(LintState{SessionsSinceLint: 2})
		if err != nil || string(data) != `{"schema_version":1,"sessions_since_last_lint":2,"last_lint_at":null,"last_errors":0,"last_findings":0}` {
			t.Fatalf("kk writes %s %v", data, err)
		}
	})
}

// writeLog writes a session log with the given status and curator stamp.
func writeLog(t *testing.T, k *store.KB, n int, status, curated string) {
	t.Helper()
	id := fmt.Sprintf("0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e%02d", n)
	extra := ""
	if curated != "" {
		extra = "curator_processed_at: '" + curated + "'\ncurator_run_id: run-1\n"
	}
	writeFile(t, filepath.Join(k.SessionsDir(), "20260519-0800-"+id+".md"), "---\nschema_version: 1\nsession_id: "+id+
		"\ncaptured_by: stop\ncaptured_at: '2026-05-19T08:00:00.000Z'\ntranscript_hash: sha256:00\nproposal_status: "+status+
		"\nproposal_completed_at: null\nproposal_error: null\nproposal_log: null\nproposals:\n  practice: []\n  map: []\n"+extra+
		"---\n## Transcript\n\n[USER]: hi\n\n## Proposal\n\n(populated by proposal worker)\n")
}

func TestSessionStartCurationNudge(t *testing.T) {
	k := newKB(t)
	setConfig(t, k, "curationThreshold: 3\n")
	writeLog(t, k, 1, session.StatusPending, "")
	writeLog(t, k, 2, session.StatusDone, "")
	writeLog(t, k, 3, session.StatusDone, "2026-05-19T09:00:00.000Z") // curated: not waiting
	writeLog(t, k, 4, session.StatusSkipped, "")
	writeLog(t, k, 5, session.StatusFailed, "")
	writeFile(t, filepath.Join(k.SessionsDir(), "notes.md"), "not a log\n")
	const nudge = "captured session(s) wait for curation"
	if text := sessionStartText(t, k, t0); strings.Contains(text, nudge) {
		t.Fatalf("nudged below the threshold:\n%s", text)
	}
	writeLog(t, k, 6, session.StatusPending, "")
	mustContain(t, sessionStartText(t, k, t0), "3 captured session(s) wait for curation (the threshold is 3)", "/kk-curate")
	var state map[string]any
	if err := json.Unmarshal([]byte(readFile(t, statePath(k))), &state); err != nil || state["last_nudged_at"] != "2026-05-20T08:30:00.000Z" {
		t.Fatalf("state.json: %v %v", state, err)
	}
	// At most hourly.
	mustNotContain(t, sessionStartText(t, k, t0.Add(59*time.Minute)), nudge)
	mustContain(t, sessionStartText(t, k, t0.Add(61*time.Minute)), nudge)
}

// countLogReads counts the session logs read through readLogState until
// the test ends.
func countLogReads(t *testing.T) *int {
	t.Helper()
	n := new(int)
	saved := readLogState
	readLogState = func(path string) (queueState, bool) {
		*n++
		return saved(path)
	}
	t.Cleanup(func() { readLogState = saved })
	return n
}

// TestCurationNudgeReadsOnlyWhatItNeeds: session-start read every session
// log of the folder at every session (0.24 s at 10,000 logs) to count the
// curation backlog. It reads none when a nudge was given within the
// interval or when there are fewer logs than the threshold, and stops
// once the logs left cannot bring the backlog to the threshold; what it
// says is the same.
func TestCurationNudgeReadsOnlyWhatItNeeds(t *testing.T) {
	k := newKB(t)
	setConfig(t, k, "curationThreshold: 5\n")
	reads := countLogReads(t)
	const nudge = "captured session(s) wait for curation"
	for i := range 4 {
		writeLog(t, k, i, session.StatusPending, "")
	}
	mustNotContain(t, sessionStartText(t, k, t0), nudge)
	if *reads != 0 {
		t.Errorf("4 logs under a threshold of 5: %d read", *reads)
	}
	// 20 curated logs captured before those 4: once the 20 are read, the
	// 4 left cannot bring the backlog to 5, and are not read.
	for i := 10; i < 30; i++ {
		writeFile(t, filepath.Join(k.SessionsDir(), fmt.Sprintf("20260518-0800-0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e%02d.md", i)),
			"---\nproposal_status: done\ncurator_processed_at: '2026-05-19T09:00:00.000Z'\n---\n")
	}
	*reads = 0
	mustNotContain(t, sessionStartText(t, k, t0), nudge)
	if *reads != 20 { // 24 logs; after the 20th read (all curated) 4 are left, under 5
		t.Errorf("24 logs, 4 waiting, threshold 5: %d read, want 20", *reads)
	}
	writeLog(t, k, 5, session.StatusDone, "")
	*reads = 0
	mustContain(t, sessionStartText(t, k, t0), "5 captured session(s) wait for curation (the threshold is 5)")
	if *reads != 25 {
		t.Errorf("nudge: %d read, want all 25", *reads)
	}
	*reads = 0
	mustNotContain(t, sessionStartText(t, k, t0.Add(59*time.Minute)), nudge)
	if *reads != 0 {
		t.Errorf("within the interval after a nudge: %d read", *reads)
	}
	mustContain(t, sessionStartText(t, k, t0.Add(61*time.Minute)), "5 captured session(s) wait for curation")
	// An unreadable state is still moved aside when the backlog calls for
	// a nudge, and the nudge is given.
	writeFile(t, statePath(k), `{"last_nudged_at": `)
	r, warnings := request(k, harness.HookInput{})
	r.Now = t0.Add(3 * time.Hour)
	text, err := SessionStartContext(context.Background(), r)
	if err != nil || len(*warnings) != 1 || !strings.Contains((*warnings)[0], "moved aside") {
		t.Fatalf("%v %v", *warnings, err)
	}
	mustNotContain(t, text, nudge)
	mustContain(t, sessionStartText(t, k, t0.Add(3*time.Hour)), "5 captured session(s) wait for curation")
}

// TestHasPendingReadsTheNewestFirst: the drain looks for a log waiting for
// extraction; those are the newest, after thousands extracted long ago.
func TestHasPendingReadsTheNewestFirst(t *testing.T) {
	k := newKB(t)
	for i := range 30 {
		writeLog(t, k, i, session.StatusDone, "2026-05-19T09:00:00.000Z")
	}
	reads := countLogReads(t)
	if p, err := hasPending(k.SessionsDir()); p || err != nil {
		t.Fatalf("%v %v", p, err)
	}
	if *reads != 30 {
		t.Errorf("none pending: %d read, want 30", *reads)
	}
	writeLog(t, k, 30, session.StatusPending, "")
	*reads = 0
	if p, err := hasPending(k.SessionsDir()); !p || err != nil {
		t.Fatalf("%v %v", p, err)
	}
	if *reads != 1 {
		t.Errorf("the newest pending: %d read, want 1", *reads)
	}
}

func TestReadQueueState(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, head string
		want       queueState
		ok         bool
	}{
		{"plain", "proposal_status: pending\n", queueState{status: "pending"}, true},
		{"quoted and curated", "proposal_status: 'done'\ncurator_processed_at: \"2026-05-19T09:00:00.000Z\"\n", queueState{status: "done", curated: true}, true},
		{"null stamp", "proposal_status: done\ncurator_processed_at: null\n", queueState{status: "done"}, true},
		{"nested keys do not count", "proposals:\n  proposal_status: done\nproposal_status: failed\n", queueState{status: "failed"}, true},
		{"unknown status", "proposal_status: archived\n", queueState{status: "archived"}, false},
		{"no status", "session_id: x\n", queueState{}, false},
	} {
		p := filepath.Join(dir, tc.name+".md")
		writeFile(t, p, "---\n"+tc.head+"---\n## Transcript\n\nproposal_status: done\n")
		if got, ok := readQueueState(p); got != tc.want || ok != tc.ok {
			t.Errorf("%s: %+v %v", tc.name, got, ok)
		}
	}
	// The first read's answer is the streamed one, wherever the front
	// matter ends: within the first read, at its edge, past it, or with
	// the file.
	long := strings.Repeat("x", headChunk)
	for i, content := range []string{
		"---\nproposal_status: done\n---",
		"---\nproposal_status: done\n---\n",
		"---\nproposal_status: done\n",
		"---\nproposal_status: done",
		"---",
		"",
		"\uFEFF---\r\nproposal_status: pending\r\n---\r\n",
		"---\nnote: " + long + "\nproposal_status: done\ncurator_processed_at: x\n---\n",
		"---\nproposal_status: done\nnote: " + long[:headChunk-len("---\nproposal_status: done\nnote: ")-1] + "\n---\n",
		"---\nproposal_status: done\nnote: " + long[:headChunk-len("---\nproposal_status: done\nnote: ")] + "\n---\n",
		"---\nproposal_status: done\nnote: " + long[:headChunk-len("---\nproposal_status: done\nnote: ")-4] + "\n---",
		"---\nproposal_status: done\nnote: " + long[:headChunk-len("---\nproposal_status: done\nnote: ")-5] + "\n---",
	} {
		p := filepath.Join(dir, fmt.Sprintf("edge%d.md", i))
		writeFile(t, p, content)
		q, ok := readQueueState(p)
		sq, sok := streamQueueState(p)
		if q != sq || ok != sok {
			t.Errorf("case %d: read %+v %v, streamed %+v %v", i, q, ok, sq, sok)
		}
	}
	if q, ok := readQueueState(filepath.Join(dir, "edge7.md")); !ok || q != (queueState{status: "done", curated: true}) {
		t.Errorf("front matter past the first read: %+v %v", q, ok)
	}
	writeFile(t, filepath.Join(dir, "nofm.md"), "proposal_status: done\n")
	writeFile(t, filepath.Join(dir, "open.md"), "---\nproposal_status: done\n")
	for _, name := range []string{"nofm.md", "open.md", "missing.md"} {
		if _, ok := readQueueState(filepath.Join(dir, name)); ok {
			t.Errorf("%s read as a log", name)
		}
	}
}

// The summary session-start reads is the tree's nodes hash (as ENTRY.md
// records it) after every kind of change, once the index has synced, and
// counts the leaves a tree read reports as problems.
func TestSummaryMatchesTheTree(t *testing.T) {
	k := newKB(t)
	addNode(t, k, contracts.NodeInput{Type: "practice", Title: "First", Description: "d", Body: "b", Folder: "errors"}, false)
	addNode(t, k, contracts.NodeInput{Type: "practice", Title: "Other", Description: "d", Body: "b", Folder: "net/retry"}, false)
	summary := func() index.Summary {
		t.Helper()
		sum, err := index.ReadSummary(context.Background(), k)
		if err != nil || !sum.Known {
			t.Fatalf("summary: %+v %v", sum, err)
		}
		return sum
	}
	full := func() string {
		t.Helper()
		tr, err := k.ReadTree(store.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return indexfiles.NodesHash(tr)
	}
	for _, step := range []struct {
		name   string
		change func()
		stale  bool
	}{
		{"a leaf written with the index", func() {
			addNode(t, k, contracts.NodeInput{Type: "practice", Title: "Second", Description: "d", Body: "b", Folder: "errors"}, false)
		}, false},
		{"a leaf written without the index", func() {
			addNode(t, k, contracts.NodeInput{Type: "practice", Title: "Third", Description: "d", Body: "b", Folder: "errors"}, true)
		}, true},
		{"a new folder", func() {
			addNode(t, k, contracts.NodeInput{Type: "practice", Title: "Deep", Description: "d", Body: "b", Folder: "db/pool"}, true)
		}, true},
		{"rebuilt", func() {
			if _, err := txn.Rebuild(context.Background(), k, txn.Meta{Command: "bench"}, txn.RebuildOptions{}); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a folder removed by hand", func() {
			_ = os.RemoveAll(filepath.Join(k.NodesDir(), "net"))
			syncIndex(t, k)
		}, true},
	} {
		step.change()
		sum := summary()
		if want := full(); sum.Hash != want || sum.Invalid != 0 {
			t.Errorf("%s: %+v, the full read says %s", step.name, sum, want)
		}
		_, entryHash, _, _ := readEntry(k)
		if (entryHash != sum.Hash) != step.stale {
			t.Errorf("%s: stale %v, want %v", step.name, entryHash != sum.Hash, step.stale)
		}
	}

	// A copy of a leaf under another name reuses its id: the tree read
	// skips both leaves, and the summary counts both.
	first := filepath.Join(k.NodesDir(), "errors", "practice-first.md")
	writeFile(t, filepath.Join(k.NodesDir(), "db", "copy.md"), readFile(t, first))
	syncIndex(t, k)
	if sum := summary(); sum.Invalid != 2 || sum.Hash != "" {
		t.Errorf("a duplicate id: %+v", sum)
	}
	if err := os.Remove(filepath.Join(k.NodesDir(), "db", "copy.md")); err != nil {
		t.Fatal(err)
	}
	syncIndex(t, k)
	if sum := summary(); sum.Invalid != 0 || sum.Hash != full() {
		t.Fatalf("after removing the copy: %+v", sum)
	}
	// A leaf kk cannot read.
	writeFile(t, filepath.Join(k.NodesDir(), "errors", "broken.md"), "---\ntitle: [\n---\n")
	syncIndex(t, k)
	if sum := summary(); sum.Invalid != 1 || sum.Hash != "" {
		t.Errorf("an unreadable leaf: %+v", sum)
	}
}

// Session start asks the agent once, not every session, to backfill
// phrasings when a quarter of the leaves or more have none.
func TestSessionStartPhrasingsNudge(t *testing.T) {
	k := newKB(t)
	for i := range nudgeMinLeaves {
		addNode(t, k, contracts.NodeInput{Type: "practice", Title: fmt.Sprintf("Practice number %d", i), Description: "d", Body: "b",
			Phrasings: []string{fmt.Sprintf("how do I follow practice %d", i)}}, false)
	}
	mustNotContain(t, sessionStartText(t, k, t0), "kk_phrasings")
	for i := range nudgeMinLeaves / 2 {
		addNode(t, k, contracts.NodeInput{Type: "practice", Title: fmt.Sprintf("Unphrased practice %d", i), Description: "d", Body: "b"}, false)
	}
	text := sessionStartText(t, k, t0)
	want := fmt.Sprintf("%d of %d leaves (33%%) have no kk_phrasings", nudgeMinLeaves/2, nudgeMinLeaves+nudgeMinLeaves/2)
	if !strings.Contains(text, want) || !strings.Contains(text, "kk-phrasings skill") {
		t.Fatalf("no backfill note (want %q):\n%s", want, text)
	}
	mustNotContain(t, sessionStartText(t, k, t0.Add(48*time.Hour)), "kk_phrasings")
}

// A branch index another kk is creating (kk's post-checkout hook syncs a
// branch seen for the first time in the background, while the session
// the checkout belongs to starts) is a database without its tables yet:
// session-start reads it as an index not synced yet, without a warning.
func TestSessionStartIndexBeingCreated(t *testing.T) {
	k := newKB(t)
	addNode(t, k, contracts.NodeInput{Type: "practice", Title: "First", Description: "d", Body: "b"}, false)
	branch, err := index.CurrentBranch(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	path := index.Path(k, branch)
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	// What the creating process has made when it has opened the file and
	// not yet committed the schema: an empty file.
	writeFile(t, path, "")
	sum, err := index.ReadSummary(context.Background(), k)
	if err != nil || sum.Known {
		t.Fatalf("an index without its tables read as %+v, %v; want unknown, no error", sum, err)
	}
	r, warnings := request(k, harness.HookInput{SessionID: sid})
	if _, err := SessionStart(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if len(*warnings) > 0 {
		t.Fatalf("warnings: %q", *warnings)
	}
}
