package checks

import (
	"context"
	"errors"
	"fmt"
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
		g.Fix = fmt.Sprintf("run `git status` in %s and do what git asks", root)
	}
	return g
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
