package curate

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const draftAction = `{"action":"drop","candidate_origin":"%s","target_node_id":null,"proposed_node":null,"rationale":"r"}`

func draft(origins ...string) string {
	var parts []string
	for _, o := range origins {
		parts = append(parts, strings.Replace(draftAction, "%s", o, 1))
	}
	return "[" + strings.Join(parts, ",\n") + "]"
}

func TestCollect(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"R__1.draft.json":    draft("a", "b"),
		"R__2.draft.json":    `[{"action":"merge"}]`,
		"R__3.draft.json":    `not json`,
		"R__10.draft.json":   draft("c"),
		"R__x.draft.json":    draft("ignored: not a batch number"),
		"R2__1.draft.json":   draft("ignored: another run"),
		"R__1__1.draft.json": draft("ignored: run R__1"),
		"R__4.jsonl":         "",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Collect(dir, "R", "curator-output", fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	var origins []string
	for _, it := range res.Items {
		var a struct {
			Origin string `json:"candidate_origin"`
		}
		if err := json.Unmarshal(it, &a); err != nil {
			t.Fatal(err)
		}
		origins = append(origins, a.Origin)
	}
	if strings.Join(origins, ",") != "a,b,c" {
		t.Fatalf("items %v", origins)
	}
	var got []string
	for _, b := range res.Batches {
		got = append(got, b.N+":"+map[bool]string{true: "valid", false: "invalid"}[b.Valid])
	}
	if strings.Join(got, " ") != "1:valid 2:invalid 3:invalid 10:valid" {
		t.Fatalf("batches %v", got)
	}
	if r := res.Batches[1].Reason; !strings.Contains(r, "does not match schema curator-output: /0/action: value must be one of") {
		t.Errorf("batch 2 reason %q", r)
	}
	if r := res.Batches[2].Reason; !strings.Contains(r, "invalid JSON at line 1, column 2") {
		t.Errorf("batch 3 reason %q", r)
	}
	// The items keep the bytes they were written with.
	if string(res.Items[0]) != strings.Replace(draftAction, "%s", "a", 1) {
		t.Errorf("item %s", res.Items[0])
	}
	ev, _ := os.ReadFile(filepath.Join(dir, "R__1.jsonl"))
	if string(ev) != `{"ts":"2026-05-23T12:00:00.000Z","runId":"R","batchN":"1","event":"validated","count":2}`+"\n" {
		t.Errorf("events of batch 1: %s", ev)
	}
	ev, _ = os.ReadFile(filepath.Join(dir, "R__2.jsonl"))
	if !strings.Contains(string(ev), `"event":"invalid","reason":"does not match schema`) {
		t.Errorf("events of batch 2: %s", ev)
	}
	// A second collection appends a second event.
	if _, err := Collect(dir, "R", "curator-output", fixedNow); err != nil {
		t.Fatal(err)
	}
	if ev, _ := os.ReadFile(filepath.Join(dir, "R__10.jsonl")); strings.Count(string(ev), "\n") != 2 {
		t.Errorf("events of batch 10 after two runs: %s", ev)
	}
}

func TestCollectErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "R__1.draft.json"), []byte(draft("a")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, run, schema, want string }{
		{dir, "other", "curator-output", "no draft files for run other"},
		{filepath.Join(dir, "missing"), "R", "curator-output", "no draft files"},
		{dir, "../R", "curator-output", `run id "../R"`},
		{dir, "R", "nope", `unknown schema "nope"`},
		{dir, "R", "proposal-output", "schema proposal-output describes object, not a list"},
	} {
		if _, err := Collect(tc.dir, tc.run, tc.schema, fixedNow); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v", tc, err)
		}
	}
	if _, err := Collect(dir, "none", "curator-output", fixedNow); !errors.Is(err, ErrNoDrafts) {
		t.Errorf("err %v is not ErrNoDrafts", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed collection wrote files: %v", entries)
	}
}

func TestCompareNumbers(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"2", "10", -1}, {"10", "9", 1}, {"007", "7", 0}, {"123456789012345678901234567890", "9", 1}} {
		if got := compareNumbers(tc.a, tc.b); (got > 0) != (tc.want > 0) || (got < 0) != (tc.want < 0) {
			t.Errorf("compareNumbers(%s, %s) = %d", tc.a, tc.b, got)
		}
	}
}
