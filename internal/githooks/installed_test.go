package githooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/store"
)

func TestMergeInstalled(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, in store.Installed) string {
		p := filepath.Join(dir, name)
		data, err := store.EncodeInstalled(in)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rec := func(version, at string, harnesses ...string) store.Installed {
		return store.Installed{SchemaVersion: 1, Package: "kk", Version: version, InstalledAt: at, Harnesses: harnesses}
	}
	base := write("base", rec("v1.9.0", "2026-11-01", "cursor", "gemini"))
	// ours adds claude and removes gemini; theirs adds codex and upgrades
	ours := write("ours", rec("v1.9.0", "2026-11-20", "claude", "cursor"))
	theirs := write("theirs", rec("v1.10.0", "2026-11-05", "codex", "cursor", "gemini"))
	if err := MergeInstalled(base, ours, theirs); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(ours)
	want, _ := store.EncodeInstalled(rec("v1.10.0", "2026-11-20", "claude", "codex", "cursor"))
	if string(data) != string(want) {
		t.Fatalf("merged:\n%s\nwant:\n%s", data, want)
	}

	// kk_command changed differently on both sides is a conflict; ours stays
	b := rec("", "2026-11-01")
	o, th := b, b
	o.KKCommand, th.KKCommand = "/opt/kk", "./bin/kk"
	base, ours, theirs = write("base", b), write("ours", o), write("theirs", th)
	before, _ := os.ReadFile(ours)
	err := MergeInstalled(base, ours, theirs)
	if err == nil || !strings.Contains(err.Error(), "kk_command") {
		t.Fatalf("err = %v, want one naming kk_command", err)
	}
	if after, _ := os.ReadFile(ours); string(after) != string(before) {
		t.Fatal("ours changed on a conflict")
	}
}

// A person's lines after FOLDER_SUMMARIES.md's list come through the
// merge: each side's additions, once, and not one a side removed.
func TestMergeSummariesKeepsAPersonsLines(t *testing.T) {
	dir := t.TempDir()
	head := "---\nschema_version: 1\nsummaries: {}\n---\n# Folder Summaries\n\n_No folder summaries recorded._\n"
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := write("base", head+"Old line.\nShared line.\n")
	ours := write("ours", head+"Shared line.\nOurs added.\n")
	theirs := write("theirs", head+"Old line.\nShared line.\nTheirs added.\n")
	if err := MergeSummaries(base, ours, theirs); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(ours)
	lines := store.SummariesHandLines(got)
	want := []string{"Shared line.", "Ours added.", "Theirs added."}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("lines kept = %q, want %q\n%s", lines, want, got)
	}
}
