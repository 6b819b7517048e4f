package serve

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/store"
)

// TestSetupInsideARepositoryGitCannotRead: kk serve --root given an empty
// folder inside a person's repository while git cannot read that
// repository: its HEAD file spoiled (git then says "not a git
// repository"), or git failing for a moment. Found by the serve11 red
// team (git failing at random under restarts): any failure of git
// rev-parse was taken for "not in a repository", and the empty folder
// got a git init of its own, a repository inside the person's; a folder
// with files was called "not in a git repository". kk serve writes
// nothing and says what git could not do (the HEAD file and how to mend
// it, or git's own words).
func TestSetupInsideARepositoryGitCannotRead(t *testing.T) {
	for _, c := range []struct {
		name  string
		spoil func(t *testing.T, repo string)
		says  []string
	}{
		{"spoiled HEAD", func(t *testing.T, repo string) {
			if err := os.WriteFile(filepath.Join(repo, ".git", "HEAD"), []byte("garbage\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{filepath.Join(".git", "HEAD"), "neither a branch nor a commit", "ref: refs/heads/"}},
		{"git failing", func(t *testing.T, repo string) {
			flag := gitThatCannotWrite(t, "rev-parse", "fatal: cannot fork: Resource temporarily unavailable")
			if err := os.WriteFile(flag, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"cannot fork", "written nothing"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			needGit(t)
			repo := filepath.Join(t.TempDir(), "repo")
			if _, err := gitx.Run(context.Background(), t.TempDir(), "init", "-q", "-b", "main", repo); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("the person's\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := gitx.Run(context.Background(), repo, "-c", "user.name=p", "-c", "user.email=p@p", "add", "README.md"); err != nil {
				t.Fatal(err)
			}
			if _, err := gitx.Run(context.Background(), repo, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-qm", "the person's"); err != nil {
				t.Fatal(err)
			}
			empty, full := filepath.Join(repo, "kb"), filepath.Join(repo, "docs")
			for _, d := range []string{empty, full} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(full, "a.md"), []byte("a\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			c.spoil(t, repo)
			for _, root := range []string{empty, full} {
				_, err := Bootstrap(context.Background(), root, store.InitOptions{Version: "test", Now: time.Now(), Command: "test"})
				if err == nil {
					t.Fatalf("%s: the setup inside a repository git cannot read went on", root)
				}
				for _, w := range c.says {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: the error does not say %q: %v", root, w, err)
					}
				}
				if strings.Contains(err.Error(), "not in a git repository") {
					t.Errorf("%s: called not in a git repository: %v", root, err)
				}
				for _, made := range []string{".git", ".ai"} {
					if _, err := os.Lstat(filepath.Join(root, made)); !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("%s: the setup made %s (%v)", root, made, err)
					}
				}
			}
		})
	}
}
