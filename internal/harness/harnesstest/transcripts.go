package harnesstest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

// RenderTranscript renders a parsed transcript for golden files: the
// turns one a paragraph, "[USER]: …" and "[AGENT]: …" (the shape of a
// session log's transcript), then the reads, "[READ <tool>]: <path>".
func RenderTranscript(t harness.Transcript) string {
	var b strings.Builder
	for _, turn := range t.Turns {
		tag := "[AGENT]: "
		if turn.Role == harness.User {
			tag = "[USER]: "
		}
		b.WriteString(tag + turn.Text + "\n\n")
	}
	for _, r := range t.Reads {
		b.WriteString("[READ " + r.Tool + "]: " + r.Path + "\n")
	}
	return b.String()
}

// Transcripts parses every transcript under dir (each file but the
// golden *.parsed files) with a and checks what it found against
// <file>.parsed (see RenderTranscript); update rewrites the golden files. A
// user turn that still holds a block a harness injects
// (harness.InjectedTags) fails the test whatever the golden file says. It
// returns how many transcripts it checked.
func Transcripts(t *testing.T, a harness.Adapter, dir string, update bool) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasSuffix(name, ".parsed") || strings.HasPrefix(name, ".") || name == "README.md" {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			got, err := a.ParseTranscript(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, turn := range got.Turns {
				if turn.Role == harness.User && harness.HasTag(turn.Text, harness.InjectedTags...) {
					t.Errorf("a user turn holds text the harness injected:\n%s", turn.Text)
				}
				if strings.TrimSpace(turn.Text) == "" {
					t.Errorf("an empty %s turn", turn.Role)
				}
			}
			Golden(t, filepath.Join(dir, name+".parsed"), []byte(RenderTranscript(got)), update)
		})
	}
	return n
}
