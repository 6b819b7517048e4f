package githooks

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// VersionResolved is a note whose conflicts lay only in kk_version, which
// ResolveVersionConflicts resolved and staged.
type VersionResolved struct {
	// Path is the note's path from the work tree's top folder.
	Path string `json:"path"`
	// Version is the kk_version the merged note took.
	Version int `json:"version"`
}

// ResolveVersionConflicts resolves, in the notes of k that git left
// unmerged (a merge, a rebase, a cherry-pick that stopped), the conflicts
// that lie only in kk_version: two people who each changed a different
// part of one note with kk both bumped the counter kk keeps in its front
// matter, and git stops on that line, which neither of them wrote. Such a
// note takes the higher of the two versions and one more, and is staged
// (git add). A note with any other conflict is left as git left it.
func ResolveVersionConflicts(ctx context.Context, k *store.KB) ([]VersionResolved, error) {
	top, rel, err := inWorkTree(ctx, k.Root, k.Dir)
	if err != nil {
		return nil, err
	}
	out, err := gitx.Run(ctx, top, "ls-files", "-u", "-z", "--", rel+"/nodes/")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var res []VersionResolved
	for entry := range strings.SplitSeq(string(out), "\x00") {
		_, p, ok := strings.Cut(entry, "\t")
		if !ok || seen[p] || !strings.HasSuffix(p, ".md") || path.Base(p) == "index.md" {
			continue
		}
		seen[p] = true
		abs := filepath.Join(top, filepath.FromSlash(p))
		src, err := os.ReadFile(abs)
		if err != nil {
			continue // deleted on one side: not a version conflict
		}
		merged, version, ok := resolveVersions(string(src))
		if !ok {
			continue
		}
		if err := os.WriteFile(abs, []byte(merged), 0o644); err != nil {
			return res, fmt.Errorf("writing %s: %w", p, err)
		}
		if _, err := gitx.Run(ctx, top, "add", "--", p); err != nil {
			return res, err
		}
		res = append(res, VersionResolved{Path: p, Version: version})
	}
	return res, nil
}

// resolveVersions is node.ResolveVersionConflicts.
func resolveVersions(src string) (merged string, version int, ok bool) {
	return node.ResolveVersionConflicts(src)
}
