package checks

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/store"
)

// GitIgnored says, when a rule of git's ignore files (a .gitignore, the
// repository's info/exclude, the person's core.excludesFile) matches the
// knowledge base's files, which rule matches which file and how to change
// it: `git add` would leave the notes out, and they would never be
// committed. ok is false outside a git work tree; msg is "" when no rule
// matches.
func GitIgnored(ctx context.Context, k *store.KB) (msg, fix string, ok bool) {
	if gitx.NoRepository(k.Root) || !gitx.InWorkTree(ctx, k.Root) {
		return "", "", false
	}
	// A generated file, a folder index and a note to come: a rule may
	// ignore the folder, the notes' folder or every .md.
	paths := []string{
		path.Join(store.DirName, "ENTRY.md"),
		path.Join(store.DirName, "nodes", "index.md"),
		path.Join(store.DirName, "nodes", "practice-a-note.md"),
	}
	// --no-index: a rule added after the files were committed still
	// leaves every new note out. Exit 1 (nothing ignored) is an error.
	out, err := gitx.RunWith(ctx, k.Root, nil, []byte(strings.Join(paths, "\x00")+"\x00"), "check-ignore", "-v", "-z", "--stdin", "--no-index")
	if err != nil {
		return "", "", true
	}
	// <source> NUL <line> NUL <pattern> NUL <path> NUL, for each path
	f := strings.Split(string(out), "\x00")
	for i := 0; i+3 < len(f); i += 4 {
		source, pattern, file := f[i]+":"+f[i+1], f[i+2], f[i+3]
		if strings.HasPrefix(pattern, "!") {
			continue // a rule that brings the file back
		}
		msg = fmt.Sprintf("git ignores the knowledge base: %s (%s) ignores %s, so `git add` leaves the notes out and they are never committed", source, pattern, file)
		top := strings.SplitN(store.DirName, "/", 2)[0] // .ai
		if p := strings.Trim(pattern, "/"); p == top || p == top+"/**" {
			fix = fmt.Sprintf("change that rule: git cannot bring back a file in a folder it ignores, so write %s/* and !%s/ in its place (or remove it)", top, store.DirName)
		} else {
			fix = fmt.Sprintf("change that rule so that it matches nothing under %s/ (a line !%s/ after it brings the folder back only where no folder above it is ignored)", store.DirName, store.DirName)
		}
		return msg, fix, true
	}
	return "", "", true
}

// checkGitIgnored is GitIgnored as a doctor check; ok is false outside a
// git work tree.
func checkGitIgnored(ctx context.Context, k *store.KB) (DoctorCheck, bool) {
	c := DoctorCheck{Name: "git-ignored"}
	msg, fix, ok := GitIgnored(ctx, k)
	if !ok {
		return c, false
	}
	if msg != "" {
		c.Level, c.Message, c.Fix = DoctorError, msg, fix
		return c, true
	}
	c.Level, c.Message = DoctorOK, "no ignore rule of git's matches the knowledge base's files"
	return c, true
}
