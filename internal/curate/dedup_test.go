package curate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/session"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

var fixedNow = time.Date(2026, 5, 23, 12, 0, 0, 0, time.UTC)

const (
	sessA = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	sessB = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
	sessC = "cccccccc-cccc-4ccc-8ccc-cccccccccccc" // extracted, no candidates
	sessD = "dddddddd-dddd-4ddd-8ddd-dddddddddddd" // extracted, not in the input
	sessE = "eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee" // waiting for extraction
)

func newKB(t testing.TB) *store.KB {
	t.Helper()
	k := store.New(t.TempDir())
	if _, err := txn.Init(context.Background(), k, store.InitOptions{Version: "test", Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	return k
}

func candidates(typ string, n int) []contracts.Candidate {
	out := []contracts.Candidate{}
	for i := range n {
		out = append(out, contracts.Candidate{Type: typ, Tags: []string{}, Title: typ + " " + string(rune('a'+i)), Description: "d", Body: "b", Confidence: "high"})
	}
	return out
}

// stage writes an extracted session log with the given candidate counts.
func stage(t testing.TB, k *store.KB, id string, at time.Time, practice, maps int) string {
	t.Helper()
	res, err := session.StageLive(context.Background(), k, session.StageOptions{SessionID: id, Excerpt: "transcript of " + id,
		Proposals: contracts.ProposalOutput{Practice: candidates("practice", practice), Map: candidates("map", maps)}, Now: at})
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(k.Root, res.Path)
}

// dedupKB is a knowledge base with the sessions of testdata/dedup.
func dedupKB(t *testing.T) *store.KB {
	t.Helper()
	k := newKB(t)
	stage(t, k, sessA, fixedNow.Add(-72*time.Hour), 3, 1)
	stage(t, k, sessB, fixedNow.Add(-48*time.Hour), 3, 1)
	stage(t, k, sessC, fixedNow.Add(-36*time.Hour), 0, 0)
	stage(t, k, sessD, fixedNow.Add(-24*time.Hour), 1, 0)
	pending := "---\nschema_version: 1\nsession_id: " + sessE + "\ncaptured_by: stop\ncaptured_at: '2026-05-22T10:00:00.000Z'\nproposal_status: pending\n---\n## Transcript\n\nx\n"
	if err := os.WriteFile(filepath.Join(k.SessionsDir(), "20260522-1000-"+sessE+".md"), []byte(pending), 0o644); err != nil {
		t.Fatal(err)
	}
	return k
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// golden compares got with testdata/<name>; KK_UPDATE=1 rewrites it.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("KK_UPDATE") == "1" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with KK_UPDATE=1)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

// snapshot hashes every file under dir except the lock and caches.
func snapshot(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch d.Name() {
		case "lock", "index.db", "index.db-wal", "index.db-shm":
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		rel, _ := filepath.Rel(dir, p)
		lines = append(lines, hex.EncodeToString(sum[:8])+" "+filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func TestDedupGolden(t *testing.T) {
	k := dedupKB(t)
	actions, err := DecodeActions("input.json", readFixture(t, "dedup/input.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "survivors.json")
	opts := DedupOptions{RunID: "FIXED-RUN-ID", Output: out, Now: fixedNow}
	var first string
	for run := range 3 {
		if run > 0 {
			opts.Now = fixedNow.Add(time.Duration(run) * time.Hour) // a later re-run changes nothing
		}
		res, err := RunDedup(context.Background(), k, actions, opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.Kept != 3 || res.Conflicts != 3 || res.Stamped != 3 || res.RunID != "FIXED-RUN-ID" {
			t.Fatalf("run %d: %+v", run, res)
		}
		snap := snapshot(t, k.Dir) + "\n" + snapshot(t, filepath.Dir(out))
		if run == 0 {
			first = snap
			continue
		}
		if snap != first {
			t.Fatalf("run %d changed files:\n%s\nfirst run:\n%s", run, snap, first)
		}
	}
	golden(t, "dedup/survivors.golden.json", mustRead(t, out))
	for n := 1; n <= 3; n++ {
		name := "FIXED-RUN-ID-" + string(rune('0'+n)) + ".md"
		golden(t, "dedup/conflict-"+name, mustRead(t, filepath.Join(k.ConflictsDir(), name)))
	}
	logs, _, err := session.List(k.SessionsDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range logs {
		stamped := l.CuratorRunID == "FIXED-RUN-ID" && l.CuratorProcessedAt == "2026-05-23T12:00:00.000Z"
		want := l.SessionID == sessA || l.SessionID == sessB || l.SessionID == sessC
		if stamped != want {
			t.Errorf("session %s: stamped %v, want %v (%+v)", l.SessionID, stamped, want, l)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func action(kind, origin, target, title, confidence string) contracts.CuratorAction {
	a := contracts.CuratorAction{Action: kind, CandidateOrigin: origin, Rationale: origin}
	if target != "" {
		a.TargetNodeID = &target
	}
	if title != "" {
		a.ProposedNode = &contracts.ProposedNode{Title: title, Type: "practice", Tags: []string{}, Confidence: confidence, RelatesTo: []string{}, DependsOn: []string{}}
	}
	return a
}

func TestDedupRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []contracts.CuratorAction
		want []string // surviving origins, in order
	}{
		{"higher confidence wins and keeps the first slot", []contracts.CuratorAction{
			action("add", "1", "", "Foo", "low"), action("add", "2", "", "Bar", "high"), action("add", "3", "", "foo!", "high")}, []string{"3", "2"}},
		{"a tie keeps the first", []contracts.CuratorAction{
			action("add", "1", "", "Foo", "medium"), action("add", "2", "", "Foo", "medium")}, []string{"1"}},
		{"a lower confidence never replaces", []contracts.CuratorAction{
			action("modify", "1", "practice-x", "X", "high"), action("modify", "2", "practice-x", "X2", "low")}, []string{"1"}},
		{"modify and contradict of one node collapse", []contracts.CuratorAction{
			action("modify", "1", "practice-x", "X", "medium"), action("contradict", "2", "practice-x", "X", "high")}, []string{"2"}},
		{"the last drop of an origin wins", []contracts.CuratorAction{
			action("drop", "1", "", "", ""), action("add", "2", "", "Foo", "low"), action("drop", "1", "", "", "")}, []string{"1", "2"}},
		{"an add keyed by target does not meet an add keyed by title", []contracts.CuratorAction{
			action("add", "1", "", "X", "low"), action("modify", "2", "practice-y", "X", "high")}, []string{"1", "2"}},
		{"an action without a node is keyed like a drop", []contracts.CuratorAction{
			action("modify", "1", "practice-x", "", ""), action("modify", "2", "practice-x", "X", "low")}, []string{"1", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, a := range Dedup(tc.in) {
				got = append(got, a.CandidateOrigin)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("survivors %v, want %v", got, tc.want)
			}
		})
	}
	// The last drop wins by content as well as by slot.
	in := []contracts.CuratorAction{action("drop", "1", "", "", ""), action("drop", "1", "", "", "")}
	in[1].Rationale = "second"
	if out := Dedup(in); len(out) != 1 || out[0].Rationale != "second" {
		t.Fatalf("%+v", out)
	}
}

func TestDedupScoped(t *testing.T) {
	k := dedupKB(t)
	ctx := context.Background()
	actions := []contracts.CuratorAction{action("add", sessD+":practice:0", "", "From D", "high")}
	res, err := RunDedup(ctx, k, actions, DedupOptions{RunID: "scoped", SessionID: strings.ToUpper(sessD), Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stamped != 1 || res.Kept != 1 {
		t.Fatalf("%+v", res)
	}
	logs, _, _ := ListAwaitingCurationIDs(k)
	if slices.Contains(logs, sessD) || !slices.Contains(logs, sessA) || !slices.Contains(logs, sessC) {
		t.Fatalf("waiting after a scoped run: %v", logs)
	}
	// Scoped to a session with no candidates in the input: still stamped.
	if res, err := RunDedup(ctx, k, nil, DedupOptions{RunID: "scoped-2", SessionID: sessC, Now: fixedNow}); err != nil || res.Stamped != 1 {
		t.Fatalf("%+v %v", res, err)
	}
}

// ListAwaitingCurationIDs lists the ids of the sessions waiting for curation.
func ListAwaitingCurationIDs(k *store.KB) ([]string, []error, error) {
	logs, problems, err := session.ListAwaitingCuration(k.SessionsDir())
	var ids []string
	for _, l := range logs {
		ids = append(ids, l.SessionID)
	}
	return ids, problems, err
}

// Every rejected run leaves every file as it was.
func TestDedupRejectsBadRunsWritingNothing(t *testing.T) {
	k := dedupKB(t)
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "survivors.json")
	// A conflict file of another candidate already holds FIXED-RUN-ID-1.
	taken, err := RenderConflict(Conflict{ID: "TAKEN-1", RunID: "TAKEN", DetectedAt: "x", Action: action("contradict", "docs/other.md", "map-store", "Store", "high")})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(k.ConflictsDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(k.ConflictsDir(), "TAKEN-1.md"), taken, 0o644); err != nil {
		t.Fatal(err)
	}
	// Session D was curated by another run.
	if _, err := RunDedup(ctx, k, nil, DedupOptions{RunID: "earlier", SessionID: sessD, Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, k.Dir)
	contradict := action("contradict", sessA+":practice:0", "practice-x", "X", "high")
	for _, tc := range []struct {
		name    string
		actions []contracts.CuratorAction
		opts    DedupOptions
		want    string
	}{
		{"bad run id", nil, DedupOptions{RunID: "../escape"}, `run id "../escape"`},
		{"empty run id", nil, DedupOptions{RunID: ""}, `run id ""`},
		{"unknown session", []contracts.CuratorAction{action("add", "ffffffff-ffff-4fff-8fff-ffffffffffff:practice:0", "", "X", "high")}, DedupOptions{RunID: "r"},
			`/0/candidate_origin "ffffffff-ffff-4fff-8fff-ffffffffffff:practice:0" names session ffffffff-ffff-4fff-8fff-ffffffffffff, which has no log`},
		{"candidate index out of range", []contracts.CuratorAction{action("add", sessA+":map:1", "", "X", "high")}, DedupOptions{RunID: "r"},
			"has 1 map candidate(s)"},
		{"session not extracted", []contracts.CuratorAction{action("drop", sessE+":practice:0", "", "", "")}, DedupOptions{RunID: "r"},
			"has 0 practice candidate(s)"},
		{"session curated by another run", []contracts.CuratorAction{action("drop", sessD+":practice:0", "", "", "")}, DedupOptions{RunID: "r"},
			"was already curated by run earlier"},
		{"scoped: bad session id", nil, DedupOptions{RunID: "r", SessionID: "nope"}, `--session-id: session id "nope" is not a UUID v4`},
		{"scoped: unknown session", nil, DedupOptions{RunID: "r", SessionID: "ffffffff-ffff-4fff-8fff-ffffffffffff"}, "--session-id names session"},
		{"scoped: another session's candidate", []contracts.CuratorAction{action("drop", sessA+":practice:0", "", "", "")}, DedupOptions{RunID: "r", SessionID: sessB},
			"but this run is scoped to session " + sessB},
		{"scoped: session not extracted", nil, DedupOptions{RunID: "r", SessionID: sessE}, "has proposal_status pending"},
		{"conflict file of another candidate", []contracts.CuratorAction{contradict}, DedupOptions{RunID: "TAKEN"}, "TAKEN-1.md already records candidate docs/other.md"},
		{"output folder missing", nil, DedupOptions{RunID: "r", Output: filepath.Join(out, "no", "such.json")}, "its folder does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Now = fixedNow
			if tc.opts.Output == "" {
				tc.opts.Output = out
			}
			_, err := RunDedup(ctx, k, tc.actions, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			if after := snapshot(t, k.Dir); after != before {
				t.Fatalf("files changed:\n%s\nbefore:\n%s", after, before)
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatal("survivors were written")
			}
		})
	}
}

func TestDecodeActions(t *testing.T) {
	good := `[{"action":"add","candidate_origin":"o","target_node_id":null,"proposed_node":{"title":"T","type":"map","tags":[],"description":"","body":"","kk_confidence":"low","kk_relates_to":[]},"rationale":"","home_folder":"a/b"}]`
	actions, err := DecodeActions("in.json", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if actions[0].ProposedNode.DependsOn == nil || *actions[0].HomeFolder != "a/b" {
		t.Fatalf("%+v", actions[0])
	}
	for _, bad := range []struct{ src, want string }{
		{"[", "in.json: invalid JSON at line 1, column 2: the document ends too early"},
		{"", "in.json: is empty"},
		{`{}`, "in.json: does not match schema curator-output"},
		{strings.Replace(good, `"action":"add"`, `"action":"merge"`, 1), "/0/action: value must be one of"},
		{strings.Replace(good, `"title":"T",`, ``, 1), "/0/proposed_node"},
		{strings.Replace(good, `"rationale":""`, `"rationale":"","extra":1`, 1), "/0/extra: is not allowed here"},
	} {
		if _, err := DecodeActions("in.json", []byte(bad.src)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err %v, want %q", bad.src, err, bad.want)
		}
	}
	// A home folder leaving nodes/ is curate-dedup's to refuse for the
	// batch; curate-persist fails that action alone.
	for _, bad := range []struct{ src, want string }{
		{strings.Replace(good, `"a/b"`, `"../../etc"`, 1), `in.json: /0/home_folder: folder "../../etc" escapes nodes/`},
		{strings.Replace(good, `"a/b"`, `"/abs"`, 1), `/0/home_folder: folder "/abs" is absolute`},
	} {
		actions, err := DecodeActions("in.json", []byte(bad.src))
		if err != nil {
			t.Fatalf("%q: %v", bad.src, err)
		}
		if err := CheckHomeFolders("in.json", actions); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err %v, want %q", bad.src, err, bad.want)
		}
	}
}

func TestCheckRunID(t *testing.T) {
	for _, ok := range []string{"FIXED-RUN-ID", "2026-05-23.a_1", session.NewID()} {
		if err := CheckRunID(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-x", ".x", "a/b", "a b", "..", strings.Repeat("a", 129), "a\\b"} {
		if err := CheckRunID(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if id := NewRunID(); CheckRunID(id) != nil || len(id) != 36 {
		t.Errorf("NewRunID() = %q", id)
	}
}

func TestSurvivorsJSONShape(t *testing.T) {
	// Survivors keep the contract's key order and always carry
	// kk_depends_on, target_node_id and proposed_node.
	a := action("drop", "o", "", "", "")
	data, _ := json.Marshal([]contracts.CuratorAction{a})
	if string(data) != `[{"action":"drop","candidate_origin":"o","target_node_id":null,"proposed_node":null,"rationale":"o"}]` {
		t.Fatalf("%s", data)
	}
}
