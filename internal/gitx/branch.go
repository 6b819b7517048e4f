package gitx

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// DetachedPrefix starts the name CurrentBranch gives a detached HEAD.
const DetachedPrefix = "detached-"

// CurrentBranch returns the branch checked out in dir's repository. It works
// on an unborn branch (a repository with no commits yet). A detached HEAD is
// named "detached-<short sha>".
func CurrentBranch(ctx context.Context, dir string) (string, error) {
	out, err := Read(ctx, dir, "symbolic-ref", "--short", "-q", "HEAD")
	if name := strings.TrimSpace(string(out)); err == nil && name != "" {
		return name, nil
	}
	sha, err2 := Read(ctx, dir, "rev-parse", "--short", "HEAD")
	if err2 != nil {
		if err != nil {
			return "", fmt.Errorf("finding the current branch: %w", err)
		}
		return "", fmt.Errorf("finding the current branch: %w", err2)
	}
	return DetachedPrefix + strings.TrimSpace(string(sha)), nil
}

// RemoteDefaultBranch returns the branch origin/HEAD points at ("main" for
// refs/remotes/origin/main), or "" when the repository has no such ref.
func RemoteDefaultBranch(ctx context.Context, dir string) string {
	out, err := Read(ctx, dir, "symbolic-ref", "-q", "refs/remotes/origin/HEAD")
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(strings.TrimSpace(string(out)), "refs/remotes/origin/")
}

// DefaultBranch returns configured when it is set, else the branch
// origin/HEAD points at, else "main".
func DefaultBranch(ctx context.Context, dir, configured string) string {
	if configured != "" {
		return configured
	}
	if b := RemoteDefaultBranch(ctx, dir); b != "" {
		return b
	}
	return "main"
}

// LocalBranches lists the local branches of dir's repository, sorted. An
// unborn current branch is not listed (it has no ref yet).
func LocalBranches(ctx context.Context, dir string) ([]string, error) {
	out, err := Read(ctx, dir, "for-each-ref", "--format=%(refname)", "refs/heads/")
	if err != nil {
		return nil, fmt.Errorf("listing local branches: %w", err)
	}
	var names []string
	for line := range strings.SplitSeq(string(out), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "refs/heads/"); ok && name != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, nil
}
