package githooks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/store"
)

// offKey is the repository's git config key that records kk's git hooks
// and merge drivers turned off there (kk init --no-git-hooks, kk
// uninstall --git-hooks): SetUpClone leaves such a repository alone. kk
// init with its hooks unsets it.
const offKey = "kk.githooks"

// SetUpClone sets kk's git hooks and merge drivers up (Install) in a work
// tree where they never were: a teammate's clone, since git clone copies
// neither .git/config nor .git/hooks, where a merge of two branches that
// each added notes stopped on conflicts in ENTRY.md, GRAPH.md and the
// index.md files, and git am or a rebase left them behind the notes. The
// CLI runs it after each changeset it commits, so a clone is set up by its
// first write, as the first clone was by kk init.
//
// Where there is nothing to do it costs a read of the repository's
// config file (kk's merge driver is defined there: set up already), or
// else one git process (kk.githooks false: turned off on purpose; a
// linked worktree, whose config git reads from elsewhere). It does
// nothing under KK_GIT_HOOKS=off or KK_INTERNAL (kk's own runs of git and
// of itself), nor outside a work tree with a .git above it (found without
// git, as the writer lock finds it). It returns nil when it changed
// nothing.
func SetUpClone(ctx context.Context, k *store.KB) (*Result, error) {
	if os.Getenv("KK_GIT_HOOKS") == "off" || os.Getenv("KK_INTERNAL") != "" {
		return nil, nil
	}
	_, gitDir, ok := gitx.WorkTreeGitDir(k.Root)
	if !ok {
		return nil, nil
	}
	if driverSectionIn(gitDir) {
		return nil, nil // set up: the common case, read without git
	}
	if out, err := gitx.Read(ctx, k.Root, "config", "--get-regexp", `^(merge\.`+MergeDriver+`\.driver|`+strings.ReplaceAll(offKey, ".", `\.`)+`)$`); err == nil && strings.TrimSpace(string(out)) != "" {
		return nil, nil // set up, or turned off
	}
	res, err := Install(ctx, k, Options{})
	if errors.Is(err, ErrNotWorkTree) || errors.Is(err, gitx.ErrNoGit) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(res.Changes) == 0 {
		return nil, nil
	}
	return res, nil
}

// turnOff records in the repository's git config that kk's git hooks and
// merge drivers are off there, so that SetUpClone does not set them up
// again (kk init --no-git-hooks, kk uninstall --git-hooks), in the
// repository holding dir.
func turnOff(ctx context.Context, dir string) error {
	_, err := gitx.Run(ctx, dir, "config", offKey, "false")
	return err
}

// TurnOff records, in the git config of the repository holding k, that
// kk's git hooks and merge drivers stay off there (kk init
// --no-git-hooks). Outside a git work tree it does nothing.
func TurnOff(ctx context.Context, k *store.KB) error {
	if !gitx.InWorkTree(ctx, k.Root) {
		return nil
	}
	return turnOff(ctx, k.Root)
}

// turnOn removes the record turnOff leaves (kk init with its hooks), in
// the repository holding dir.
func turnOn(ctx context.Context, dir string) error {
	out, err := gitx.Read(ctx, dir, "config", "--get", offKey)
	if err != nil || strings.TrimSpace(string(out)) == "" {
		return nil
	}
	_, err = gitx.Run(ctx, dir, "config", "--unset-all", offKey)
	return err
}

// driverSectionIn reports whether the config file in gitDir defines kk's
// merge driver: a line [merge "kk-generated"], as git config writes it.
// Read without git, as a shortcut only: a config it cannot read so (a
// linked worktree's, an include) is asked of git.
func driverSectionIn(gitDir string) bool {
	data, err := os.ReadFile(filepath.Join(gitDir, "config"))
	if err != nil {
		return false
	}
	want := `[merge "` + MergeDriver + `"]`
	for line := range strings.Lines(string(data)) {
		if strings.TrimSpace(line) == want {
			return true
		}
	}
	return false
}
