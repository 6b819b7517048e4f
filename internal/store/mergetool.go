package store

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/safetext"
)

// ErrMergeToolLeftover is the cause (errors.Is) of the problem of a leaf
// file skipped because its name is one git mergetool gives the
// temporaries it leaves beside a conflicted file (MergeToolLeftover):
// not a note, whatever it holds.
var ErrMergeToolLeftover = errors.New("a file git mergetool left")

// mergeToolMarks are the words git mergetool puts in the names of its
// temporaries: <stem>_BASE_<pid><ext> (the common ancestor), _LOCAL_
// (ours), _REMOTE_ (theirs) and _BACKUP_ (the file with the conflict
// markers), beside the file <stem><ext> (git-mergetool(1)).
var mergeToolMarks = []string{"BACKUP", "BASE", "LOCAL", "REMOTE"}

// MergeToolLeftover reports whether the file name is one git mergetool
// leaves beside a file it resolves a conflict in: a temporary
// <stem>_BASE_<pid><ext>, _LOCAL_, _REMOTE_ or _BACKUP_ (left when the
// merge tool fails or is stopped, or kept by mergetool.keepTemporaries),
// or the backup <name>.orig of the merged file (mergetool.keepBackup, on
// by default). of is the name of the file it was left beside; mark is
// BASE, LOCAL, REMOTE, BACKUP or orig. (A note's id is lower case, so no
// note's file has a temporary's name; see MergeToolTemporary for the
// other leaves.)
func MergeToolLeftover(name string) (of, mark string, ok bool) {
	if stem, ok := strings.CutSuffix(name, ".orig"); ok && stem != "" && !strings.HasPrefix(stem, ".") {
		return stem, "orig", true
	}
	ext := path.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	i := strings.LastIndexByte(stem, '_')
	if i < 0 || i == len(stem)-1 || strings.Trim(stem[i+1:], "0123456789") != "" {
		return "", "", false
	}
	stem = stem[:i]
	for _, m := range mergeToolMarks {
		if rest, ok := strings.CutSuffix(stem, "_"+m); ok && rest != "" {
			return rest + ext, m, true
		}
	}
	return "", "", false
}

// MergeToolTemporary returns, for the leaf file rel (relative to nodes/)
// that kk does not take as a leaf (it does not parse, or another leaf has
// its id) and that holds the id id ("" when it names none), the problem
// to report instead when the file is a temporary git mergetool left: the
// file it was left beside, and how to remove it; nil for any other file.
// A temporary copies the note it was left beside, id and all, or is
// empty or cut short; a file of such a name that holds the id it is
// named for is not one (ids of traceability entities may have capitals
// and underscores). A temporary that holds an id of its own, no other
// leaf's, is read as a leaf, as the index reads it.
func MergeToolTemporary(rel, id string) *node.Error {
	of, mark, ok := MergeToolLeftover(path.Base(rel))
	if !ok || mark == "orig" || id != "" && IDKey(id) == IDKey(strings.TrimSuffix(path.Base(rel), ".md")) {
		return nil
	}
	file := path.Join(DirName, "nodes", rel)
	return &node.Error{Path: rel, Err: ErrMergeToolLeftover, Msg: fmt.Sprintf(
		"is a file git mergetool left (its %s copy of %s, from a merge tool that failed or was stopped, or kept by mergetool.keepTemporaries); kk does not read it: once the conflict is resolved, remove it: rm %s",
		mark, path.Join(DirName, "nodes", DirOf(rel), of), safetext.ShellQuote(file))}
}
