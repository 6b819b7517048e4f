package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/templates"
)

// InitOptions control Init and Scaffold.
type InitOptions struct {
	Upgrade bool      // refresh generated scaffolding of an existing KB
	Version string    // kk release recorded in installed-version; "" for a development build
	Now     time.Time // recorded as installed_at
	Command string    // recorded in the writer lock
}

// InitResult lists what Init (or Scaffold) created or changed, relative
// to the repository root.
type InitResult struct {
	Created   []string `json:"created"`
	Updated   []string `json:"updated"`
	Warnings  []string `json:"warnings"`
	Unchanged bool     `json:"unchanged"`
}

// CanScaffold reports why Scaffold cannot set up the knowledge base
// (no repository folder; an upgrade of one that does not exist), before
// anything is written or locked.
func (k *KB) CanScaffold(opts InitOptions) error {
	if opts.Upgrade && !k.Initialized() {
		return fmt.Errorf("%w at %s; run `kk init` without --upgrade first", ErrNotFound, k.Root)
	}
	if fi, err := os.Stat(k.Root); err != nil || !fi.IsDir() {
		return fmt.Errorf("repository folder %s does not exist", k.Root)
	}
	return nil
}

// Scaffold creates the knowledge base's setup (folders, config.yaml,
// README, .gitignore, .gitattributes, .kkignore, installed-version);
// txn.Init takes the writer lock, runs it and follows it with a
// transaction that creates FOLDER_SUMMARIES.md, knowledge like the
// leaves, and the generated index files: the caller holds the writer
// lock. Existing user content (config, .kkignore outside kk's block) is
// never overwritten; a second run changes nothing. With Upgrade,
// generated scaffolding (README, .gitignore block, installed version) is
// refreshed.
func (k *KB) Scaffold(opts InitOptions) (*InitResult, error) {
	if err := k.CanScaffold(opts); err != nil {
		return nil, err
	}
	res := &InitResult{Created: []string{}, Updated: []string{}, Warnings: []string{}}
	for _, d := range []string{k.Dir, k.NodesDir(), k.StateDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	err := func() error {
		put := func(path string, data []byte, overwrite bool) error {
			old, err := k.ReadFile(path)
			switch {
			case err == nil && (bytes.Equal(old, data) || !overwrite):
				return nil
			case err != nil && !errors.Is(err, fs.ErrNotExist):
				return err
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			if err := atomicfile.Write(path, data, 0o644); err != nil {
				return err
			}
			if old == nil {
				res.Created = append(res.Created, k.Rel(path))
			} else {
				res.Updated = append(res.Updated, k.Rel(path))
			}
			return nil
		}
		readme, _ := fs.ReadFile(templates.KB, "kb/README.md")
		config, _ := fs.ReadFile(templates.KB, "kb/config.yaml")
		kkignore, err := mergeKKIgnore(k.KKIgnorePath())
		if err != nil {
			return k.relNamed(err)
		}
		steps := []struct {
			path      string
			data      []byte
			overwrite bool
		}{
			{filepath.Join(k.Dir, "README.md"), readme, opts.Upgrade},
			{k.ConfigPath(), config, false},
			{k.KKIgnorePath(), kkignore, true},
		}
		for _, s := range steps {
			if err := put(s.path, s.data, s.overwrite); err != nil {
				return err
			}
		}
		gi, err := mergeGitignore(k.GitignorePath())
		if err != nil {
			return k.relNamed(err)
		}
		if err := put(k.GitignorePath(), gi, true); err != nil {
			return err
		}
		ga, err := mergeGitattributes(k.GitattributesPath())
		if err != nil {
			return k.relNamed(err)
		}
		if err := put(k.GitattributesPath(), ga, true); err != nil {
			return err
		}
		if err := k.writeInstalled(opts, put); err != nil {
			return err
		}
		return nil
	}()
	if err != nil {
		return nil, err
	}
	res.Unchanged = len(res.Created) == 0 && len(res.Updated) == 0
	return res, nil
}

// writeInstalled writes .state/installed-version, which is committed: it
// names the kk release that set up (or last upgraded) the knowledge base
// and the day it did, never a build. A development build (opts.Version
// "") records no version on a new knowledge base and leaves an existing
// record as it is.
func (k *KB) writeInstalled(opts InitOptions, put func(string, []byte, bool) error) error {
	old, err := k.ReadInstalled()
	if err == nil && (!opts.Upgrade || opts.Version == "" || old.Version == opts.Version) {
		return nil
	}
	in := Installed{SchemaVersion: 1, Package: "kk", Version: opts.Version, InstalledAt: opts.Now.UTC().Format(time.DateOnly), Harnesses: []string{}}
	if old != nil && old.Harnesses != nil {
		in.Harnesses = old.Harnesses
	}
	if old != nil {
		in.KKCommand = old.KKCommand
	}
	data, _ := json.MarshalIndent(in, "", "  ")
	return put(k.InstalledPath(), append(data, '\n'), true)
}

// EncodeInstalled is in as kk writes .state/installed-version.
func EncodeInstalled(in Installed) ([]byte, error) {
	data, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// SetInstalledHarnesses records the harnesses kk is installed into (sorted,
// without duplicates) and the command their hooks run ("kk" is recorded as
// empty) in .state/installed-version, keeping the other fields. It reports
// whether the file changed. The caller holds the writer lock; the file
// must exist (kk init writes it).
func (k *KB) SetInstalledHarnesses(ids []string, command string) (bool, error) {
	in, err := k.ReadInstalled()
	if errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("%w at %s: %s is missing; run `kk init` first", ErrNotFound, k.Root, k.Rel(k.InstalledPath()))
	}
	if err != nil {
		return false, err
	}
	list := append([]string{}, ids...)
	slices.Sort(list)
	in.Harnesses = slices.Compact(list)
	if command == "kk" {
		command = ""
	}
	in.KKCommand = command
	data, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return false, err
	}
	return atomicfile.WriteIfChanged(k.InstalledPath(), append(data, '\n'), 0o644)
}

// mergeGitignore returns .gitignore content that starts with kk's lines,
// followed by the user's own lines in their order.
func mergeGitignore(path string) ([]byte, error) {
	old, err := ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var b strings.Builder
	for _, l := range GitignoreLines {
		b.WriteString(l + "\n")
	}
	own := map[string]bool{}
	for _, l := range GitignoreLines {
		own[l] = true
	}
	// Unanchored forms from older layouts also matched nodes/hooks/ and the like.
	for _, l := range []string{"_sessions/", "_logs/", "hooks/", ".state/"} {
		own[l] = true
	}
	for _, l := range strings.Split(strings.TrimRight(string(old), "\n"), "\n") {
		if strings.TrimSpace(l) == "" || own[strings.TrimSpace(l)] {
			continue
		}
		b.WriteString(l + "\n")
	}
	return []byte(b.String()), nil
}

// KKIgnoreDirs are the folders kk's own installs write into a repository
// (the harnesses' skill and command folders, hook scripts): kk init keeps
// them in a block of .kkignore, so that document discovery and
// /kk-bootstrap never take kk's own skills for the project's documents.
// harnesses/all checks that every adapter's folders are here.
var KKIgnoreDirs = []string{
	".ai/kenkeep/hooks/",
	".agents/skills/",
	".claude/commands/",
	".claude/skills/",
	".cursor/hooks/",
	".cursor/skills/",
	".gemini/commands/",
	".gemini/skills/",
	".github/skills/",
	".opencode/plugins/",
	".opencode/skills/",
}

// The lines around kk's block in .kkignore.
const (
	kkignoreStart = "# kk:start (kk's own folders; kk init rewrites this block)"
	kkignoreEnd   = "# kk:end"
)

// mergeKKIgnore returns .kkignore with kk's block (KKIgnoreDirs) in it:
// the starter file when there is none, the block replaced where it is, or
// added at the end of a file without one (dropping the lines of the block
// an earlier kk wrote bare), the user's lines kept as they are.
func mergeKKIgnore(path string) ([]byte, error) {
	old, err := ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		old, _ = fs.ReadFile(templates.KB, "kb/kkignore")
	}
	block := kkignoreStart + "\n" + strings.Join(KKIgnoreDirs, "\n") + "\n" + kkignoreEnd + "\n"
	text := strings.ReplaceAll(string(old), "\r\n", "\n")
	// The block is the start line and the first end line after it, each a
	// whole line: a pattern or comment that merely begins like a marker is
	// the user's. A start line left without its end line is refused: which
	// lines below it are kk's cannot be told, and appending a block would
	// make the next init cut the user's lines up to that block's end.
	lines := strings.SplitAfter(text, "\n")
	start, off := -1, 0
	for _, l := range lines {
		switch strings.TrimSpace(l) {
		case kkignoreStart:
			if start < 0 {
				start = off
			}
		case kkignoreEnd:
			if start >= 0 {
				return []byte(text[:start] + block + text[off+len(l):]), nil
			}
		}
		off += len(l)
	}
	if start >= 0 {
		return nil, fmt.Errorf("%s has the line %q but no %q line after it; kk left it unchanged: put the end line back after kk's folders (or delete the start line), then run kk again", filepath.Base(path), kkignoreStart, kkignoreEnd)
	}
	own := map[string]bool{}
	for _, d := range KKIgnoreDirs {
		own[d] = true
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if own[strings.TrimSpace(l)] {
			continue
		}
		b.WriteString(l + "\n")
	}
	out := strings.TrimRight(b.String(), "\n")
	if out != "" {
		out += "\n\n"
	}
	return []byte(out + block), nil
}

// GitattributesLines are kk's lines of .ai/kenkeep/.gitattributes: the
// generated index files merge through kk's merge driver, which keeps one
// side (kk's git hooks then regenerate them from the merged leaves), so
// that they never make a merge conflict.
var GitattributesLines = []string{
	"/ENTRY.md merge=kk-generated",
	"/GRAPH.md merge=kk-generated",
	"/nodes/**/index.md merge=kk-generated",
}

// GitattributesSummaries is the line of .ai/kenkeep/.gitattributes that
// merges FOLDER_SUMMARIES.md with git's own union driver: two branches
// that each summarized a new folder add lines next to each other (the
// summaries are sorted), which a plain merge stops on; union keeps both
// sides' lines. It needs no kk where the merge runs. When both sides
// changed one folder's summary, the merged file names the folder twice,
// and every command that reads it says so by line (the next write sorts
// the file again).
const GitattributesSummaries = "/FOLDER_SUMMARIES.md merge=kk-summaries"

// gitattributesSummariesUnion is the line an older kk wrote for
// FOLDER_SUMMARIES.md (git's union driver), which GitattributesSummaries
// replaces: union glues two sides' first summaries into a file whose
// second summary lies outside the front matter.
const gitattributesSummariesUnion = "/FOLDER_SUMMARIES.md merge=union"

// GitattributesRedirects is the line of .ai/kenkeep/.gitattributes that
// merges nodes/.redirects.json with kk's merge driver of the ledger
// (githooks.RedirectsDriver): two branches that each split a leaf add an
// entry each to one JSON object.
const GitattributesRedirects = "/nodes/.redirects.json merge=kk-redirects"

// GitattributesInstalled is the line of .ai/kenkeep/.gitattributes that
// merges .state/installed-version with kk's merge driver of that record
// (githooks.InstalledDriver): two branches on which teammates installed kk
// into different coding agents (kk init --harnesses claude on one, codex
// on the other) each change its list of harnesses, a few lines of JSON
// that a line merge stops on.
const GitattributesInstalled = "/.state/installed-version merge=kk-installed"

// GitattributesSelf is the line of .ai/kenkeep/.gitattributes that merges
// the file itself with git's union driver: its lines are independent, and
// a branch where kk added one of its lines (an upgrade) and another where
// a person added one of theirs both insert after kk's last line, which a
// line merge stops on; union keeps both.
const GitattributesSelf = "/.gitattributes merge=union"

// mergeGitattributes returns .gitattributes content that starts with
// kk's lines, followed by the user's own lines in their order.
func mergeGitattributes(path string) ([]byte, error) {
	old, err := ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var b strings.Builder
	for _, l := range GitattributesLines {
		b.WriteString(l + "\n")
	}
	b.WriteString(GitattributesSummaries + "\n")
	b.WriteString(GitattributesRedirects + "\n")
	b.WriteString(GitattributesInstalled + "\n")
	b.WriteString(GitattributesSelf + "\n")
	for _, l := range strings.Split(strings.TrimRight(string(old), "\n"), "\n") {
		if t := strings.TrimSpace(l); t == "" || t == GitattributesSummaries || t == gitattributesSummariesUnion || t == GitattributesRedirects || t == GitattributesInstalled || t == GitattributesSelf || slices.Contains(GitattributesLines, t) {
			continue
		}
		b.WriteString(l + "\n")
	}
	return []byte(b.String()), nil
}

// HasGitattributes reports whether .ai/kenkeep/.gitattributes holds every
// one of kk's lines.
func HasGitattributes(k *KB) bool {
	data, err := k.ReadFile(k.GitattributesPath())
	if err != nil {
		return false
	}
	lines := strings.Split(string(data), "\n")
	for _, l := range GitattributesLines {
		if !slices.ContainsFunc(lines, func(s string) bool { return strings.TrimSpace(s) == l }) {
			return false
		}
	}
	return true
}

// HasGitattributesLine reports whether .ai/kenkeep/.gitattributes holds
// line (GitattributesSummaries).
func HasGitattributesLine(k *KB, line string) bool {
	data, err := k.ReadFile(k.GitattributesPath())
	if err != nil {
		return false
	}
	return slices.ContainsFunc(strings.Split(string(data), "\n"), func(s string) bool { return strings.TrimSpace(s) == line })
}

// WriteGitattributes puts kk's lines into .ai/kenkeep/.gitattributes
// (kk doctor --fix), keeping the user's; it reports whether the file
// changed.
func (k *KB) WriteGitattributes() (bool, error) {
	data, err := mergeGitattributes(k.GitattributesPath())
	if err != nil {
		return false, k.relNamed(err)
	}
	return atomicfile.WriteIfChanged(k.GitattributesPath(), data, 0o644)
}
