//go:build unix

package graph

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestContextTaskFileConfined: query_graph's taskFile comes from an agent
// (MCP) or a client (HTTP) as well as from a person, so kk reads it only
// when it is a regular file inside the repository, of at most
// MaxTaskFileBytes: a file elsewhere (/etc, ../, a link out of the tree),
// a folder, a FIFO (which would block the call for ever) or a huge file
// is a VALIDATION_ERROR naming taskFile and the path as given, never the
// absolute path of the repository or an error of the operating system.
func TestContextTaskFileConfined(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	createAtom(t, k, "Pay", []string{"src/pay/**"}, "")
	outside := filepath.Join(t.TempDir(), "secret.md")
	task := "# Task\n\n## Context Files\n\n- src/pay/a.ts\n"
	for _, f := range []string{outside, filepath.Join(k.Root, "task.md")} {
		if err := os.WriteFile(f, []byte(task), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(k.Root, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("task.md", filepath.Join(k.Root, "inside-link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(k.Root, "zero.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(k.Root, "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(k.Root, "src", "pay"), 0o755); err != nil {
		t.Fatal(err)
	}
	big := "## Context Files\n" + strings.Repeat("x", MaxTaskFileBytes)
	if err := os.WriteFile(filepath.Join(k.Root, "big.md"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(k.Root, outside)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, want string }{
		{outside, "is outside the repository"},
		{rel, "is outside the repository"},
		{"/etc/hostname", "is outside the repository"},
		{"/proc/self/environ", "is outside the repository"},
		{"link.md", "is outside the repository"},
		{"zero.md", "is outside the repository"},
		{"fifo.md", "is not a regular file"},
		{"src", "is a folder"},
		{"nope.md", "does not exist"},
		{"big.md", "the limit is"},
	} {
		b, _ := json.Marshal(map[string]any{"operation": "context", "taskFile": c.file})
		r := run(t, k, QueryGraphJSON, string(b))
		e, _ := r["error"].(map[string]any)
		msg, _ := e["message"].(string)
		d, _ := e["details"].(map[string]any)
		if errCode(r) != "VALIDATION_ERROR" || d["field"] != "taskFile" || !strings.HasPrefix(msg, "taskFile: ") || !strings.Contains(msg, c.want) {
			t.Errorf("taskFile %q: %v; want a VALIDATION_ERROR on taskFile saying %q", c.file, r, c.want)
			continue
		}
		if c.file != outside && strings.Contains(msg, k.Root) {
			t.Errorf("taskFile %q: the message shows the repository's absolute path: %s", c.file, msg)
		}
		if strings.Contains(msg, "open ") || strings.Contains(msg, "read ") || strings.Contains(msg, "lstat ") {
			t.Errorf("taskFile %q: the message is an error of the operating system: %s", c.file, msg)
		}
	}
	for _, f := range []string{"task.md", "./task.md", filepath.Join(k.Root, "task.md"), "inside-link.md"} {
		b, _ := json.Marshal(map[string]any{"operation": "context", "taskFile": f})
		d := mustOK(t, run(t, k, QueryGraphJSON, string(b)))
		if atoms, _ := d["orphanAtoms"].([]any); len(atoms) != 1 {
			t.Errorf("taskFile %q inside the repository: %v", f, d)
		}
	}
}

// A log of task files (.state/task-files.jsonl) that is a named pipe held
// a context query with a taskFile for ever, and kk mcp with it (its open
// for writing waited for a reader): the note is skipped at once and the
// query answers.
func TestContextTaskFileLogNotAFile(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	createAtom(t, k, "Pay", []string{"src/pay/**"}, "")
	if err := os.WriteFile(filepath.Join(k.Root, "task.md"), []byte("## Context Files\n\n- src/pay/a.ts\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(k.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(taskFilesLog(k), 0o600); err != nil {
		t.Fatal(err)
	}
	d := mustOK(t, run(t, k, QueryGraphJSON, `{"operation":"context","taskFile":"task.md"}`))
	if atoms, _ := d["orphanAtoms"].([]any); len(atoms) != 1 {
		t.Errorf("context: %v", d)
	}
	if err := RecordTaskFile(k, "task.md", k.Time()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("RecordTaskFile into a named pipe: %v", err)
	}
}
