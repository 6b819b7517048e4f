package claude

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

// testdata/transcripts/synthetic.jsonl is a synthetic Claude Code transcript in the
// line shape of harnesses.md §1.3: a summary line, string and block
// content, an isMeta line, tool_result-only user lines, thinking and
// tool_use blocks, a sidechain line, a system line, and a last line cut
// off mid-write.
func TestParseTranscript(t *testing.T) {
	f, err := os.Open("testdata/transcripts/synthetic.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	got, err := New().ParseTranscript(f)
	if err != nil {
		t.Fatal(err)
	}
	wantTurns := []harness.Turn{
		{Role: harness.User, Text: "Why does the login form reject valid emails?"},
		{Role: harness.Agent, Text: "Let me look at the validation node."},
		{Role: harness.Agent, Text: "The regex in src/forms/email.ts rejects plus signs."},
		{Role: harness.User, Text: "Fix it please."},
		{Role: harness.Agent, Text: "Done: the regex now accepts plus signs."},
	}
	if !slices.Equal(got.Turns, wantTurns) {
		t.Errorf("turns:\n%v\nwant\n%v", got.Turns, wantTurns)
	}
	wantReads := []harness.Read{
		{Path: "/home/dev/app/.ai/kenkeep/nodes/auth/email-validation.md", Tool: "Read"},
		{Path: ".ai/kenkeep/nodes/auth/index.md", Tool: "Bash"},
		{Path: "docs/forms.md", Tool: "Bash"},
		{Path: "docs/auth.md", Tool: "Read"},
	}
	if !slices.Equal(got.Reads, wantReads) {
		t.Errorf("reads:\n%v\nwant\n%v", got.Reads, wantReads)
	}
}

func TestParseTranscriptLongLine(t *testing.T) {
	big := strings.Repeat("a", 300<<10)
	src := `{"type":"user","message":{"role":"user","content":"` + big + `"}}` + "\n" +
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}}`
	got, err := New().ParseTranscript(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Turns) != 2 || len(got.Turns[0].Text) != len(big) || got.Turns[1].Text != "ok" {
		t.Fatalf("turns %d", len(got.Turns))
	}
}

func TestParseTranscriptNotJSONL(t *testing.T) {
	if _, err := New().ParseTranscript(strings.NewReader("hello\nworld\n")); err == nil {
		t.Fatal("a text file parsed as a transcript")
	}
	got, err := New().ParseTranscript(strings.NewReader(""))
	if err != nil || len(got.Turns) != 0 {
		t.Fatalf("empty transcript: %v %v", got, err)
	}
}

// BenchmarkParseTranscript5MB parses a 5 MB transcript (the capture
// budget is 200 ms for the whole hook).
func BenchmarkParseTranscript5MB(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 5<<20; i++ {
		sb.WriteString(`{"type":"user","message":{"role":"user","content":"Please look at the parser and tell me what breaks ` + strings.Repeat("x", 200) + `"}}` + "\n")
		sb.WriteString(`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("y", 400) + `"},{"type":"tool_use","id":"t","name":"Bash","input":{"command":"cat docs/a.md | grep b"}}]}}` + "\n")
		sb.WriteString(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"` + strings.Repeat("z", 800) + `"}]}}` + "\n")
	}
	src := sb.String()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := New().ParseTranscript(strings.NewReader(src)); err != nil {
			b.Fatal(err)
		}
	}
}

// A field of an unexpected type does not lose the rest of the line.
func TestParseTranscriptFieldDrift(t *testing.T) {
	src := `{"type":"assistant","isSidechain":"no","message":{"role":"assistant","content":[{"type":"text","text":"kept"}]}}
{"type":"user","isMeta":0,"message":{"role":"user","content":"also kept"}}
`
	got, err := New().ParseTranscript(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []harness.Turn{{Role: harness.Agent, Text: "kept"}, {Role: harness.User, Text: "also kept"}}
	if !slices.Equal(got.Turns, want) {
		t.Fatalf("turns %v", got.Turns)
	}
}
