package serve

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/httpapi"
)

// gitThatFails puts a git on PATH, for the rest of the test, that runs
// the real one, except while the file it returns exists: then a command
// of subcommand sub with an argument matching the shell pattern pat fails
// as git does, saying msg on stderr with git's exit status 128. The file
// empty, it fails every time; holding a number, that many times more.
func gitThatFails(t *testing.T, sub, pat, msg string) (flag string) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	flag = filepath.Join(dir, "fail")
	script := fmt.Sprintf(`#!/bin/sh
if [ -e %[1]q ]; then
  sub=0; hit=0
  for a in "$@"; do
    [ "$a" = %[2]q ] && sub=1
    case "$a" in %[3]s) hit=1;; esac
  done
  if [ $sub = 1 ] && [ $hit = 1 ]; then
    n=$(cat %[1]q)
    if [ -z "$n" ] || [ "$n" -gt 0 ]; then
      [ -n "$n" ] && echo $((n-1)) > %[1]q
      printf '%%s\n' %[4]q >&2
      exit 128
    fi
  fi
fi
exec %[5]q "$@"
`, flag, sub, pat, msg, real)
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return flag
}

// TestFaultGitFailureIsNotAPersonsEdit: a metadata-only edit's commit
// checks that the note's bytes before the job are the branch's; a note
// git converts on its way in (here CRLF in the work tree, .gitattributes
// text eol=lf) is compared as git stores it, git saying whether the tip
// holds that blob (git rev-parse <tip>:<path>). A failure of that git
// command was read as "the branch does not hold it", and the job failed
// as on a person's uncommitted edit no one made ("… has changes in the
// work tree that are not committed"). A git failure is not an answer:
// the job fails with git's words, its files put back, no commit; and
// once git works, the same edit is done.
func TestFaultGitFailureIsNotAPersonsEdit(t *testing.T) {
	const says = "fatal: unable to read tree of the test: Input/output error"
	flag := gitThatFails(t, "rev-parse", "*:.ai/kenkeep/nodes/*", says)
	k := newRepo(t, 0)
	writeFile(t, filepath.Join(k.Root, ".gitattributes"), "*.md text eol=lf\n")
	git(t, k, "add", ".gitattributes")
	git(t, k, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-qm", "attributes")
	s := start(t, k, nil)
	c := s.post(t, httpapi.PostRequest{Title: "Converted note", Content: "Kept with CRLF in the work tree.\n"})
	if c.Status != "done" {
		t.Fatalf("post: %+v", c)
	}
	crlf := func() string {
		t.Helper()
		data, err := os.ReadFile(k.NodePath(c.Path))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n", "\r\n")
		writeFile(t, k.NodePath(c.Path), text)
		return text
	}
	// git failing to read the tip's blob: not a person's edit.
	before := crlf()
	head := git(t, k, "rev-parse", "HEAD")
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	j := s.edit(t, httpapi.EditRequest{Path: c.Path, Title: "Retitled twice"})
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	if j.Status != "failed" || strings.Contains(j.Error, "not committed") || !strings.Contains(j.Error, "Input/output error") {
		t.Fatalf("the edit while git could not read the tip's blob: %+v", j)
	}
	if got, _ := os.ReadFile(k.NodePath(c.Path)); string(got) != before {
		t.Errorf("after the failed edit, the note holds:\n%q\nwant:\n%q", got, before)
	}
	if got := git(t, k, "rev-parse", "HEAD"); got != head {
		t.Fatalf("the failed edit made a commit:\n%s", git(t, k, "show", "--stat", "HEAD"))
	}
	// git working again: the same edit is done (the CRLF note is the
	// branch's, as git stores it).
	if j := s.edit(t, httpapi.EditRequest{Path: c.Path, Title: "Retitled twice"}); j.Status != "done" {
		t.Fatalf("the edit once git works: %+v", j)
	}
}
