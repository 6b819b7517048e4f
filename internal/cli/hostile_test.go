//go:build unix

package cli

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestHostileInput sends every writing command the inputs a bad-input
// audit found accepted or mishandled: a key given twice, a NUL (escaped
// and raw), invalid UTF-8, an oversize file, /dev/zero, a FIFO nobody
// writes to, ids with no ASCII spelling, paths outside the repository.
// Each must exit 1 with a message naming the flag, field or file, leave
// the repository exactly as it was (git status), and stay within bounded
// memory (the peak resident size of the process).
func TestHostileInput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs about a hundred kk processes; run without -short")
	}
	root := t.TempDir()
	kb := &killKB{t: t, root: root}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	kb.run("", "init")
	kb.run("A leaf.\n", "node", "write", "practice", "first", "--summary", "one leaf")
	kb.run("", "upsert", "--type", "req", "--id", "REQ-1", "--title", "A requirement", "--source", "test")
	kb.run("", "graph", "create", "atom", "--name", "HTTP errors", "--path", "internal/http/**", "--knowledge-file", "/dev/null")
	git("add", "-A")
	git("commit", "-q", "-m", "base")

	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	inputs := []struct{ name, path, want string }{
		{"key twice", file("dup.json", `{"entities":[],"entities":[{"id":"REQ-1","version":1}],"created_by":"a","source":"b"}`), `given twice`},
		{"escaped NUL", file("nulesc.json", `{"entities":[{"id":"R\u0000","type":"req"}],"created_by":"a","source":"b"}`), `NUL`},
		{"raw NUL", file("nulraw.json", "{\"created_by\":\"a\x00\"}"), `NUL|\\x00`},
		{"invalid UTF-8", file("badutf.json", "{\"created_by\":\"a\xffb\"}"), `UTF-8`},
		{"oversize", file("big.json", `{"x":"`+strings.Repeat("a", 9<<20)+`"}`), `big.json is larger than 8 MiB`},
		{"/dev/zero", "/dev/zero", `/dev/zero is larger than 8 MiB`},
		{"FIFO without a writer", fifo, `fifo is empty`},
	}
	writers := [][]string{
		{"node", "write", "--input"},
		{"upsert", "--input"},
		{"delete", "--input"},
		{"graph", "create", "--input"},
		{"changelog", "append", "--input"},
		{"curate-persist", "--input"},
		{"curate-dedup", "--run-id", "R", "--input"},
		{"rebalance", "move", "--input"},
		{"place", "apply", "--input"},
		{"node", "phrasings", "--input"},
		{"session-log", "stage-live", "--session-id", "0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e7f", "--input"},
	}
	type hostileCase struct {
		name  string
		args  []string
		stdin string
		want  string
	}
	var cases []hostileCase
	for _, w := range writers {
		for _, in := range inputs {
			cases = append(cases, hostileCase{strings.Join(w[:min(2, len(w))], " ") + "/" + in.name, append(append([]string{}, w...), in.path), "", in.want})
		}
	}
	cases = append(cases,
		hostileCase{"node write/id with no ASCII spelling", []string{"node", "write", "practice", "日本語", "--summary", "s"}, "b", `slug "日本語" has the letter '日', which has no ASCII spelling`},
		hostileCase{"node write/title with no ASCII spelling", []string{"node", "write", "--input", file("title.json", `{"type":"practice","title":"API 日本","description":"d","body":"b"}`)}, "", `title "API 日本" has the letter`},
		hostileCase{"node write/invalid UTF-8 title", []string{"node", "write", "practice", "ok", "--title", "bad\xff", "--summary", "s"}, "b", `field "title": is not valid UTF-8`},
		hostileCase{"node write/NUL in the body", []string{"node", "write", "practice", "ok", "--summary", "s"}, "a\x00b", `field "body": holds a NUL byte`},
		hostileCase{"node write/--body-file /dev/zero", []string{"node", "write", "practice", "ok", "--description", "s", "--body-file", "/dev/zero"}, "", `--body-file: /dev/zero is larger than 1 MiB`},
		hostileCase{"node write/--folder outside", []string{"node", "write", "practice", "ok", "--summary", "s", "--folder", "../../x"}, "b", `folder`},
		hostileCase{"node write/--source-doc outside", []string{"node", "write", "practice", "ok", "--summary", "s", "--source-doc", "../../etc/passwd", "--source-hash", strings.Repeat("a", 64)}, "b", `source_doc.*climbs out`},
		hostileCase{"upsert/non-ASCII id", []string{"upsert", "--type", "req", "--id", "café", "--title", "t", "--source", "s"}, "", `id`},
		hostileCase{"upsert/invalid UTF-8 title", []string{"upsert", "--type", "req", "--id", "REQ-2", "--title", "bad\xff", "--source", "s"}, "", `VALIDATION_ERROR: (entities\[0\]\.)?title: is not valid UTF-8`},
		hostileCase{"graph create/name with no ASCII spelling", []string{"graph", "create", "atom", "--name", "日本語", "--path", "x/**", "--knowledge-file", "/dev/null"}, "", `VALIDATION_ERROR: name: .*no ASCII spelling`},
		hostileCase{"graph create/invalid UTF-8 name", []string{"graph", "create", "atom", "--name", "bad\xff", "--path", "x/**", "--knowledge-file", "/dev/null"}, "", `VALIDATION_ERROR: name`},
		hostileCase{"init/--kk-command with a control character", []string{"init", "--harnesses", "claude", "--kk-command", "kk\x01"}, "", `--kk-command "kk\\x01": holds the control character U\+0001 at character 3`},
		hostileCase{"init/--kk-command with an escape sequence", []string{"init", "--harnesses", "claude", "--kk-command", "\x1b[2Jkk"}, "", `--kk-command .*holds the control character U\+001B at character 1`},
		hostileCase{"init/--kk-command with a bidirectional control", []string{"init", "--upgrade", "--kk-command", "kk\u202e"}, "", `--kk-command .*holds the bidirectional control character U\+202E`},
		hostileCase{"pack export/--description with an escape sequence", []string{"pack", "export", "--name", "p", "--pack-version", "1.0.0", "--description", "d\x1b[2J", "--output", filepath.Join(dir, "pack-out")}, "", `^kk: --description: holds the control character U\+001B at character 2`},
		hostileCase{"pack export/--pack-version with a bell", []string{"pack", "export", "--name", "p", "--pack-version", "1\a", "--description", "d", "--output", filepath.Join(dir, "pack-out")}, "", `^kk: --pack-version: holds the control character U\+0007 at character 2`},
		hostileCase{"session-log update-proposals/--error with an escape sequence", []string{"session-log", "update-proposals", ".ai/kenkeep/_sessions/20260520-0830-x.md", "--status", "failed", "--error", "timed out\x1b[2J"}, "", `^kk: --error: holds the control character U\+001B on line 1`},
		hostileCase{"session-log update-proposals/--error not UTF-8", []string{"session-log", "update-proposals", ".ai/kenkeep/_sessions/20260520-0830-x.md", "--status", "failed", "--error", "bad\xff"}, "", `^kk: --error: is not valid UTF-8`},
		hostileCase{"graph create/--body-file /dev/zero", []string{"graph", "create", "atom", "--name", "Z", "--path", "x/**", "--body-file", "/dev/zero"}, "", `--body-file: /dev/zero is larger than 8 MiB`},
	)
	limit := int64(200 << 20) // peak resident bytes
	if raceEnabled {
		limit = 1 << 30 // the race detector multiplies memory; still far below the gigabytes of an unbounded read
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := kbState(t, root)
			cmd := kb.command(c.stdin, c.args...)
			cmd.Dir = root
			out, err := cmd.CombinedOutput()
			code := cmd.ProcessState.ExitCode()
			if err == nil || code != 1 {
				t.Errorf("exit %d (%v), want 1\n%s", code, err, out)
			}
			if !regexp.MustCompile(c.want).Match(out) {
				t.Errorf("output does not match %q:\n%s", c.want, out)
			}
			if st := git("status", "--porcelain", "--untracked-files=all"); st != "" {
				t.Errorf("the repository changed:\n%s", st)
				git("reset", "-q", "--hard")
				git("clean", "-qfd")
			}
			if after := kbState(t, root); after != before {
				t.Errorf("the files under .ai/kenkeep changed (git-ignored ones included):\nbefore:\n%s\nafter:\n%s", before, after)
			}
			if peak := maxRSS(cmd.ProcessState); peak > limit {
				t.Errorf("peak memory %d MB; the bound is %d MB", peak>>20, limit>>20)
			}
		})
	}
}

// maxRSS is the peak resident size of a finished process, in bytes.
func maxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) // bytes there
	}
	return int64(ru.Maxrss) << 10 // kilobytes on Linux
}

// kbState lists every file under root's .ai/kenkeep, git-ignored ones
// included (.state/, _logs/, _sessions/), with a checksum of its bytes,
// leaving out only what a reader refreshes as it reads: the writer lock's
// holder record (.state/lock, rewritten by every lock probe), the search
// index of each branch (.state/branches/*/index.db and its -wal and -shm,
// synced by every read) and the freshness cache (.state/freshness.json).
// A refused command must leave the list as it was.
func kbState(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	dir := filepath.Join(root, ".ai", "kenkeep")
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			fmt.Fprintf(&b, "%s/\n", rel)
			return nil
		}
		if rel == ".state/lock" || rel == ".state/freshness.json" || strings.HasPrefix(rel, ".state/branches/") && strings.Contains(path.Base(rel), "index.db") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %x\n", rel, sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
