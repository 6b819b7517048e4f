package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// exampleDir is the worked example repository docs/graph.md walks through.
const exampleDir = "testdata/example"

// exampleStep is one "$ kk …" command of the example's README with the
// standard output the README shows for it.
type exampleStep struct {
	line  int    // line of the command in the README, 1-based
	cmd   string // the command as written, without "$ "
	args  []string
	want  string
	start int // index of the first output line in the README's lines
	end   int // index after the last output line
}

var consoleFence = regexp.MustCompile("^```console\\s*$")

// exampleSteps reads the "$ kk …" commands of the ```console blocks of
// the README and the output shown below each one (up to the next command
// or the end of the block).
func exampleSteps(t *testing.T, lines []string) []exampleStep {
	t.Helper()
	var steps []exampleStep
	in := false
	for i, l := range lines {
		switch {
		case !in && consoleFence.MatchString(l):
			in = true
		case in && strings.TrimSpace(l) == "```":
			in = false
			if n := len(steps); n > 0 && steps[n-1].end < 0 {
				steps[n-1].end = i
			}
		case in && strings.HasPrefix(l, "$ "):
			if n := len(steps); n > 0 && steps[n-1].end < 0 {
				steps[n-1].end = i
			}
			cmd := strings.TrimPrefix(l, "$ ")
			args, err := splitCommand(cmd)
			if err != nil {
				t.Fatalf("README.md:%d: %v", i+1, err)
			}
			if len(args) == 0 || args[0] != "kk" {
				t.Fatalf("README.md:%d: %q does not run kk", i+1, cmd)
			}
			steps = append(steps, exampleStep{line: i + 1, cmd: cmd, args: args[1:], start: i + 1, end: -1})
		case in && len(steps) == 0:
			t.Fatalf("README.md:%d: a console block must start with a \"$ kk\" command", i+1)
		}
	}
	if in {
		t.Fatal("README.md: unterminated ```console block")
	}
	for i := range steps {
		steps[i].want = strings.Join(lines[steps[i].start:steps[i].end], "\n")
	}
	return steps
}

// splitCommand splits a command line into words: spaces separate words,
// single quotes keep spaces and quotes.
func splitCommand(s string) ([]string, error) {
	var out []string
	var word strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case quoted && r == '\'':
			quoted = false
		case quoted:
			word.WriteRune(r)
		case r == '\'':
			quoted, inWord = true, true
		case r == ' ':
			if inWord {
				out = append(out, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if inWord {
		out = append(out, word.String())
	}
	return out, nil
}

// copyTree copies the folder src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := copyDir(src, dst); err != nil {
		t.Fatal(err)
	}
}

// copyDir copies the folder src into dst.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// treeHashes returns the sha256 of every file under root except kk's
// derived state (.ai/kenkeep/.state/), by relative path.
func treeHashes(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".ai/kenkeep/.state" {
				return fs.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestExampleRepo runs every "$ kk …" command of the worked example's
// README against a copy of the example and compares its standard output
// with the README, so the walkthrough (and docs/graph.md, which points at
// it) cannot drift from the code. The commands are read-only: the
// example's files stay as committed. With -update (or KK_UPDATE=1) the
// README's outputs are rewritten.
func TestExampleRepo(t *testing.T) {
	t.Parallel()
	readmePath := filepath.Join(exampleDir, "README.md")
	src, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	steps := exampleSteps(t, lines)

	// The walkthrough must keep covering what the example is for.
	for _, want := range []string{"index rebuild --check", "lint", "check", "context ", "context --task-file", "query --type req", "query --type symbol --rel implements", "search "} {
		found := false
		for _, s := range steps {
			found = found || strings.HasPrefix(s.cmd, "kk "+want)
		}
		if !found {
			t.Errorf("README.md has no \"$ kk %s…\" step", want)
		}
	}

	dir := t.TempDir()
	copyTree(t, exampleDir, dir)
	before := treeHashes(t, dir)

	updating := *update || os.Getenv("KK_UPDATE") == "1"
	for i, s := range steps {
		code, stdout, stderr := run(t, dir, "", s.args...)
		if code != 0 {
			t.Errorf("README.md:%d: %s: exit %d, want 0\nstderr: %s", s.line, s.cmd, code, stderr)
			continue
		}
		got := strings.TrimRight(stdout, "\n")
		if updating {
			steps[i].want = got
			continue
		}
		if got != s.want {
			t.Errorf("README.md:%d: %s: stdout differs from the README\n--- README\n%s\n--- got\n%s", s.line, s.cmd, s.want, got)
		}
	}

	after := treeHashes(t, dir)
	for p, h := range before {
		if after[p] != h {
			t.Errorf("the walkthrough changed %s; its commands must be read-only", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("the walkthrough created %s outside .ai/kenkeep/.state", p)
		}
	}

	if updating {
		var out []string
		prev := 0
		for _, s := range steps {
			out = append(out, lines[prev:s.start]...)
			if s.want != "" {
				out = append(out, strings.Split(s.want, "\n")...)
			}
			prev = s.end
		}
		out = append(out, lines[prev:]...)
		if err := os.WriteFile(readmePath, []byte(strings.Join(out, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
