package cli

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestCompletionsAttached fails when a completer names a command or a flag
// the command tree no longer has.
func TestCompletionsAttached(t *testing.T) {
	app := &App{IO: IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, Now: time.Now,
		Getenv: func(string) string { return "" }, Getwd: func() (string, error) { return ".", nil }}
	root := newRootCmd(app)
	if missing := addCompletions(root, app); len(missing) > 0 {
		t.Errorf("completers attached to nothing: %v", missing)
	}
}

func TestCompleteList(t *testing.T) {
	words := completeWords("alpha", "beta", "gamma")
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"", "alpha beta gamma"},
		{"b", "beta"},
		{"alpha,", "alpha,beta alpha,gamma"},
		{"alpha,g", "alpha,gamma"},
		{"alpha,beta,", "alpha,beta,gamma"},
	} {
		got := strings.Join(completeList(words)(nil, nil, tc.in), " ")
		if got != tc.want {
			t.Errorf("completeList(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
