package server

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/store"
)

// git runs git in dir with the test's own environment (none of the
// variables a case sets) and returns its output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "GIT_AUTHOR_NAME=p", "GIT_AUTHOR_EMAIL=p@p", "GIT_COMMITTER_NAME=p", "GIT_COMMITTER_EMAIL=p@p")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// serveOnce runs kk serve (Run) over root, posts one note, waits for its
// job and stops the server; it returns the job's end and Run's error.
func serveOnce(t *testing.T, root string) (httpapi.JobStatus, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() {
		ran <- Run(ctx, Options{Root: root, Addr: "127.0.0.1:0", Init: store.InitOptions{Version: "test", Now: time.Now()}, Getenv: func(string) string { return "" }})
	}()
	urlFile := filepath.Join(root, store.DirName, ".state", "serve.url")
	var url []byte
	for url == nil {
		select {
		case err := <-ran:
			return httpapi.JobStatus{}, err
		case <-time.After(10 * time.Millisecond):
		}
		if b, err := os.ReadFile(urlFile); err == nil && len(bytes.TrimSpace(b)) > 0 {
			url = bytes.TrimSpace(b)
		}
	}
	c := &httpapi.Client{BaseURL: string(url)}
	j, err := c.Post(ctx, httpapi.PostRequest{Title: "Hook note", Content: "Posted by a server a git hook started.\n"})
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if j, err = c.Wait(wctx, j.JobID, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	cancel()
	return j, <-ran
}

// TestGitEnvironmentOfTheCallerIsNotFollowed: kk serve started from a
// git hook or an editor's task inherits the variables git sets for the
// repository it runs in (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE — a
// pre-commit hook of `git commit -a` gets a temporary index —,
// GIT_OBJECT_DIRECTORY). kk serve serves its root, whatever they name:
// its commits land in the root's repository, through the root's index,
// and the other repository or index is not touched. Found by the serve
// red team, round 6: with GIT_INDEX_FILE naming another file, the
// bootstrap and every job staged into that file, the repository's own
// index never had them, and `git status` showed the knowledge base
// staged for deletion (a person's next commit deleted it); with GIT_DIR
// naming another repository, kk serve refused the root as "not in a git
// repository".
func TestGitEnvironmentOfTheCallerIsNotFollowed(t *testing.T) {
	needGit(t)
	for _, tc := range []struct {
		name string
		env  func(root, other string) map[string]string
	}{
		{"another repository's hook", func(root, other string) map[string]string {
			return map[string]string{
				"GIT_DIR": filepath.Join(other, ".git"), "GIT_WORK_TREE": other,
				"GIT_INDEX_FILE":       filepath.Join(other, ".git", "index"),
				"GIT_OBJECT_DIRECTORY": filepath.Join(other, ".git", "objects"),
			}
		}},
		{"a pre-commit hook's temporary index", func(root, other string) map[string]string {
			return map[string]string{"GIT_DIR": ".git", "GIT_INDEX_FILE": filepath.Join(root, ".git", "next-index-42.lock")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			root, other := filepath.Join(dir, "repo"), filepath.Join(dir, "other")
			for _, r := range []string{root, other} {
				git(t, dir, "init", "-q", "-b", "main", r)
				if err := os.WriteFile(filepath.Join(r, "a.txt"), []byte("a\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				git(t, r, "add", "a.txt")
				git(t, r, "commit", "-q", "-m", "first")
			}
			// A person's staged file, which stays staged and out of kk's commits.
			if err := os.WriteFile(filepath.Join(root, "b.txt"), []byte("b\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			git(t, root, "add", "b.txt")
			env := tc.env(root, other)
			if f, ok := env["GIT_INDEX_FILE"]; ok && strings.HasPrefix(f, root) {
				idx, err := os.ReadFile(filepath.Join(root, ".git", "index"))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(f, idx, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			otherHead := git(t, other, "rev-parse", "HEAD")
			otherIndex, err := os.ReadFile(filepath.Join(other, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			var tmpIndex []byte
			if f := env["GIT_INDEX_FILE"]; strings.HasPrefix(f, root) {
				tmpIndex, _ = os.ReadFile(f)
			}
			for k, v := range env {
				t.Setenv(k, v)
			}
			cwd, err := os.Getwd()
			if err != nil {
				t.Fatal(err)
			}
			t.Chdir(root) // a hook runs at the top of its work tree
			j, err := serveOnce(t, root)
			t.Chdir(cwd)
			if err != nil {
				t.Fatalf("kk serve with %v: %v", env, err)
			}
			if j.Status != "done" {
				t.Fatalf("job %+v; want done", j)
			}
			log := git(t, root, "log", "--format=%s")
			if !strings.Contains(log, "store(") || !strings.Contains(log, "init: bootstrap knowledge base") {
				t.Errorf("the root's history:\n%s; want the bootstrap and the job's commit", log)
			}
			if st := git(t, root, "status", "--porcelain", "--untracked-files=no"); st != "A  b.txt\n" {
				t.Errorf("git status of the root:\n%s; want only the person's staged b.txt (the index holds kk's commits)", st)
			}
			if h := git(t, other, "rev-parse", "HEAD"); h != otherHead {
				t.Errorf("the other repository's HEAD moved: %s, was %s", h, otherHead)
			}
			if idx, _ := os.ReadFile(filepath.Join(other, ".git", "index")); !bytes.Equal(idx, otherIndex) {
				t.Error("the other repository's index was written")
			}
			if tmpIndex != nil {
				if idx, _ := os.ReadFile(env["GIT_INDEX_FILE"]); !bytes.Equal(idx, tmpIndex) {
					t.Error("the hook's temporary index was written")
				}
			}
			git(t, root, "fsck", "--strict")
		})
	}
}

// TestFsmonitorThatHangsHoldsNoJob: core.fsmonitor names a hook git asks
// which files changed before it reads the work tree (a watchman hook,
// `core.fsmonitor=.git/hooks/fsmonitor-watchman`); one that never answers
// (watchman hung) held kk serve's job forever, "processing" while
// /healthz said ok, and a stop could not end it. kk serve has its own
// watch of the tree and asks git for none: its git commands run with
// core.fsmonitor off. Found by the serve red team, round 6.
func TestFsmonitorThatHangsHoldsNoJob(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	git(t, dir, "init", "-q", "-b", "main", root)
	git(t, root, "commit", "-q", "--allow-empty", "-m", "first")
	if j, err := serveOnce(t, root); err != nil || j.Status != "done" {
		t.Fatalf("before the hook: %+v %v", j, err)
	}
	hook := filepath.Join(dir, "fsmonitor-hang")
	// Bounded, so that a failing run ends; far past the test's wait.
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nexec sleep 300\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, root, "config", "core.fsmonitor", hook)
	j, err := serveOnce(t, root)
	if err != nil || j.Status != "done" {
		t.Fatalf("with a hanging core.fsmonitor: %+v %v; want done", j, err)
	}
	if n := strings.Count(git(t, root, "-c", "core.fsmonitor=false", "log", "--format=%s"), "store("); n != 2 {
		t.Errorf("%d store commits; want 2", n)
	}
}

// TestSigningAndCommitHooksHoldNoJob pins docs/serve.md's choice for the
// git configuration people have: kk serve's commits are the server's,
// unsigned whatever commit.gpgsign says (a gpg that fails, or would ask
// a passphrase), by kk serve whether user.name and user.email are set or
// not, and run none of git commit's hooks (husky's, in core.hooksPath,
// failing). The setup's commit and each job's are made, and the job is
// done.
func TestSigningAndCommitHooksHoldNoJob(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	git(t, dir, "init", "-q", "-b", "main", root)
	git(t, root, "commit", "-q", "--allow-empty", "-m", "first")
	hooks := filepath.Join(root, ".husky")
	if err := os.Mkdir(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"pre-commit", "commit-msg", "prepare-commit-msg", "post-commit"} {
		if err := os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\necho husky says no >&2\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range [][2]string{{"commit.gpgsign", "true"}, {"gpg.program", "false"}, {"core.hooksPath", ".husky"}} {
		git(t, root, "config", kv[0], kv[1])
	}
	t.Setenv("HOME", t.TempDir()) // no user.name, no user.email
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	j, err := serveOnce(t, root)
	if err != nil || j.Status != "done" {
		t.Fatalf("job: %+v %v; want done", j, err)
	}
	log := git(t, root, "log", "--format=%G? %an <%ae> %s", "-2")
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		if !strings.HasPrefix(line, "N kk serve <kk-serve@kk.invalid> ") {
			t.Errorf("commit %q; want unsigned, by kk serve", line)
		}
	}
	if !strings.Contains(log, "store(") || !strings.Contains(log, "init: bootstrap knowledge base") {
		t.Errorf("history:\n%s; want the setup's commit and the job's", log)
	}
}
