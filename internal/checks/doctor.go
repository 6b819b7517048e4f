package checks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/freshness"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"

	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/lock"
	"github.com/kk-project/kk/internal/node"
)

// Doctor check levels.
const (
	DoctorOK    = "ok"
	DoctorWarn  = "warn"
	DoctorError = "error"
)

// entryTokenBudget is the most estimated tokens ENTRY.md's body should
// hold: it is injected into every agent session.
const entryTokenBudget = 2500

// doctorLockWait is how long Doctor tries to take the writer lock to see
// whether another process holds it.
var doctorLockWait = 50 * time.Millisecond

// DoctorCheck is the outcome of one doctor check. Details list the
// individual problems (files, references) behind a warning or error.
type DoctorCheck struct {
	Name    string   `json:"name"`
	Level   string   `json:"level"`
	Message string   `json:"message"`
	Fix     string   `json:"fix"`
	Details []string `json:"details,omitempty"`
}

// DoctorReport is every check Doctor ran, in order, with counts per level.
type DoctorReport struct {
	Checks   []DoctorCheck `json:"checks"`
	OK       int           `json:"ok"`
	Warnings int           `json:"warnings"`
	Errors   int           `json:"errors"`
}

// DoctorOptions configure Doctor.
type DoctorOptions struct {
	// Version is the version of the running kk, compared with the one that
	// installed the knowledge base.
	Version string
	// OllamaURL is where to look for a local Ollama when semantic search
	// is off (OllamaURL()); "" does not look.
	OllamaURL string
}

// Doctor checks the health of the knowledge base itself: its install
// record, ignore files, settings, index files, leaves and writer lock. It
// reads only.
func Doctor(ctx context.Context, k *store.KB, opts DoctorOptions) (*DoctorReport, error) {
	r := &DoctorReport{}
	add := r.Add

	add(checkGit())
	if c, ok := checkGitRefusal(ctx, k.Root); ok {
		add(c)
	}
	inst, c := checkInstalled(ctx, k)
	add(c)
	if inst != nil {
		add(checkVersion(inst, opts.Version))
	}
	add(checkGitignore(k))
	if c, ok := checkGitIgnored(ctx, k); ok {
		add(c)
	}
	add(checkKKIgnore(k))
	add(checkConfig(k))

	t, err := index.ReadTree(ctx, k)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	add(checkLeaves(t))
	// The other checks look at the leaves kk can read.
	add(checkV2(t))
	add(checkEntryFresh(ctx, k, t))
	add(checkEntrySize(k))
	add(checkFreshness(ctx, k))
	add(checkPhrasings(t))
	add(checkSemanticSearch(ctx, k, opts.OllamaURL))
	{
		c, err := checkDerivedFrom(k, t)
		if err != nil {
			return nil, err
		}
		add(c)
	}
	add(checkHygiene(k, t))
	add(checkLock(ctx, k))
	if c, err = checkObsoleteState(k); err != nil {
		return nil, err
	}
	add(c)
	c, err = checkLeftovers(k)
	if err != nil {
		return nil, err
	}
	add(c)
	return r, nil
}

// checkHygiene warns about the lint findings a person fixes in a minute
// and that otherwise go unseen: tags with stray whitespace and blank folder
// summaries (kenkeep's doctor surfaced the same two). It looks at the
// leaves kk can read.
func checkHygiene(k *store.KB, t *store.Tree) DoctorCheck {
	c := DoctorCheck{Name: "hygiene"}
	// The folder summaries feed every generated file: while they cannot
	// be read (a hand edit, a merge that stopped on them), every write and
	// every index rebuild fails.
	if _, err := store.ReadSummaries(k.SummariesPath()); err != nil {
		c.Level = DoctorError
		c.Message = k.Rel(k.SummariesPath()) + " cannot be read, so every write and index rebuild fails until it is fixed"
		c.Details = []string{err.Error()}
		c.Fix = "edit " + k.Rel(k.SummariesPath()) + " as the problem above says (front matter: schema_version: 1 and summaries, a mapping of folder to one-line summary)"
		return c
	}
	l := &linter{k: k, removed: index.NewRemoved(k)}
	l.checkTags(t)
	for _, key := range store.BlankSummaries(k.SummariesPath()) {
		l.add(ruleEmptySummary, LintFinding, k.Rel(k.SummariesPath()), fmt.Sprintf("folder %q has a blank summary", key), "")
	}
	// A title, description or tag that reads otherwise than it shows (a
	// terminal escape, a bidirectional control, a note that came by git
	// from someone else): an agent reads what no reviewer saw.
	for _, n := range t.Leaves {
		l.checkHiddenText(n, 0, 0)
	}
	hidden := 0
	for _, it := range l.report().Items {
		if it.Rule == ruleTagWhitespace || it.Rule == ruleEmptySummary || it.Rule == ruleHiddenText {
			c.Details = append(c.Details, it.Rule+" "+it.File+": "+it.Message)
		}
		if it.Rule == ruleHiddenText {
			hidden++
		}
	}
	if len(c.Details) == 0 {
		c.Level, c.Message = DoctorOK, "no tag with stray whitespace and no blank folder summary"
		return c
	}
	c.Level = DoctorWarn
	c.Message = fmt.Sprintf("%d lint finding(s) (tag-whitespace, empty-summary)", len(c.Details))
	if hidden > 0 {
		c.Level = DoctorError
		c.Message = fmt.Sprintf("%d lint finding(s) (tag-whitespace, empty-summary, hidden-text)", len(c.Details))
	}
	c.Fix = "`kk lint` says how to fix each"
	return c
}

// checkLeftovers reports what killed writers left behind: the journal of
// a changeset never committed, temporary files of atomic writes, staging
// folders. Readers roll a journal back on sight, and the next write
// removes the rest; doctor says so without touching them.
func checkLeftovers(k *store.KB) (DoctorCheck, error) {
	c := DoctorCheck{Name: "interrupted-writes"}
	left, err := txn.Leftovers(k)
	if err != nil {
		return c, err
	}
	if len(left) == 0 {
		c.Level, c.Message = DoctorOK, "no interrupted write left anything behind"
		return c, nil
	}
	c.Level = DoctorWarn
	c.Message = fmt.Sprintf("%d file(s) left by an interrupted write (a killed kk process)", len(left))
	c.Fix = "run any kk write (for example `kk index rebuild`): it rolls back an unfinished changeset and removes these; they are never read as knowledge"
	c.Details = left
	return c, nil
}

// Add appends a check to the report and counts it. A level other than ok
// or warn counts as an error.
func (r *DoctorReport) Add(c DoctorCheck) {
	r.Checks = append(r.Checks, c)
	switch c.Level {
	case DoctorOK:
		r.OK++
	case DoctorWarn:
		r.Warnings++
	default:
		r.Errors++
	}
}

func checkGit() DoctorCheck {
	c := DoctorCheck{Name: "git"}
	p, err := exec.LookPath("git")
	if err != nil {
		c.Level, c.Message = DoctorWarn, "git is not on PATH; staging (--stage), branch detection and git hooks need it"
		c.Fix = "install git or add it to PATH"
		return c
	}
	c.Level, c.Message = DoctorOK, "git found at "+p
	return c
}

func checkInstalled(ctx context.Context, k *store.KB) (*store.Installed, DoctorCheck) {
	c := DoctorCheck{Name: "installed-version"}
	file := k.Rel(k.InstalledPath())
	in, err := k.ReadInstalled()
	switch {
	case errors.Is(err, fs.ErrNotExist) && index.CheckedOut(ctx, k) != nil:
		// A sparse checkout left it out: kk init would write another.
		c.Level, c.Message, c.Fix = DoctorError, file+" is not checked out: "+index.CheckedOut(ctx, k).Error(), ""
		return nil, c
	case errors.Is(err, fs.ErrNotExist):
		c.Level, c.Message, c.Fix = DoctorError, file+" is missing: the knowledge base was never initialized", "run `kk init`"
		return nil, c
	case err != nil:
		c.Level, c.Message, c.Fix = DoctorError, fmt.Sprintf("%s cannot be read: %v", file, err), "run `kk init --upgrade` to rewrite it"
		return nil, c
	case strings.TrimSpace(in.Version) == "":
		c.Level, c.Message = DoctorOK, fmt.Sprintf("set up by a development build of %s on %s (no release recorded)", in.Package, in.InstalledAt)
		return in, c
	}
	c.Level, c.Message = DoctorOK, fmt.Sprintf("installed by %s %s at %s", in.Package, in.Version, in.InstalledAt)
	return in, c
}

func checkVersion(in *store.Installed, running string) DoctorCheck {
	c := DoctorCheck{Name: "kk-version"}
	if in.Version == "" || running == "" {
		c.Level, c.Message = DoctorOK, "a development build set up or runs this knowledge base; kk init --upgrade by a release records its version"
		return c
	}
	if in.Version != running {
		c.Level = DoctorWarn
		c.Message = fmt.Sprintf("installed with %s %s, running kk %s", in.Package, in.Version, running)
		c.Fix = "run `kk init --upgrade` to refresh the installed files for this version"
		return c
	}
	c.Level, c.Message = DoctorOK, "installed and running version "+running
	return c
}

func checkGitignore(k *store.KB) DoctorCheck {
	c := DoctorCheck{Name: "gitignore"}
	file := k.Rel(k.GitignorePath())
	fix := "run `kk init --upgrade`, which puts kk's lines first and keeps yours"
	data, err := k.ReadFile(k.GitignorePath())
	if errors.Is(err, fs.ErrNotExist) {
		c.Level, c.Message, c.Fix = DoctorWarn, file+" is missing, so session logs and local state may be committed", fix
		return c
	}
	if err != nil {
		c.Level, c.Message, c.Fix = DoctorError, fmt.Sprintf("%s cannot be read: %v", file, err), "check the file's permissions"
		return c
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var missing []string
	for _, l := range store.GitignoreLines {
		if !have[l] {
			missing = append(missing, l)
		}
	}
	if len(missing) > 0 {
		c.Level, c.Message, c.Fix = DoctorWarn, fmt.Sprintf("%s lacks %d of kk's lines", file, len(missing)), fix
		c.Details = missing
		return c
	}
	c.Level, c.Message = DoctorOK, file+" has kk's lines"
	return c
}

func checkKKIgnore(k *store.KB) DoctorCheck {
	c := DoctorCheck{Name: "kkignore"}
	data, err := k.ReadFile(k.KKIgnorePath())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.Level, c.Message, c.Fix = DoctorWarn, ".kkignore is missing, so document discovery scans harness folders and build output", "run `kk init --upgrade` to write a starter .kkignore"
		return c
	case err != nil:
		c.Level, c.Message, c.Fix = DoctorError, fmt.Sprintf(".kkignore cannot be read: %v", err), "check the file's permissions"
		return c
	}
	patterns := 0
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns++
		}
	}
	if patterns == 0 {
		c.Level, c.Message, c.Fix = DoctorWarn, ".kkignore holds only comments", "add the paths document discovery should skip, one per line"
		return c
	}
	c.Level, c.Message = DoctorOK, fmt.Sprintf(".kkignore has %d pattern(s)", patterns)
	return c
}

func checkConfig(k *store.KB) DoctorCheck {
	c := DoctorCheck{Name: "config"}
	file := k.Rel(k.ConfigPath())
	if _, err := os.Stat(k.ConfigPath()); errors.Is(err, fs.ErrNotExist) {
		c.Level, c.Message = DoctorOK, file+" is absent; the defaults apply"
		return c
	}
	if _, err := k.LoadConfig(); err != nil {
		c.Level, c.Message, c.Fix = DoctorError, err.Error(), "correct the setting named; kk reads no other setting until the file is valid"
		return c
	}
	c.Level, c.Message = DoctorOK, file+" is valid"
	return c
}

func checkLeaves(t *store.Tree) DoctorCheck {
	c := DoctorCheck{Name: "leaves-valid"}
	if len(t.Irregular) > 0 {
		// A FIFO, a device or a socket named like a leaf: kk never opens
		// it (a read of a FIFO would block), so no leaf is in it.
		for _, rel := range t.Irregular {
			c.Details = append(c.Details, lintPath(rel)+": is not a regular file (a FIFO, a device or a socket); kk never opens it")
		}
	}
	if len(t.Problems) > 0 || len(t.Irregular) > 0 {
		conflicted := false
		for _, p := range t.Problems {
			var ne *node.Error
			if errors.As(p, &ne) {
				c.Details = append(c.Details, lintPath(ne.Path)+": "+ne.Detail())
				conflicted = conflicted || ne.Field == "" && strings.HasPrefix(ne.Msg, node.ConflictMarkersMsg)
			} else {
				c.Details = append(c.Details, p.Error())
			}
		}
		slices.Sort(c.Details)
		c.Level, c.Message = DoctorError, fmt.Sprintf("%d leaf file(s) are invalid; kk skips them (the other leaves are read as ever)", len(t.Problems)+len(t.Irregular))
		c.Fix = "correct each file named (`kk lint` explains every problem); `kk node adopt` (or `kk doctor --fix`) makes a note written by hand a leaf"
		if len(t.Irregular) > 0 {
			c.Fix += "; remove what is not a regular file (rm)"
		}
		if conflicted {
			c.Fix = "resolve the git merge conflict in each leaf holding conflict markers (edit it to keep the right text, then `git add` it); " + c.Fix
		}
		return c
	}
	c.Level, c.Message = DoctorOK, fmt.Sprintf("all %d leaf file(s) are valid", len(t.Leaves))
	return c
}

func checkV2(t *store.Tree) DoctorCheck {
	c := DoctorCheck{Name: "v2-leaves"}
	v2 := 0
	for _, n := range t.Leaves {
		if n.Format == 2 {
			v2++
		}
	}
	if v2 > 0 {
		c.Level, c.Message = DoctorWarn, fmt.Sprintf("%d of %d leaf file(s) are in the kenkeep v2 format", v2, len(t.Leaves))
		c.Fix = "run `kk migrate okf-v3`"
		return c
	}
	c.Level, c.Message = DoctorOK, "no leaves in the v2 format"
	return c
}

func checkEntryFresh(ctx context.Context, k *store.KB, t *store.Tree) DoctorCheck {
	c := DoctorCheck{Name: "entry-fresh", Fix: "run `kk index rebuild`"}
	file := k.Rel(k.EntryPath())
	got, ok := k.EntryHash()
	switch {
	case !ok:
		c.Level, c.Message = DoctorWarn, file+" is missing or records no nodes_hash"
	case got != indexfiles.NodesHash(t):
		c.Level, c.Message = DoctorWarn, file+" is stale: it was generated from different leaves"
	default:
		if stale := staleGenerated(ctx, k); len(stale) > 0 {
			c.Level, c.Details = DoctorWarn, stale
			c.Message = fmt.Sprintf("%d generated file(s) differ from what the leaves and %s generate", len(stale), k.Rel(k.SummariesPath()))
			return c
		}
		c.Level, c.Message, c.Fix = DoctorOK, file+" matches the leaves", ""
	}
	return c
}

func checkEntrySize(k *store.KB) DoctorCheck {
	c := DoctorCheck{Name: "entry-size"}
	file := k.Rel(k.EntryPath())
	src, err := k.ReadFile(k.EntryPath())
	if err != nil {
		c.Level, c.Message, c.Fix = DoctorWarn, fmt.Sprintf("%s cannot be read: %v", file, errors.Unwrap(err)), "run `kk index rebuild`"
		if _, ok := errors.AsType[*store.UnreadableError](err); ok {
			c.Message = err.Error()
		}
		if errors.Is(err, fs.ErrNotExist) {
			c.Message = file + " is missing"
		}
		return c
	}
	doc, err := frontmatter.Parse(src)
	if err != nil {
		c.Level, c.Message, c.Fix = DoctorWarn, fmt.Sprintf("%s: %s", file, frontmatter.Describe(err)), "run `kk index rebuild`"
		return c
	}
	tokens := (store.UTF16Len(string(doc.Body())) + 3) / 4
	if tokens > entryTokenBudget {
		c.Level = DoctorWarn
		c.Message = fmt.Sprintf("%s is about %d tokens, over the %d every session start can afford", file, tokens, entryTokenBudget)
		c.Fix = "move leaves from the nodes/ root into topic folders and keep top-level folder summaries to one short line"
		return c
	}
	c.Level, c.Message = DoctorOK, fmt.Sprintf("%s is about %d tokens (budget %d)", file, tokens, entryTokenBudget)
	return c
}

// candidateOrigin matches "<session id>:<type>:<n>", the origin of a
// proposal candidate.
var candidateOrigin = regexp.MustCompile(`^[A-Za-z0-9._-]+:[a-z][a-z0-9_-]*:[0-9]+$`)

var urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// checkDerivedFrom checks that every kk_derived_from reference points at
// something: a URL, an existing file (repository-relative or absolute), a
// session log in _sessions/, a candidate origin, or an id (retired ids of a
// split leaf included).
func checkDerivedFrom(k *store.KB, t *store.Tree) (DoctorCheck, error) {
	c := DoctorCheck{Name: "derived-from"}
	redirects, err := k.ReadRedirects()
	if err != nil {
		return c, err
	}
	sessions := map[string]bool{}
	if entries, err := os.ReadDir(k.SessionsDir()); err == nil {
		for _, e := range entries {
			sessions[e.Name()] = true
		}
	}
	resolved := map[string]bool{}
	resolves := func(ref string) bool {
		if ok, seen := resolved[ref]; seen {
			return ok
		}
		ok := urlScheme.MatchString(ref) || candidateOrigin.MatchString(ref) || sessions[ref]
		if !ok {
			_, live := t.ByID(ref)
			_, retired := redirects[ref]
			ok = live || retired
		}
		if !ok {
			p := ref
			if !filepath.IsAbs(p) {
				p = filepath.Join(k.Root, filepath.FromSlash(ref))
			}
			_, err := os.Stat(p)
			ok = err == nil
		}
		resolved[ref] = ok
		return ok
	}
	refs := 0
	for _, n := range t.Leaves {
		for _, ref := range n.DerivedFrom {
			refs++
			if !resolves(ref) {
				c.Details = append(c.Details, fmt.Sprintf("%s: %s", lintPath(n.Path), ref))
			}
		}
	}
	if len(c.Details) > 0 {
		c.Level, c.Message = DoctorWarn, fmt.Sprintf("%d of %d kk_derived_from reference(s) do not resolve", len(c.Details), refs)
		c.Fix = "point each at a URL, a file in the repository or a session log, or remove it"
		return c, nil
	}
	c.Level, c.Message = DoctorOK, fmt.Sprintf("all %d kk_derived_from reference(s) resolve", refs)
	return c, nil
}

func checkLock(ctx context.Context, k *store.KB) DoctorCheck {
	c := DoctorCheck{Name: "writer-lock"}
	set := k.WriterLock()
	if !exists(set.Guard) && !exists(set.Path) {
		c.Level, c.Message = DoctorOK, "the writer lock is free"
		return c
	}
	l, err := set.Acquire(ctx, doctorLockWait, "kk doctor (lock probe)")
	var held *lock.HeldError
	switch {
	case errors.As(err, &held):
		who := "another process"
		if h := held.Holder; h != nil {
			who = fmt.Sprintf("pid %d on %s (%s) since %s", h.PID, h.Host, h.Command, h.Since.UTC().Format(time.RFC3339))
		}
		c.Level, c.Message = DoctorWarn, "the writer lock is held by "+who
		c.Fix = "wait for that command to finish; the lock frees itself when its holder exits"
		return c
	case err != nil:
		c.Level, c.Message, c.Fix = DoctorWarn, fmt.Sprintf("the writer lock cannot be probed: %v", err), "check the permissions of "+k.Rel(set.Path)
		return c
	}
	_ = l.Release()
	c.Level, c.Message = DoctorOK, "the writer lock is free"
	return c
}

// exists reports whether path ("" for none) may name a file: false only
// where it is known not to.
func exists(path string) bool {
	if path == "" {
		return false
	}
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// checkFreshness reports the nodes that describe code changed after them
// (kenkeep's "nodes describe current code"): a warning at most, and
// nothing to check outside git.
func checkFreshness(ctx context.Context, k *store.KB) DoctorCheck {
	c := DoctorCheck{Name: "freshness", Level: DoctorOK}
	rep := freshness.CheckAndRecord(ctx, k, freshness.Options{}, k.Time())
	switch {
	case !rep.Available && RefusedByGit(ctx, k.Root) != nil:
		c.Message = "not checked: git refuses the repository (see git-repository)"
	case !rep.Available:
		c.Message = "not checked: " + rep.Reason
	case rep.Shallow:
		c.Level = DoctorWarn
		c.Message = fmt.Sprintf("checked only against the %d commit(s) this shallow clone holds: %d of the %d node(s) changed in them reference files changed after them; the others are not checked", rep.Commits, rep.FlaggedCount, rep.ConsideredNodes)
		for _, f := range rep.Flagged {
			c.Details = append(c.Details, fmt.Sprintf("%s: %s", f.ID, strings.Join(f.ChangedPaths, ", ")))
		}
		c.Fix = freshness.ShallowFix + " lets freshness read the whole history"
	case rep.FlaggedCount == 0:
		c.Message = fmt.Sprintf("all %d committed node(s) describe the code as it is", rep.ConsideredNodes)
	default:
		c.Level = DoctorWarn
		c.Message = fmt.Sprintf("%d of %d committed node(s) reference files changed after them", rep.FlaggedCount, rep.ConsideredNodes)
		for _, f := range rep.Flagged {
			c.Details = append(c.Details, fmt.Sprintf("%s: %s", f.ID, strings.Join(f.ChangedPaths, ", ")))
		}
		c.Fix = "review each node against its sources and rewrite it (kk node write --update); `kk freshness` lists them"
	}
	return c
}
