package store

import (
	"os"
	"strings"
	"testing"
	"time"
)

// The committed installed-version names the release that set the
// knowledge base up, and the day; a development build records no version
// and never rewrites a release's record.
func TestInstalledVersionNamesNoBuild(t *testing.T) {
	k := New(t.TempDir())
	day1 := time.Date(2026, 3, 4, 15, 16, 17, 0, time.UTC)
	read := func() *Installed {
		t.Helper()
		in, err := k.ReadInstalled()
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	if _, err := k.Scaffold(InitOptions{Version: "", Now: day1}); err != nil {
		t.Fatal(err)
	}
	if in := read(); in.Version != "" || in.InstalledAt != "2026-03-04" || in.Package != "kk" || in.SchemaVersion != 1 {
		t.Fatalf("a development build's record: %+v", in)
	}
	// a release's upgrade records the release and its day
	day2 := day1.AddDate(0, 1, 0)
	if _, err := k.Scaffold(InitOptions{Version: "1.4.0", Now: day2, Upgrade: true}); err != nil {
		t.Fatal(err)
	}
	if in := read(); in.Version != "1.4.0" || in.InstalledAt != "2026-04-04" {
		t.Fatalf("after a release's upgrade: %+v", in)
	}
	before, err := os.ReadFile(k.InstalledPath())
	if err != nil {
		t.Fatal(err)
	}
	// a development build's upgrade, and the same release's, change nothing
	for _, v := range []string{"", "1.4.0"} {
		if _, err := k.Scaffold(InitOptions{Version: v, Now: day2.AddDate(0, 1, 0), Upgrade: true}); err != nil {
			t.Fatal(err)
		}
		if after, _ := os.ReadFile(k.InstalledPath()); string(after) != string(before) {
			t.Fatalf("an upgrade by %q rewrote the record:\n%s", v, after)
		}
	}
}

func TestLaterThan(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"v1.10.0", "v1.9.0", true},
		{"v1.9.0", "v1.10.0", false},
		{"2026-12-01", "2026-11-30", true},
		{"v1.0.0", "", true},
		{"", "v1.0.0", false},
		{"v2.0.0", "v2.0.0", false},
	} {
		if got := laterThan(c.a, c.b); got != c.want {
			t.Errorf("laterThan(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// A record a merge left with git's conflict markers (a clone without kk's
// merge driver) reads as the merge of its sides: no command fails on it,
// and kk init --upgrade keeps both sides' harnesses.
func TestReadInstalledWithConflictMarkers(t *testing.T) {
	k := New(t.TempDir())
	if err := os.MkdirAll(k.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	text := "{\n  \"schema_version\": 1,\n  \"package\": \"kk\",\n  \"version\": \"\",\n  \"installed_at\": \"2026-12-01\",\n  \"harnesses\": [\n<<<<<<< HEAD\n    \"codex\"\n=======\n    \"claude\"\n>>>>>>> a\n  ]\n}\n"
	if err := os.WriteFile(k.InstalledPath(), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := k.ReadInstalled()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(in.Harnesses, ","); got != "claude,codex" || in.InstalledAt != "2026-12-01" || in.Package != "kk" {
		t.Fatalf("read %+v, want both harnesses", in)
	}
}
