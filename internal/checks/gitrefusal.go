package checks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kk-project/kk/internal/gitx"
)

// GitRefusal is what git said when it refused to work in the repository
// holding a knowledge base: Reason is its first "fatal:" line, Fix the
// command it suggests (safe.directory for a repository owned by another
// user), or a way to see what it needs.
type GitRefusal struct {
	Reason string
	Fix    string
}

// String is the refusal as one line: what git said, and what to do.
func (g *GitRefusal) String() string {
	return fmt.Sprintf("git refuses the repository: %s; fix: %s", g.Reason, g.Fix)
}

// RefusedByGit returns what git says when root is in a git repository (a
// .git folder or file above it) that git is on PATH to read but refuses
// to work in, as it does in a clone owned by another user ("detected
// dubious ownership"); nil when git works there, when there is no
// repository, or when git is missing. The commands that need git (the git
// hooks, the merge driver, freshness, --stage, --commits) cannot work
// there; those that read only the tree still do.
func RefusedByGit(ctx context.Context, root string) *GitRefusal {
	if gitx.NoRepository(root) {
		return nil
	}
	_, err := gitx.Read(ctx, root, "rev-parse", "--is-inside-work-tree")
	if err == nil || errors.Is(err, gitx.ErrNoGit) || ctx.Err() != nil {
		return nil
	}
	g := &GitRefusal{}
	for _, line := range strings.Split(err.Error(), "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, "fatal: "); i >= 0 && g.Reason == "" {
			g.Reason = strings.TrimSpace(line[i+len("fatal: "):])
		}
		if strings.HasPrefix(line, "git config ") && strings.Contains(line, "safe.directory") {
			g.Fix = line
		}
	}
	if g.Reason == "" {
		g.Reason = strings.TrimSpace(err.Error())
	}
	if g.Fix == "" {
		g.Fix = danglingGitFile(root)
	}
	if g.Fix == "" {
		g.Fix = fmt.Sprintf("run `git status` in %s and do what git asks", root)
	}
	return g
}

// danglingGitFile returns the fix when the .git of root's work tree is a
// file ("gitdir: <folder>") naming a folder that is gone, as a linked work
// tree's (git worktree add) is once its repository was moved: git then
// says only "not a git repository"; "" otherwise.
func danglingGitFile(root string) string {
	abs, err := filepath.Abs(root)
	if err != nil {
		return ""
	}
	for d := abs; ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		fi, err := os.Lstat(dotgit)
		if err == nil {
			if !fi.Mode().IsRegular() {
				return ""
			}
			data, err := os.ReadFile(dotgit)
			if err != nil {
				return ""
			}
			target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
			if !ok {
				return ""
			}
			target = strings.TrimSpace(target)
			if !filepath.IsAbs(target) {
				target = filepath.Join(d, target)
			}
			if _, err := os.Stat(target); err == nil {
				return ""
			}
			if strings.Contains(filepath.ToSlash(target), "/worktrees/") {
				return fmt.Sprintf("%s points to %s, which is gone: this is a linked work tree (git worktree add) whose repository was moved; run `git worktree repair` in the repository's main work tree where it is now (git -C <that folder> worktree repair)", dotgit, target)
			}
			return fmt.Sprintf("%s points to %s, which is gone (the repository it belongs to was moved?): write the repository's git folder where it is now into %s (gitdir: <folder>)", dotgit, target, dotgit)
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// checkGitRefusal is doctor's git-repository check: a warning when git
// refuses the repository (RefusedByGit), nothing otherwise.
func checkGitRefusal(ctx context.Context, root string) (DoctorCheck, bool) {
	g := RefusedByGit(ctx, root)
	if g == nil {
		return DoctorCheck{}, false
	}
	return DoctorCheck{
		Name:    "git-repository",
		Level:   DoctorWarn,
		Message: "git refuses the repository: " + g.Reason + "; kk's git hooks, merge driver, freshness, --stage and --commits need git, so they are not checked and do not work here",
		Fix:     g.Fix,
	}, true
}
