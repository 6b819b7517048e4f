package serve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/store"
)

// layout is a way a repository kk serve serves can be set up.
type layout struct {
	name string
	// before runs in the empty folder before the knowledge base is made.
	before func(t *testing.T, dir string)
	// after runs once the knowledge base is committed; it returns the
	// folder to serve (a linked work tree's) and the repository's main
	// folder.
	after func(t *testing.T, dir string) string
	// crlfStays is set where CRLF content is committed as it is posted
	// (no .gitattributes conversion).
	converts bool
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitx.Run(context.Background(), dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// hookLog is where the hooks of a layout record that git ran them,
// beside the repository.
func hookLog(repo string) string { return filepath.Join(filepath.Dir(repo), "hooks.log") }

func writeHook(t *testing.T, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

var layouts = []layout{
	{name: "plain"},
	{name: "index-v4", after: func(t *testing.T, dir string) string {
		gitIn(t, dir, "config", "index.version", "4")
		gitIn(t, dir, "update-index", "--index-version", "4")
		return dir
	}},
	{name: "split-index", after: func(t *testing.T, dir string) string {
		gitIn(t, dir, "config", "core.splitIndex", "true")
		gitIn(t, dir, "update-index", "--split-index")
		return dir
	}},
	{name: "sparse-checkout", after: func(t *testing.T, dir string) string {
		if err := os.MkdirAll(filepath.Join(dir, "other", "deep"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "other", "deep", "code.txt"), []byte("outside the cone\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gitIn(t, dir, "add", "other")
		gitIn(t, dir, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-qm", "other")
		gitIn(t, dir, "config", "index.sparse", "true")
		gitIn(t, dir, "sparse-checkout", "set", "--cone", ".ai")
		if _, err := os.Stat(filepath.Join(dir, "other")); err == nil {
			t.Fatal("the sparse checkout kept other/")
		}
		return dir
	}},
	{name: "sha256", before: func(t *testing.T, dir string) {
		gitIn(t, filepath.Dir(dir), "init", "-q", "--object-format=sha256", "-b", "main", dir)
		for _, kv := range [][2]string{{"gc.auto", "0"}, {"maintenance.auto", "false"}} {
			gitIn(t, dir, "config", kv[0], kv[1])
		}
	}},
	{name: "linked-worktree", after: func(t *testing.T, dir string) string {
		wt := filepath.Join(filepath.Dir(dir), "wt")
		gitIn(t, dir, "worktree", "add", "-q", "-b", "served", wt)
		return wt
	}},
	{name: "hooks", after: func(t *testing.T, dir string) string {
		hooks := filepath.Join(dir, ".git", "hooks")
		writeHook(t, hooks, "pre-commit", "exit 1")
		writeHook(t, hooks, "commit-msg", "exit 1")
		writeHook(t, hooks, "reference-transaction", `echo "$1" >> "`+hookLog(dir)+`"`)
		writeHook(t, hooks, "post-index-change", `echo index >> "`+hookLog(dir)+`"`)
		return dir
	}},
	{name: "core.hooksPath", after: func(t *testing.T, dir string) string {
		hooks := filepath.Join(filepath.Dir(dir), "githooks")
		writeHook(t, hooks, "pre-commit", "exit 1")
		writeHook(t, hooks, "reference-transaction", `echo "$1" >> "`+hookLog(dir)+`"`)
		gitIn(t, dir, "config", "core.hooksPath", hooks)
		return dir
	}},
	{name: "gitattributes", converts: true, after: func(t *testing.T, dir string) string {
		if err := os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("* text=auto\n*.md text eol=lf\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gitIn(t, dir, "add", ".gitattributes")
		gitIn(t, dir, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-qm", "attributes")
		return dir
	}},
}

// The same jobs on repositories laid out in every way git allows that
// kk serve may meet: index v4, a split index, a sparse checkout (with a
// sparse index), SHA-256 objects, a linked work tree, hooks that refuse
// commits (pre-commit, commit-msg: kk's commits are not git commit's and
// do not run them) and hooks git runs around refs and the index,
// core.hooksPath, and .gitattributes that convert CRLF. Every job is
// done with one commit; git fsck --strict finds nothing; git status is
// clean; git's index (ls-files -s) is exactly HEAD's tree; and the
// generated files of HEAD are those of its leaves.
func TestDifferentialLayouts(t *testing.T) {
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			needGit(t)
			dir := filepath.Join(t.TempDir(), "repo")
			if l.before != nil {
				l.before(t, dir)
			}
			k, err := Bootstrap(ctx, dir, store.InitOptions{Version: "test", Now: time.Now(), Command: "test"})
			if err != nil {
				t.Fatal(err)
			}
			for _, kv := range [][2]string{{"gc.auto", "0"}, {"maintenance.auto", "false"}} {
				gitIn(t, dir, "config", kv[0], kv[1])
			}
			if l.after != nil {
				if served := l.after(t, dir); served != dir {
					k = store.New(served)
				}
			}
			s := start(t, k, nil)
			var jobs []httpapi.JobStatus
			for i := range 4 {
				content := fmt.Sprintf("Note %d of the %s layout.\n", i, l.name)
				if i == 3 {
					content = "Posted with CRLF.\r\nSecond line.\r\n"
				}
				j := s.post(t, httpapi.PostRequest{Title: fmt.Sprintf("%s note %d", l.name, i), Content: content, Tags: []string{"layout"}})
				if j.Status != "done" {
					t.Fatalf("post %d: %+v", i, j)
				}
				jobCommit(t, k, "store", j)
				jobs = append(jobs, j)
			}
			e := s.edit(t, httpapi.EditRequest{Path: jobs[0].Path, Content: "Edited.\n", Title: "Edited note"})
			if e.Status != "done" {
				t.Fatalf("edit: %+v", e)
			}
			jobCommit(t, k, "edit", e)
			d, err := s.Client.Delete(ctx, jobs[1].Path)
			if err != nil {
				t.Fatal(err)
			}
			if del := s.wait(t, d.JobID); del.Status != "done" {
				t.Fatalf("delete: %+v", del)
			} else {
				jobCommit(t, k, "delete", del)
			}
			s.stop()
			served := k.Root
			if out, err := gitx.Run(ctx, served, "fsck", "--strict", "--no-dangling"); err != nil {
				t.Errorf("git fsck --strict: %v\n%s", err, out)
			}
			if st := gitIn(t, served, "status", "--porcelain", "--untracked-files=all"); st != "" {
				t.Errorf("git status:\n%s", st)
			}
			index := strings.Split(gitIn(t, served, "ls-files", "-s"), "\n")
			tree := strings.Split(gitIn(t, served, "ls-tree", "-r", "--format=%(objectmode) %(objectname) 0\t%(path)", "HEAD"), "\n")
			if !slices.Equal(index, tree) {
				t.Errorf("git's index is not HEAD's tree:\nindex %d entries, tree %d", len(index), len(tree))
				for _, e := range index {
					if !slices.Contains(tree, e) {
						t.Errorf("index only: %s", e)
					}
				}
				for _, e := range tree {
					if !slices.Contains(index, e) {
						t.Errorf("tree only: %s", e)
					}
				}
			}
			if !l.converts {
				headChecks(t, k)
			} else if got := gitIn(t, served, "cat-file", "-p", "HEAD:"+store.DirName+"/nodes/"+jobs[3].Path); strings.Contains(got, "\r") {
				t.Error("CRLF content was committed as CRLF under eol=lf")
			}
			switch l.name {
			case "hooks", "core.hooksPath":
				if data, err := os.ReadFile(hookLog(dir)); err != nil || !strings.Contains(string(data), "committed") {
					t.Errorf("git did not run the reference-transaction hook: %q %v", data, err)
				}
			case "sha256":
				if f := gitIn(t, served, "rev-parse", "--show-object-format"); f != "sha256" {
					t.Errorf("object format %s", f)
				}
			case "linked-worktree":
				if b := gitIn(t, dir, "log", "-1", "--format=%s", "served"); !strings.HasPrefix(b, "delete(") {
					t.Errorf("the main repository does not see the served branch's commits: %q", b)
				}
				if b := gitIn(t, dir, "rev-parse", "--abbrev-ref", "HEAD"); b != "main" {
					t.Errorf("the main work tree moved to %s", b)
				}
			}
		})
	}
}
