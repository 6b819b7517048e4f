package hooks

import (
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

// TestRenderControls: a transcript's turns may hold terminal escapes (an
// agent turn quoting a tool's coloured output, a file that sets the
// terminal's title, a paste with a bidirectional override). They went into
// the session log as they were, and the log is read in a terminal and
// handed to a model by the extraction. Each control character becomes
// U+FFFD, as NUL already did; tab and line breaks stay.
func TestRenderControls(t *testing.T) {
	turns := []harness.Turn{
		{Role: harness.User, Text: "fix the \x1b]0;pwn\a deploy\tnow\r\nplease \u202Eevil\u202C"},
		{Role: harness.Agent, Text: "done \x1b[2J\x00 \u009b31m"},
	}
	want := "[USER]: fix the \uFFFD]0;pwn\uFFFD deploy\tnow\r\nplease \uFFFDevil\uFFFD\n\n[AGENT]: done \uFFFD[2J\uFFFD \uFFFD31m"
	if got, _ := Render(turns); got != want {
		t.Errorf("Render = %q\nwant     %q", got, want)
	}
}
