package curate

// Facts of kenkeep's tests/commands/curate-dedup.test.ts (v1.17.0), asserted
// against kk's curate-dedup core. testdata/kenkeep holds kenkeep's curate
// fixture (input, survivors and conflict goldens) so that kk is held to the
// bytes kenkeep writes.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/session"
	"github.com/kk-project/kk/internal/store"
)

// kenkeepDedup runs curate-dedup over kenkeep's fixture with its run id and
// clock, using dirs of its own as kenkeep's test does (--sessions-dir,
// --conflicts-dir, --output).
func kenkeepDedup(t *testing.T, k *store.KB, sessionsDir, inputName, sessionID string) (*DedupResult, string, string, error) {
	t.Helper()
	actions, err := DecodeActions(inputName, readFixture(t, "kenkeep/"+inputName))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	out := filepath.Join(tmp, "survivors.json")
	conflicts := filepath.Join(tmp, "conflicts")
	res, err := RunDedup(context.Background(), k, actions, DedupOptions{
		RunID: "FIXED-RUN-ID", SessionID: sessionID, SessionsDir: sessionsDir,
		ConflictsDir: conflicts, Output: out, Now: fixedNow,
	})
	return res, out, conflicts, err
}

// kenkeepSession writes a session log the way kenkeep's test seeds one:
// extracted (done unless status says otherwise), with no candidates.
func kenkeepSession(t *testing.T, dir, id, status string) string {
	t.Helper()
	name := "session-" + id + ".md"
	src := "---\nschema_version: 1\nsession_id: " + id + "\ncaptured_by: stop\ncaptured_at: '2026-05-12T10:00:00Z'\n" +
		"transcript_hash: 'sha256:" + id + "'\nproposal_status: " + status + "\nproposal_completed_at: '2026-05-12T10:00:00Z'\n" +
		"proposal_error: null\nproposal_log: _logs/proposal/" + id + ".jsonl\nproposals:\n  practice: []\n  map: []\n---\n## Proposal\n"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

func TestKenkeepDedupGolden(t *testing.T) {
	var first []string
	for run := range 3 {
		k := newKB(t)
		res, out, conflicts, err := kenkeepDedup(t, k, filepath.Join(t.TempDir(), "_sessions"), "input.json", "")
		if err != nil {
			t.Fatal(err)
		}
		if res.Kept != 3 || res.Conflicts != 1 || res.Stamped != 0 || res.RunID != "FIXED-RUN-ID" {
			t.Fatalf("run %d: got %+v, want kept 3, conflicts 1, stamped 0", run, res)
		}
		survivors := mustRead(t, out)
		if want := readFixture(t, "kenkeep/survivors.golden.json"); !bytes.Equal(survivors, want) {
			t.Errorf("survivors differ from kenkeep's golden:\n--- got ---\n%s\n--- want ---\n%s", survivors, want)
		}
		conflict := mustRead(t, filepath.Join(conflicts, "FIXED-RUN-ID-1.md"))
		if want := readFixture(t, "kenkeep/conflict-FIXED-RUN-ID-1.golden.md"); !bytes.Equal(conflict, want) {
			t.Errorf("conflict file differs from kenkeep's golden:\n--- got ---\n%s\n--- want ---\n%s", conflict, want)
		}
		if _, err := os.Stat(filepath.Join(conflicts, "FIXED-RUN-ID-2.md")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a second conflict file was written (%v)", err)
		}
		summary, _ := json.Marshal(res)
		got := []string{string(summary), string(survivors), string(conflict)}
		if run == 0 {
			first = got
		} else if strings.Join(got, "\x00") != strings.Join(first, "\x00") {
			t.Errorf("run %d differs from run 0", run)
		}
	}
}

func TestKenkeepDedupStampsExtractedSessions(t *testing.T) {
	k := newKB(t)
	dir := filepath.Join(t.TempDir(), "_sessions")
	alpha := kenkeepSession(t, dir, "alpha", "done")
	beta := kenkeepSession(t, dir, "beta", "done")
	notDone := kenkeepSession(t, dir, "not-done", "pending")
	res, _, _, err := kenkeepDedup(t, k, dir, "input.json", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Stamped != 2 {
		t.Errorf("stamped %d sessions, want 2", res.Stamped)
	}
	for _, p := range []string{alpha, beta} {
		l := readLog(t, p)
		if l.CuratorProcessedAt != "2026-05-23T12:00:00.000Z" || l.CuratorRunID != "FIXED-RUN-ID" {
			t.Errorf("%s: curator_processed_at %q, curator_run_id %q", filepath.Base(p), l.CuratorProcessedAt, l.CuratorRunID)
		}
	}
	if src := string(mustRead(t, notDone)); strings.Contains(src, "curator_") {
		t.Errorf("a session not extracted was stamped:\n%s", src)
	}
}

func TestKenkeepDedupSessionIDScopesStamping(t *testing.T) {
	const filtered = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
	t.Run("only the filtered session is stamped", func(t *testing.T) {
		k := newKB(t)
		dir := filepath.Join(t.TempDir(), "_sessions")
		a := kenkeepSession(t, dir, filtered, "done")
		b := kenkeepSession(t, dir, "beta-other", "done")
		// kk refuses actions of other sessions under --session-id (kenkeep
		// did not look); the scoped input names only the filtered session.
		if _, _, _, err := kenkeepDedup(t, k, dir, "input-scoped.json", filtered); err != nil {
			t.Fatal(err)
		}
		if l := readLog(t, a); l.CuratorProcessedAt != "2026-05-23T12:00:00.000Z" {
			t.Errorf("filtered session not stamped: %+v", l)
		}
		if src := string(mustRead(t, b)); strings.Contains(src, "curator_") {
			t.Errorf("another session was stamped:\n%s", src)
		}
	})
	for _, tc := range []struct{ name, id string }{
		{"missing session", filtered},
		{"not a UUID", "not-a-uuid"},
	} {
		t.Run(tc.name+" fails before any write", func(t *testing.T) {
			k := newKB(t)
			dir := filepath.Join(t.TempDir(), "_sessions")
			kenkeepSession(t, dir, "beta-other", "done")
			before := snapshot(t, dir)
			_, out, conflicts, err := kenkeepDedup(t, k, dir, "input-scoped.json", tc.id)
			if err == nil {
				t.Fatal("curate-dedup succeeded")
			}
			for _, p := range []string{out, conflicts} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s was written (%v)", p, err)
				}
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("sessions changed:\n%s\nbefore:\n%s", after, before)
			}
		})
	}
}

func TestKenkeepDedupCarriesHomeFolder(t *testing.T) {
	k := newKB(t)
	_, out, _, err := kenkeepDedup(t, k, filepath.Join(t.TempDir(), "_sessions"), "placement-input.json", "")
	if err != nil {
		t.Fatal(err)
	}
	var survivors []map[string]any
	if err := json.Unmarshal(mustRead(t, out), &survivors); err != nil {
		t.Fatal(err)
	}
	byAction := map[string]map[string]any{}
	for _, a := range survivors {
		byAction[a["action"].(string)] = a
	}
	if got := byAction["add"]["home_folder"]; got != "practice/sub" {
		t.Errorf("add: home_folder %v, want practice/sub", got)
	}
	for _, kind := range []string{"modify", "drop"} {
		a, ok := byAction[kind]
		if !ok {
			t.Errorf("the %s action did not survive", kind)
			continue
		}
		if _, has := a["home_folder"]; has {
			t.Errorf("%s gained a home_folder: %v", kind, a)
		}
	}
}

func TestKenkeepDedupBadInputWritesNothing(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"not JSON", "not-json-at-all"},
		{"not curator-output", `[{"action": "not-an-action"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := DecodeActions("bad.json", []byte(tc.src)); err == nil {
				t.Fatal("the input was accepted")
			} else if !strings.Contains(err.Error(), "bad.json") {
				t.Errorf("the error does not name the file: %v", err)
			}
		})
	}
}

func readLog(t *testing.T, path string) *session.Log {
	t.Helper()
	l, err := session.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
