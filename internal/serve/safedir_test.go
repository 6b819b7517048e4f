package serve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/store"
)

// TestRepositoryOfAnotherUserIsRefusedAsSuch: git refuses to work in a
// repository another user owns (safe.directory: kk serve run as a service
// user over a person's repository, or in a container over a mounted
// one). kk serve said the folder was "not in a git repository", and
// given an empty folder inside such a repository it ran git init there,
// making a repository inside the person's, wrote a knowledge base into
// it, then failed. It now refuses, writing nothing, saying that git
// refuses the repository for its owner and what to do. (git's
// GIT_TEST_ASSUME_DIFFERENT_OWNER has it judge the repository another
// user's, so the test runs as any user.) Found by the serve red team,
// round 6.
func TestRepositoryOfAnotherUserIsRefusedAsSuch(t *testing.T) {
	needGit(t)
	ownGitConfig(t)
	bg := context.Background()
	root := filepath.Join(t.TempDir(), "repo")
	if _, err := gitx.Run(bg, t.TempDir(), "init", "-q", "-b", "main", root); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(root, "notes")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_TEST_ASSUME_DIFFERENT_OWNER", "1")
	for _, dir := range []string{root, empty} {
		_, err := Bootstrap(bg, dir, store.InitOptions{Version: "test", Now: time.Now(), Command: "test"})
		if err == nil || !strings.Contains(err.Error(), "safe.directory") || !strings.Contains(err.Error(), "another user") || strings.Contains(err.Error(), "not in a git repository") {
			t.Errorf("kk serve over %s, in a repository another user owns: %v; want a refusal saying so, with safe.directory", dir, err)
		}
	}
	if entries, _ := os.ReadDir(empty); len(entries) > 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the empty folder inside the repository now holds %v; want nothing written", names)
	}
	if _, err := os.Stat(filepath.Join(root, store.DirName)); err == nil {
		t.Error("a knowledge base was written into the repository")
	}
}
