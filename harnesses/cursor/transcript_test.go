package cursor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/harness"
)

func TestFindTranscript(t *testing.T) {
	home := t.TempDir()
	projects := filepath.Join(home, ".cursor", "projects")
	ide := filepath.Join(projects, "home-dev-shop", "agent-transcripts", "c1", "c1.jsonl")
	write(t, ide, []byte("{}\n"))
	older := filepath.Join(projects, "other", "agent-transcripts", "x-c2.jsonl")
	newer := filepath.Join(projects, "third", "agent-transcripts", "y", "c2-y.jsonl")
	write(t, older, []byte("{}\n"))
	write(t, newer, []byte("{}\n"))
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(older, past, past); err != nil {
		t.Fatal(err)
	}
	envPath := filepath.Join(home, "elsewhere.jsonl")
	write(t, envPath, []byte("{}\n"))

	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"HOME": home})}
	for _, tc := range []struct{ conv, cwd, want string }{
		{"c1", "/home/dev/shop", ide},   // the IDE's nested layout
		{"c2", "/home/dev/shop", newer}, // the newest file naming the id, anywhere
		{"c3", "/home/dev/shop", ""},
		{"../c1", "/home/dev/shop", ""}, // never a path from the payload
		{"", "/home/dev/shop", ""},
	} {
		if got := a.findTranscript(tc.conv, tc.cwd); got != tc.want {
			t.Errorf("findTranscript(%q) = %q, want %q", tc.conv, got, tc.want)
		}
	}
	withEnv := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"HOME": home, "CURSOR_TRANSCRIPT_PATH": envPath})}
	if got := withEnv.findTranscript("c1", "/home/dev/shop"); got != envPath {
		t.Errorf("CURSOR_TRANSCRIPT_PATH not used: %q", got)
	}
	noHome := &Adapter{Base: harness.Base{S: spec}, getenv: env(nil)}
	if got := noHome.findTranscript("c1", "/home/dev/shop"); got != "" {
		t.Errorf("found %q without a home folder", got)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"/home/dev/shop":       "home-dev-shop",
		"/Users/me/my.proj_v2": "Users-me-my-proj-v2",
		"/srv/café":            "srv-caf-",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseTranscriptRejectsOtherFiles(t *testing.T) {
	if _, err := New().ParseTranscript(strings.NewReader("User: hi\nAssistant: hello\n")); err == nil {
		t.Errorf("a plain-text transcript gave %v", err)
	}
	tr, err := New().ParseTranscript(strings.NewReader(""))
	if err != nil || len(tr.Turns) != 0 {
		t.Errorf("empty transcript: %+v %v", tr, err)
	}
}
