package codex

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

// testdata/transcripts/synthetic.jsonl is a synthetic Codex rollout in the shape of
// harnesses.md §2.3: session_meta and turn_context lines, user messages
// recorded both as response items (one of them an injected environment
// block) and as user_message events, reasoning, function calls of shell,
// exec_command and read_file, a local_shell_call, assistant messages
// repeated as agent_message events and task_complete, a compacted line,
// and a last line cut off mid-write.
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
		{Role: harness.User, Text: "How do we run the database migrations?"},
		{Role: harness.Agent, Text: "Run `make migrate`; the node explains the order."},
		{Role: harness.User, Text: "Add that to the README."},
		{Role: harness.Agent, Text: "Added a Migrations section to README.md."},
	}
	if !slices.Equal(got.Turns, wantTurns) {
		t.Errorf("turns:\n%v\nwant\n%v", got.Turns, wantTurns)
	}
	wantReads := []harness.Read{
		{Path: ".ai/kenkeep/nodes/db/migrations.md", Tool: "shell"},
		{Path: "docs/setup.md", Tool: "exec_command"},
		{Path: "/home/dev/app/README.md", Tool: "read_file"},
		{Path: "AGENTS.md", Tool: "local_shell"},
	}
	if !slices.Equal(got.Reads, wantReads) {
		t.Errorf("reads:\n%v\nwant\n%v", got.Reads, wantReads)
	}
}

// A rollout with only response items, or only events, still gives both
// roles; task_complete adds a turn only when it says something new.
func TestParseTranscriptFallbacks(t *testing.T) {
	itemsOnly := `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<user_instructions>be brief</user_instructions>"},{"type":"input_text","text":"Hi"}]}}
{"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"system rules"}]}}
{"type":"response_item","payload":{"type":"message","role":"assistant","content":"Hello"}}
{"type":"event_msg","payload":{"type":"task_complete","last_agent_message":"Bye"}}
`
	eventsOnly := `{"type":"event_msg","payload":{"type":"user_message","message":"Hi"}}
{"type":"event_msg","payload":{"type":"agent_message","message":"Hello"}}
{"type":"event_msg","payload":{"type":"task_complete","last_agent_message":"Hello"}}
`
	for name, c := range map[string]struct {
		src  string
		want []harness.Turn
	}{
		"items":  {itemsOnly, []harness.Turn{{Role: harness.User, Text: "Hi"}, {Role: harness.Agent, Text: "Hello"}, {Role: harness.Agent, Text: "Bye"}}},
		"events": {eventsOnly, []harness.Turn{{Role: harness.User, Text: "Hi"}, {Role: harness.Agent, Text: "Hello"}}},
	} {
		got, err := New().ParseTranscript(strings.NewReader(c.src))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Turns, c.want) {
			t.Errorf("%s: %v, want %v", name, got.Turns, c.want)
		}
	}
}

func TestParseTranscriptLongLineAndGarbage(t *testing.T) {
	big := strings.Repeat("b", 200<<10)
	got, err := New().ParseTranscript(strings.NewReader(`{"type":"event_msg","payload":{"type":"user_message","message":"` + big + `"}}`))
	if err != nil || len(got.Turns) != 1 || len(got.Turns[0].Text) != len(big) {
		t.Fatalf("long line: %v", err)
	}
	if _, err := New().ParseTranscript(strings.NewReader("not\njson\n")); err == nil {
		t.Fatal("garbage parsed")
	}
}

// BenchmarkParseTranscript5MB parses a 5 MB rollout (the capture budget is
// 200 ms for the whole hook).
func BenchmarkParseTranscript5MB(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 5<<20; i++ {
		sb.WriteString(`{"timestamp":"t","type":"event_msg","payload":{"type":"user_message","message":"Please look at the parser ` + strings.Repeat("x", 200) + `"}}` + "\n")
		sb.WriteString(`{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Please look at the parser ` + strings.Repeat("x", 200) + `"}]}}` + "\n")
		sb.WriteString(`{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"cat docs/a.md\"]}","call_id":"c"}}` + "\n")
		sb.WriteString(`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"` + strings.Repeat("z", 800) + `"}}` + "\n")
		sb.WriteString(`{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"` + strings.Repeat("y", 400) + `"}]}}` + "\n")
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
	src := `{"type":"response_item","payload":{"type":"message","role":"assistant","name":7,"content":[{"type":"output_text","text":"kept"}]}}
{"type":"event_msg","payload":{"type":"user_message","message":"also kept","images":{"a":1},"name":[]}}
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
