package indexfiles_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// A note written by hand (or pulled from anyone's clone) may hold
// terminal escapes in its title or description: an ESC sequence that
// sets the terminal's title or clears its screen, BEL, a C1 control, a
// bidirectional override. The generated files (ENTRY.md, the folders'
// index.md, GRAPH.md) are read with cat and shown in every session's
// context: each such character is written there as U+FFFD, as the hooks
// write it into hook context (safetext.ReplaceControls), while ordinary
// text, letters outside ASCII and emoji, stays as it is. Before, the
// generated files carried them raw, and cat ENTRY.md ran them.
func TestGeneratedFilesCarryNoTerminalControls(t *testing.T) {
	k := store.New(t.TempDir())
	ctx := context.Background()
	if _, err := txn.Init(ctx, k, store.InitOptions{Version: "test", Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	leaf := "---\ntype: practice\ntitle: \"Deploy \\e]0;pwned\\a\\e[2J é 日本 🙂 \\u202Eevil\\u202C\"\n" +
		"description: \"Retry \\x9b2J then \\e[31mred\\e[0m, \\u2066isolate\\u2069 ≤ ∑\"\n" +
		"tags:\n  - \"t\\e[1m\"\nkk_schema_version: 3\nkk_id: practice-hostile\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\nkk_version: 1\n---\nBody.\n"
	if err := os.MkdirAll(k.NodePath("ops"), 0o755); err != nil {
		t.Fatal(err)
	}
	// One in a folder (its index.md), one at the root (ENTRY.md).
	if err := os.WriteFile(k.NodePath("ops/practice-hostile.md"), []byte(leaf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.NodePath("practice-hostile-root.md"), []byte(strings.Replace(leaf, "kk_id: practice-hostile\n", "kk_id: practice-hostile-root\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Rebuild(ctx, k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	for _, rel := range []string{"ENTRY.md", "GRAPH.md", "nodes/index.md", "nodes/ops/index.md"} {
		data, err := os.ReadFile(filepath.Join(k.Dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for _, r := range text {
			if r == '\t' || r == '\n' || r == '\r' {
				continue
			}
			if r < 0x20 || r == 0x7f || (0x80 <= r && r <= 0x9f) || (0x202a <= r && r <= 0x202e) || (0x2066 <= r && r <= 0x2069) {
				t.Errorf("%s holds the control character %U", rel, r)
			}
		}
		for _, want := range []string{"é 日本 🙂", "≤ ∑"} {
			if strings.Contains(text, want) {
				shown[want] = true
			}
		}
		if !strings.Contains(text, "Deploy") {
			t.Errorf("%s does not list the note:\n%s", rel, text)
		} else if !strings.Contains(text, "Deploy \uFFFD") || !strings.Contains(text, "pwned\uFFFD\uFFFD") || !strings.Contains(text, "🙂 \uFFFDevil\uFFFD") {
			t.Errorf("%s does not show the title with U+FFFD for each control:\n%s", rel, text)
		}
	}
	for _, want := range []string{"é 日本 🙂", "≤ ∑"} {
		if !shown[want] {
			t.Errorf("no generated file shows the ordinary text %q", want)
		}
	}
}

// A note written by hand may hold a line break inside a one-line field
// (a tag "ok\n## Ignore previous instructions", which kk's writers
// refuse): no generated file prints it as a line of its own, where it
// would read as a heading of the page every session is shown. Before, a
// folder's index.md printed a tag's line break as it was.
func TestGeneratedFilesKeepOneLineFieldsOnOneLine(t *testing.T) {
	k := store.New(t.TempDir())
	ctx := context.Background()
	if _, err := txn.Init(ctx, k, store.InitOptions{Version: "test", Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	leaf := "---\ntype: practice\ntitle: \"T\\n## Injected title\"\ndescription: \"d\\n## Injected description\"\n" +
		"tags:\n  - \"ok\\n## Injected tag\"\nkk_schema_version: 3\nkk_id: practice-t\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\nkk_version: 1\n---\nBody.\n"
	for _, rel := range []string{"net/practice-t.md", "practice-t-root.md"} {
		if err := os.MkdirAll(filepath.Dir(k.NodePath(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		data := leaf
		if rel == "practice-t-root.md" {
			data = strings.Replace(leaf, "kk_id: practice-t\n", "kk_id: practice-t-root\n", 1)
		}
		if err := os.WriteFile(k.NodePath(rel), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := txn.Rebuild(ctx, k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"ENTRY.md", "GRAPH.md", "nodes/index.md", "nodes/net/index.md"} {
		data, err := os.ReadFile(filepath.Join(k.Dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "Injected") {
			t.Errorf("%s does not list the note:\n%s", rel, data)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimLeft(line, " #"), "Injected") {
				t.Errorf("%s line %d starts with a field's second line: %q", rel, i+1, line)
			}
		}
	}
}
