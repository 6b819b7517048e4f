package gemini

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

func TestParseTranscript(t *testing.T) {
	for _, c := range []struct {
		file  string
		turns []harness.Turn
		reads []harness.Read
	}{
		{
			"synthetic.jsonl",
			[]harness.Turn{
				{Role: harness.User, Text: "How do retries work here? @docs/net.md"},
				{Role: harness.Agent, Text: "Retries use exponential backoff."},
				{Role: harness.User, Text: "Thanks, that is all."},
				{Role: harness.Agent, Text: "You're welcome."},
			},
			[]harness.Read{
				{Path: ".ai/kenkeep/ENTRY.md", Tool: "read_file"},
				{Path: ".ai/kenkeep/nodes/net/practice-retries.md", Tool: "run_shell_command"},
				{Path: "docs/net.md", Tool: "run_shell_command"},
			},
		},
		{
			"synthetic-legacy.json",
			[]harness.Turn{
				{Role: harness.User, Text: "Where is the config loaded?"},
				{Role: harness.Agent, Text: "In internal/kb/config.go."},
			},
			[]harness.Read{{Path: "/work/repo/.ai/kenkeep/nodes/config/map-settings.md", Tool: "read_file"}},
		},
	} {
		f, err := os.Open(filepath.Join("testdata", "transcripts", c.file))
		if err != nil {
			t.Fatal(err)
		}
		tr, err := New().ParseTranscript(f)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(tr.Turns, c.turns) {
			t.Errorf("%s turns:\n%+v", c.file, tr.Turns)
		}
		if !reflect.DeepEqual(tr.Reads, c.reads) {
			t.Errorf("%s reads:\n%+v", c.file, tr.Reads)
		}
	}
}

func TestParseTranscriptLargeLinesAndSet(t *testing.T) {
	big := strings.Repeat("y", 4<<20)
	src := `{"sessionId":"s","projectHash":"h"}` + "\n" +
		`{"id":"a","type":"user","content":"` + big + `"}` + "\n" +
		`{"id":"b","type":"gemini","content":"first"}` + "\n" +
		`{"$set":{"messages":[{"id":"a","type":"user","content":"masked"},{"id":"b","type":"gemini","content":"second"}]}}` + "\n" +
		`{"id":"c","type":"user","content":"after the set"}` + "\n" +
		`{"id":"d","type":"gemini","content":"` + big[:5000]
	tr, err := New().ParseTranscript(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []harness.Turn{{Role: harness.User, Text: "masked"}, {Role: harness.Agent, Text: "second"}, {Role: harness.User, Text: "after the set"}}
	if !reflect.DeepEqual(tr.Turns, want) {
		t.Errorf("turns = %+v", tr.Turns)
	}
	tr, err = New().ParseTranscript(strings.NewReader(`{"id":"a","type":"user","content":"` + big + `"}` + "\n"))
	if err != nil || len(tr.Turns) != 1 || len(tr.Turns[0].Text) != len(big) {
		t.Errorf("a 4 MB line: %d turns, %v", len(tr.Turns), err)
	}
}

// A field whose type drifted leaves that field empty; the message still counts.
func TestParseTranscriptTypeDrift(t *testing.T) {
	src := `{"id":"a","type":"user","content":"hi","displayContent":5,"toolCalls":"oops"}` + "\n" +
		`{"id":"b","type":"gemini","content":{"parts":[{"text":"from parts"}]},"toolCalls":[{"name":"read_file","args":"not an object"},{"name":"read_file","args":{"file_path":"docs/b.md"}}]}` + "\n"
	tr, err := New().ParseTranscript(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []harness.Turn{{Role: harness.User, Text: "hi"}, {Role: harness.Agent, Text: "from parts"}}
	if !reflect.DeepEqual(tr.Turns, want) {
		t.Errorf("turns = %+v", tr.Turns)
	}
	if !reflect.DeepEqual(tr.Reads, []harness.Read{{Path: "docs/b.md", Tool: "read_file"}}) {
		t.Errorf("reads = %+v", tr.Reads)
	}
}
