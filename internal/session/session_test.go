package session

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/schema"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

const sid = "0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e7f"

var fixedNow = time.Date(2026, 5, 23, 12, 0, 0, 0, time.UTC)

func newKB(t *testing.T) *store.KB {
	t.Helper()
	k := store.New(t.TempDir())
	if _, err := txn.Init(context.Background(), k, store.InitOptions{Version: "test", Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	return k
}

func proposals() contracts.ProposalOutput {
	return contracts.ProposalOutput{
		Practice: []contracts.Candidate{{Type: "practice", Tags: []string{"http", "errors"}, Title: "Wrap errors", Description: "Wrap: with the request id", Body: "Always wrap.\n\nSee `errors.go`.", Confidence: "high"}},
		Map:      []contracts.Candidate{{Type: "map", Tags: []string{}, Title: "HTTP client", Description: "Where it lives", Body: "internal/http", Confidence: "medium"}},
	}
}

func TestStageLiveWritesTheLog(t *testing.T) {
	k := newKB(t)
	res, err := StageLive(context.Background(), k, StageOptions{SessionID: strings.ToUpper(sid), Excerpt: "hello", Proposals: proposals(), Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if res.SessionID != sid || res.Idempotency != IdempotencyNormal || res.Path != ".ai/kenkeep/_sessions/20260523-1200-"+sid+".md" {
		t.Fatalf("result %+v", res)
	}
	got, err := os.ReadFile(filepath.Join(k.Root, res.Path))
	if err != nil {
		t.Fatal(err)
	}
	want := `---
schema_version: 1
session_id: 0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e7f
captured_by: manual
captured_at: '2026-05-23T12:00:00.000Z'
transcript_hash: 'sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824'
proposal_status: done
proposal_completed_at: '2026-05-23T12:00:00.000Z'
proposal_error: null
proposal_log: null
proposals:
  practice:
    - type: practice
      tags:
        - http
        - errors
      title: Wrap errors
      description: 'Wrap: with the request id'
      body: |-
        Always wrap.

        See ` + "`errors.go`" + `.
      kk_confidence: high
  map:
    - type: map
      tags: []
      title: HTTP client
      description: Where it lives
      body: internal/http
      kk_confidence: medium
---
## Transcript

hello

## Proposal

_Extraction complete; see proposals in frontmatter._
`
	if string(got) != want {
		t.Fatalf("log:\n%s\nwant:\n%s", got, want)
	}
	l, err := Read(filepath.Join(k.Root, res.Path))
	if err != nil {
		t.Fatal(err)
	}
	if !l.AwaitingCuration() || l.Practice != 1 || l.Map != 1 || l.Proposals.Practice[0].Body != "Always wrap.\n\nSee `errors.go`." {
		t.Fatalf("read back: %+v", l)
	}
}

func TestStageLiveReplacesTheSameSession(t *testing.T) {
	k := newKB(t)
	ctx := context.Background()
	first, err := StageLive(ctx, k, StageOptions{SessionID: sid, Proposals: proposals(), Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(k.Root, first.Path)
	if err := Stamp(path, "run-1", fixedNow); err != nil {
		t.Fatal(err)
	}
	// The same excerpt and candidates again: nothing to do, stamp kept.
	same, err := StageLive(ctx, k, StageOptions{SessionID: sid, Proposals: proposals(), Now: fixedNow.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := Read(path); !same.Unchanged || l.CuratorRunID != "run-1" {
		t.Fatalf("restaging the same content: %+v, log %+v", same, l)
	}
	second, err := StageLive(ctx, k, StageOptions{SessionID: sid, Proposals: contracts.ProposalOutput{Practice: []contracts.Candidate{}, Map: []contracts.Candidate{}}, Now: fixedNow.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if second.Path != first.Path || second.Unchanged {
		t.Fatalf("restaging wrote %s, want the same file %s", second.Path, first.Path)
	}
	l, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.CuratorProcessedAt != "" || l.Practice != 0 || l.CapturedAt != "2026-05-23T13:00:00.000Z" {
		t.Fatalf("restaged log keeps old state: %+v", l)
	}
	if !strings.Contains(string(mustRead(t, path)), DefaultExcerpt) {
		t.Fatal("empty excerpt should become the default text")
	}
	gen, err := StageLive(ctx, k, StageOptions{Generate: true, Proposals: proposals(), Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if gen.Idempotency != IdempotencyDegraded || gen.SessionID == sid {
		t.Fatalf("generated: %+v", gen)
	}
	if _, err := CheckID(gen.SessionID); err != nil {
		t.Fatalf("generated id: %v", err)
	}
}

func TestStageLiveRejectsBadIDs(t *testing.T) {
	k := newKB(t)
	for _, id := range []string{"nope", "0d9f6c2e-8f1a-7b7e-9c3d-2a1b4c5d6e7f", sid + "0"} {
		if _, err := StageLive(context.Background(), k, StageOptions{SessionID: id, Now: fixedNow}); err == nil || !strings.Contains(err.Error(), "not a UUID v4") {
			t.Errorf("%q: err %v", id, err)
		}
	}
	if _, err := os.Stat(k.SessionsDir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a rejected call created %s", k.SessionsDir())
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A log written by another tool, quoted its own way, reads the same.
const foreignLog = `---
schema_version: 1
session_id: "0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e7f"
captured_by: stop
captured_at: 2026-05-20T08:30:00.000Z
transcript_hash: sha256:abc
proposal_status: pending
proposal_completed_at: null
proposal_error: null
proposal_log: null
proposals: { practice: [], map: [] }
topics: [legacy]
---
## Transcript

[USER]: hi

## Proposal

(populated by proposal worker)
`

func TestParseIsTolerant(t *testing.T) {
	l, err := Parse("x.md", []byte(foreignLog))
	if err != nil {
		t.Fatal(err)
	}
	if l.SessionID != sid || l.CapturedAt != "2026-05-20T08:30:00.000Z" || !l.AwaitingExtraction() || l.AwaitingCuration() {
		t.Fatalf("%+v", l)
	}
	// Only session_id, captured_at and proposal_status are required.
	min := "---\nsession_id: s\ncaptured_at: '2026-01-01'\nproposal_status: done\n---\n"
	if l, err := Parse("min.md", []byte(min)); err != nil || !l.AwaitingCuration() || l.Proposals.Practice == nil {
		t.Fatalf("minimal log: %+v %v", l, err)
	}
	for _, bad := range []struct{ src, want string }{
		{"no front matter", "no front matter"},
		{"---\ncaptured_at: x\nproposal_status: done\n---\n", `field "session_id": is required`},
		{"---\nsession_id: s\ncaptured_at: x\nproposal_status: queued\n---\n", `field "proposal_status": is "queued"`},
		{"---\nsession_id: [s]\ncaptured_at: x\nproposal_status: done\n---\n", `field "session_id": must be a string`},
		{"---\nsession_id: s\ncaptured_at: x\nproposal_status: done\nproposals: 3\n---\n", `field "proposals"`},
		{"---\nsession_id: s\n", "not closed"},
	} {
		if _, err := Parse("bad.md", []byte(bad.src)); err == nil || !strings.Contains(err.Error(), bad.want) || !strings.HasPrefix(err.Error(), "bad.md: ") {
			t.Errorf("%q: err %v, want %q", bad.src, err, bad.want)
		}
	}
}

func TestParseCountsMalformedCandidates(t *testing.T) {
	src := "---\nsession_id: s\ncaptured_at: x\nproposal_status: done\nproposals:\n  practice:\n    - {type: practice, tags: [], title: A, description: d, body: b, kk_confidence: high}\n    - {type: practice, title: no tags or confidence}\n  map: []\n---\n"
	l, err := Parse("x.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if l.Practice != 2 || len(l.Proposals.Practice) != 1 || l.Candidates("practice") != 2 || l.Candidates("map") != 0 {
		t.Fatalf("%+v", l)
	}
}

func TestListFindAndStamp(t *testing.T) {
	dir := t.TempDir()
	write := func(name, capturedAt, status string) string {
		src := strings.Replace(strings.Replace(foreignLog, "2026-05-20T08:30:00.000Z", capturedAt, 1), "proposal_status: pending", "proposal_status: "+status, 1)
		src = strings.Replace(src, sid, strings.TrimSuffix(name[14:], ".md"), 1)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("20260520-0900-bbbbbbbb-0000-4000-8000-000000000002.md", "2026-05-20T09:00:00.000Z", StatusDone)
	write("20260519-0900-aaaaaaaa-0000-4000-8000-000000000001.md", "2026-05-21T09:00:00.000Z", StatusDone)
	stale := write("20260101-0000-aaaaaaaa-0000-4000-8000-000000000001.md", "2026-05-22T09:00:00.000Z", StatusPending)
	write("20260518-0900-cccccccc-0000-4000-8000-000000000003.md", "2026-05-18T09:00:00.000Z", StatusPending)
	if err := os.WriteFile(filepath.Join(dir, ".hidden.md"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "zz-broken.md"), []byte("---\nsession_id: [\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	logs, problems, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range logs {
		names = append(names, l.Name[:13])
	}
	if got := strings.Join(names, " "); got != "20260518-0900 20260520-0900 20260519-0900 20260101-0000" {
		t.Fatalf("order by captured_at: %s", got)
	}
	if len(problems) != 1 || !strings.HasPrefix(problems[0].Error(), "zz-broken.md: ") {
		t.Fatalf("problems %v", problems)
	}
	waiting, _, _ := ListAwaitingCuration(dir)
	extracting, _, _ := ListAwaitingExtraction(dir)
	if len(waiting) != 2 || len(extracting) != 2 {
		t.Fatalf("waiting %d, extracting %d", len(waiting), len(extracting))
	}

	name, ok, err := Find(dir, "aaaaaaaa-0000-4000-8000-000000000001")
	if err != nil || !ok || filepath.Join(dir, name) != stale {
		t.Fatalf("Find = %s %v %v; want the first file by name", name, ok, err)
	}
	if _, ok, _ := Find(dir, "dddddddd-0000-4000-8000-000000000004"); ok {
		t.Fatal("found a session that has no log")
	}
	if _, ok, err := Find(filepath.Join(dir, "missing"), "x"); ok || err != nil {
		t.Fatalf("missing dir: %v %v", ok, err)
	}

	// Stamping adds two keys and leaves every other byte alone.
	p := filepath.Join(dir, "20260520-0900-bbbbbbbb-0000-4000-8000-000000000002.md")
	before := string(mustRead(t, p))
	if err := Stamp(p, "run-7", fixedNow); err != nil {
		t.Fatal(err)
	}
	after := string(mustRead(t, p))
	want := strings.Replace(before, "topics: [legacy]\n", "topics: [legacy]\ncurator_processed_at: '2026-05-23T12:00:00.000Z'\ncurator_run_id: run-7\n", 1)
	if after != want {
		t.Fatalf("stamped:\n%s\nwant:\n%s", after, want)
	}
	l, err := Read(p)
	if err != nil || l.AwaitingCuration() || l.CuratorRunID != "run-7" {
		t.Fatalf("%+v %v", l, err)
	}
}

func TestUpdateProposals(t *testing.T) {
	k := newKB(t)
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "20260520-0830-"+sid+".md")
	if err := os.WriteFile(p, []byte(foreignLog), 0o644); err != nil {
		t.Fatal(err)
	}
	props := proposals()
	l, err := UpdateProposals(ctx, k, p, UpdateOptions{Status: StatusDone, Proposals: &props, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if !l.AwaitingCuration() || l.Practice != 1 || l.Map != 1 {
		t.Fatalf("%+v", l)
	}
	got := string(mustRead(t, p))
	for _, want := range []string{"captured_at: 2026-05-20T08:30:00.000Z\n", "topics: [legacy]\n", "proposal_status: done\n",
		"proposal_completed_at: '2026-05-23T12:00:00.000Z'\n", "\n" + proposalComplete + "\n", "[USER]: hi"} {
		if !strings.Contains(got, want) {
			t.Errorf("updated log lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, proposalPlaceholder) {
		t.Error("placeholder line kept")
	}
	// Doing it again, later, changes nothing.
	if _, err := UpdateProposals(ctx, k, p, UpdateOptions{Status: StatusDone, Proposals: &props, Now: fixedNow.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if again := string(mustRead(t, p)); again != got {
		t.Fatalf("second update changed the log:\n%s", again)
	}

	l, err = UpdateProposals(ctx, k, p, UpdateOptions{Status: StatusFailed, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if l.ProposalStatus != StatusFailed || l.ProposalError != "unknown error" {
		t.Fatalf("%+v", l)
	}
	failed := string(mustRead(t, p))
	if _, err := UpdateProposals(ctx, k, p, UpdateOptions{Status: StatusFailed, Error: "unknown error", Now: fixedNow.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if again := string(mustRead(t, p)); again != failed {
		t.Fatalf("recording the same failure again changed the log:\n%s", again)
	}
	if _, err := UpdateProposals(ctx, k, p, UpdateOptions{Status: "queued", Now: fixedNow}); err == nil {
		t.Fatal("accepted status queued")
	}
	if _, err := UpdateProposals(ctx, k, p, UpdateOptions{Status: StatusDone, Now: fixedNow}); err == nil {
		t.Fatal("accepted done without candidates")
	}
}

func TestDecodeProposals(t *testing.T) {
	good := `{"practice":[{"type":"practice","tags":[],"title":"T","description":"d","body":"b","kk_confidence":"low"}],"map":[],"notes":"ignored"}`
	p, err := DecodeProposals("in.json", []byte(good))
	if err != nil || len(p.Practice) != 1 || p.Map == nil {
		t.Fatalf("%+v %v", p, err)
	}
	for _, bad := range []struct{ src, want string }{
		{"", "in.json: is empty"},
		{"{\n  \"practice\": [,]\n}", "in.json: invalid JSON at line 2, column 16"},
		{`{"practice":[],"map":[]} {}`, "unexpected data after the document"},
		{`{"practice":[]}`, "/map: is required"},
		{`{"practice":[{"type":"practice","tags":[],"title":"T","description":"d","body":"b","kk_confidence":"low","supports_existing_node":"x"}],"map":[]}`, "/practice/0/supports_existing_node: is not allowed here"},
		{`{"practice":[],"map":[{"type":"map","tags":[],"title":"","description":"d","body":"b","kk_confidence":"sure"}]}`, "/map/0/kk_confidence"},
	} {
		_, err := DecodeProposals("in.json", []byte(bad.src))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err %v, want %q", bad.src, err, bad.want)
		}
	}
	var ve *schema.ValidationError
	if _, err := DecodeProposals("in.json", []byte(`{"practice":[]}`)); !errors.As(err, &ve) {
		t.Fatalf("schema failure is not a *schema.ValidationError: %T", err)
	}
}

func TestStripPrivate(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                              "plain",
		"a <kk-private>key=1</kk-private> b": "a [kk-private removed] b",
		"a <KK-Private>x</kk-PRIVATE> b <kk-private>y</kk-private>": "a [kk-private removed] b [kk-private removed]",
		"a <kk-private>never closed\nmore":                          "a [kk-private removed]",
		"a </kk-private> b":                                         "a </kk-private> b",
		"é <kk-private>ü</kk-private> ß":                            "é [kk-private removed] ß",
	} {
		if got := StripPrivate(in); got != want {
			t.Errorf("StripPrivate(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResolveExcerpt(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ex.md")
	if err := os.WriteFile(p, []byte("from file <kk-private>s</kk-private>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ResolveExcerpt(p); got != "from file [kk-private removed]" {
		t.Errorf("file: %q", got)
	}
	if got := ResolveExcerpt("just text"); got != "just text" {
		t.Errorf("text: %q", got)
	}
	if got := ResolveExcerpt(filepath.Dir(p)); got != filepath.Dir(p) {
		t.Errorf("a folder is text: %q", got)
	}
	if got := ResolveExcerpt("  "); got != DefaultExcerpt {
		t.Errorf("empty: %q", got)
	}
}

func TestIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := NewID()
		if _, err := CheckID(id); err != nil || seen[id] {
			t.Fatalf("NewID() = %s: %v (dup %v)", id, err, seen[id])
		}
		seen[id] = true
	}
	if !IsUUID("0190a5b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b") || IsUUID("s1") {
		t.Fatal("IsUUID")
	}
	if got := FileName(time.Date(2026, 1, 2, 3, 4, 59, 0, time.FixedZone("x", 3600)), sid); got != "20260102-0204-"+sid+".md" {
		t.Fatalf("FileName = %s", got)
	}
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`).MatchString(FormatTime(time.Now())) {
		t.Fatal("FormatTime")
	}
}

func TestParseJSONPositions(t *testing.T) {
	for src, want := range map[string]string{
		"[":                  "line 1, column 2: the document ends too early",
		"[\n":                "line 2, column 1: the document ends too early",
		"{\n  \"a\": [,]\n}": "line 2, column 9: invalid character ','",
		"{}\n  x":            "line 2, column 3: unexpected data after the document",
		"{} {}":              "line 1, column 4: unexpected data after the document",
		"\"\\q\"":            "line 1, column 3: invalid character 'q'",
	} {
		_, err := ParseJSON("in", []byte(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", src, err, want)
		}
	}
	if v, err := ParseJSON("in", []byte("\xEF\xBB\xBF {\"n\": 1.50}\n")); err != nil || v.(map[string]any)["n"] != json.Number("1.50") {
		t.Fatalf("%v %v", v, err)
	}
}

// TestUpdateProposalsKeepsTheTranscript: recording an extraction turns the
// proposal section's placeholder line into the "complete" line. It turned
// the first such line in the whole body instead, so a transcript that
// quotes it (a user pasting a session log into a session about kk) had its
// words changed, and the section kept its placeholder.
func TestUpdateProposalsKeepsTheTranscript(t *testing.T) {
	k := newKB(t)
	ctx := context.Background()
	said := "[USER]: my log ends with " + proposalPlaceholder + ", is that right?"
	res, err := Capture(ctx, k, CaptureOptions{SessionID: sid, CapturedBy: CapturedByStop, Transcript: said + "\n\n[AGENT]: Yes, until it is extracted.", Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(k.Root, res.Path)
	props := proposals()
	l, err := UpdateProposals(ctx, k, p, UpdateOptions{Status: StatusDone, Proposals: &props, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(l.Transcript(), said) {
		t.Errorf("the transcript changed:\n%s", l.Transcript())
	}
	if got := string(mustRead(t, p)); !strings.HasSuffix(got, "## Proposal\n\n"+proposalComplete+"\n") {
		t.Errorf("the proposal section was not completed:\n%s", got)
	}
}
