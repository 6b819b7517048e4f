package copilot

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

func TestParseTranscript(t *testing.T) {
	f, err := os.Open("testdata/transcripts/synthetic.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	tr, err := New().ParseTranscript(f)
	if err != nil {
		t.Fatal(err)
	}
	// (The turns and reads are pinned by the conformance suite's
	// synthetic.*.parsed.)

	want := []harness.Turn{
		{Role: harness.User, Text: "How do we run the migrations?"},
		{Role: harness.Agent, Text: "Run `make migrate`.\n\nIt wraps goose."},
		{Role: harness.User, Text: "And in CI?"},
		{Role: harness.Agent, Text: "CI runs it in the deploy job."},
		{Role: harness.User, Text: "thanks"},
		{Role: harness.Agent, Text: "The user is done; nothing else to do."},
	}
	if !reflect.DeepEqual(tr.Turns, want) {
		t.Errorf("turns:\n%+v\nwant\n%+v", tr.Turns, want)
	}
	wantReads := []harness.Read{
		{Path: ".ai/kenkeep/nodes/db/practice-migrations.md", Tool: "view"},
		{Path: ".ai/kenkeep/nodes/index.md", Tool: "bash"},
		{Path: "docs/db.md", Tool: "bash"},
	}
	if !reflect.DeepEqual(tr.Reads, wantReads) {
		t.Errorf("reads = %+v", tr.Reads)
	}
}

func TestParseTranscriptLargeLines(t *testing.T) {
	big := strings.Repeat("x", 3<<20)
	var b strings.Builder
	b.WriteString(`{"type":"user.message","data":{"content":"` + big + `"},"timestamp":"2026-11-20T10:00:00Z"}` + "\n")
	b.WriteString(`{"type":"assistant.message","data":{"content":"ok"},"timestamp":"2026-11-20T10:00:01Z"}` + "\n")
	b.WriteString(`{"type":"assistant.message","data":{"content":"` + big[:1000])
	tr, err := New().ParseTranscript(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Turns) != 2 || len(tr.Turns[0].Text) != len(big) || tr.Turns[1].Text != "ok" {
		t.Fatalf("got %d turns", len(tr.Turns))
	}
	empty, err := New().ParseTranscript(strings.NewReader(""))
	if err != nil || len(empty.Turns) != 0 {
		t.Errorf("empty transcript: %+v %v", empty, err)
	}
}

// A field whose type drifted leaves that field empty; the event still counts.
func TestParseTranscriptTypeDrift(t *testing.T) {
	src := `{"type":"user.message","data":{"content":42,"transformedContent":"<reminder>x</reminder>typed text","interactionId":7},"timestamp":12}` + "\n" +
		`{"type":"tool.execution_start","data":{"toolName":"view","arguments":"{\"path\":\"docs/a.md\"}"}}` + "\n" +
		`{"type":"assistant.message","data":"not an object"}` + "\n"
	tr, err := New().ParseTranscript(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tr.Turns, []harness.Turn{{Role: harness.User, Text: "typed text"}}) {
		t.Errorf("turns = %+v", tr.Turns)
	}
	if !reflect.DeepEqual(tr.Reads, []harness.Read{{Path: "docs/a.md", Tool: "view"}}) {
		t.Errorf("reads = %+v", tr.Reads)
	}
}
