package harness

import (
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf16"
)

func TestCapContext(t *testing.T) {
	line := strings.Repeat("é😀x", 30) + "\n" // 30×(1+2+1) UTF-16 units + 1
	long := strings.Repeat(line, 200)
	got := CapContext(long)
	if n := len(utf16.Encode([]rune(got))); n > ContextLimit {
		t.Fatalf("context is %d UTF-16 units", n)
	}
	if !strings.HasSuffix(got, CutNote) {
		t.Fatal("no truncation note")
	}
	body := strings.TrimSuffix(got, CutNote)
	if !strings.HasPrefix(long, body) || !strings.HasSuffix(body, "x") {
		t.Fatalf("not cut at a line end: ...%q", body[len(body)-20:])
	}
	if short := CapContext("short"); short != "short" {
		t.Fatalf("short text changed: %q", short)
	}
	// Text without a line end in its last quarter is cut mid-line, on a
	// character boundary.
	one := strings.Repeat("😀", ContextLimit)
	got = CapContext(one)
	if n := len(utf16.Encode([]rune(got))); n > ContextLimit || !strings.HasPrefix(one, strings.TrimSuffix(got, CutNote)) {
		t.Fatalf("one long line: %d UTF-16 units", n)
	}
	exact := strings.Repeat("a", ContextLimit)
	if CapContext(exact) != exact {
		t.Fatal("text at the limit was cut")
	}
}

// Moved from the Claude Code adapter with the code it tests.
func TestMDPaths(t *testing.T) {
	for cmd, want := range map[string][]string{
		`cat "docs/a b.md" x.md`:            {"b.md", "x.md"},
		"grep -n foo README.md|head":        {"README.md"},
		"sed -n 1,5p ./notes/plan.md; ls":   {"./notes/plan.md"},
		"cat file.mdx other.markdown":       nil,
		"cat $(ls nodes/*.md) --out=out.md": {"nodes/*.md", "out.md"},
		"echo `cat .ai/kenkeep/ENTRY.md`":   {".ai/kenkeep/ENTRY.md"},
		"cat a.md a.md":                     {"a.md", "a.md"},
	} {
		if got := MarkdownPaths(cmd); !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", cmd, got, want)
		}
	}
}

func TestEachLine(t *testing.T) {
	huge := strings.Repeat("y", 1<<20) // far over bufio's default buffer
	src := "first\n\n   \n" + huge + "\n{\"cut\": tr"
	var got []string
	if err := EachLine(strings.NewReader(src), func(l []byte) { got = append(got, string(l)) }); err != nil {
		t.Fatal(err)
	}
	want := []string{"first\n", huge + "\n", "{\"cut\": tr"}
	if !slices.Equal(got, want) {
		t.Errorf("got %d lines, want %d (blank lines skipped, the cut last line kept)", len(got), len(want))
	}
	err := EachLine(iotest.ErrReader(iotest.ErrTimeout), func([]byte) {})
	if err != iotest.ErrTimeout {
		t.Errorf("read error %v", err)
	}
}

func TestEachJSONLine(t *testing.T) {
	isJSON := func(l []byte) bool { return strings.HasPrefix(string(l), "{") }
	var n int
	if err := EachJSONLine(strings.NewReader("{}\nnot json\n{}"), "a fake transcript", func(l []byte) bool { n++; return isJSON(l) }); err != nil || n != 3 {
		t.Errorf("mixed lines: %v, %d lines", err, n)
	}
	if err := EachJSONLine(strings.NewReader(""), "a fake transcript", isJSON); err != nil {
		t.Errorf("empty: %v", err)
	}
	err := EachJSONLine(strings.NewReader("hello\nworld\n"), "a fake transcript", isJSON)
	if err == nil || err.Error() != "not a fake transcript: none of its 2 lines is a JSON object" {
		t.Errorf("no JSON: %v", err)
	}
	err = EachJSONLine(iotest.ErrReader(iotest.ErrTimeout), "a fake transcript", isJSON)
	if err == nil || err.Error() != "reading the transcript: timeout" {
		t.Errorf("read error: %v", err)
	}
}

func TestFirstString(t *testing.T) {
	m := map[string]any{"path": "", "file_path": 3, "filePath": "a.md", "x": "b.md"}
	if got := FirstString(m, "path", "file_path", "filePath", "x"); got != "a.md" {
		t.Errorf("got %q", got)
	}
	if got := FirstString(nil, "path"); got != "" {
		t.Errorf("nil map: %q", got)
	}
}
