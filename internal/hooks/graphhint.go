package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/store"
)

// The end-of-task loop of the knowledge graph (seed 002, "Execution"):
// session-start notes when a session began; at the end of each turn
// graph-hint finds the files the session changed since (git: the work
// tree's changes made after the start, and the commits made since), adds
// the Context Files of any task file the session gave to a context query
// or changed, and matches them against the atoms' path patterns. When
// atoms match, it asks the agent, once per session and in the harness's
// own end-of-turn format, to record what the work changed: which atoms
// and molecules, at which versions, with which tools. The marks live in
// .state/sessions/<session id>.json (gitignored).

// sessionMark is .state/sessions/<id>.json.
type sessionMark struct {
	StartedAt string `json:"started_at,omitempty"`
	HintedAt  string `json:"hinted_at,omitempty"`
}

func sessionMarksDir(k *store.KB) string { return filepath.Join(k.StateDir(), "sessions") }

func sessionMarkPath(k *store.KB, id string) string {
	return filepath.Join(sessionMarksDir(k), id+".json")
}

// markSessionStart records when the session of r began, unless it has a
// mark already (a resumed or compacted session starts again with its own
// id, and keeps its first start). It asks git nothing: session-start is on
// the session's critical path, and graph-hint finds the commit HEAD named
// then from the time. The mark is replaced atomically but not synced to
// disk (writeVolatileJSON): every new session writes one, and a mark lost
// to a power cut costs one end-of-turn hint. Marks older than
// Options.SessionMarkRetention go when a new one is written, looked for at
// most once every marksPruneEvery.
func markSessionStart(r Request) error {
	id, err := NormalizeSessionID(r.Adapter.ID(), r.Input.SessionID)
	if err != nil {
		return nil // no session id: nothing to mark, nothing to hint later
	}
	p := sessionMarkPath(r.KB, id)
	if _, err := os.Stat(p); err == nil {
		// Kept, unless a power cut tore it (it is written unsynced): a
		// mark that does not parse is written again.
		var m sessionMark
		if readJSONFile(r.KB, p, &m) == nil {
			return nil
		}
	}
	if err := writeVolatileJSON(p, sessionMark{StartedAt: r.Now.UTC().Format(time.RFC3339Nano)}); err != nil {
		return err
	}
	pruneSessionMarks(r.KB, r.Now, r.opts().SessionMarkRetention)
	return nil
}

// marksPruneEvery is the least time between two looks for old session
// marks: a look stats every mark (about a month of sessions), which a
// session start need not pay each time.
const marksPruneEvery = 24 * time.Hour

// marksPrunedName is the file in the marks folder whose time records the
// last look for old marks.
const marksPrunedName = ".pruned"

// pruneSessionMarks removes the marks older than retention, unless it
// looked less than marksPruneEvery ago.
func pruneSessionMarks(k *store.KB, now time.Time, retention time.Duration) {
	stamp := filepath.Join(sessionMarksDir(k), marksPrunedName)
	if fi, err := os.Stat(stamp); err == nil && now.Sub(fi.ModTime()) < marksPruneEvery && !now.Before(fi.ModTime()) {
		return
	}
	entries, err := os.ReadDir(sessionMarksDir(k))
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Name() == marksPrunedName {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) > retention {
			_ = os.Remove(filepath.Join(sessionMarksDir(k), e.Name()))
		}
	}
	if err := os.WriteFile(stamp, nil, 0o644); err == nil {
		_ = os.Chtimes(stamp, now, now)
	}
}

// GraphHintResult is what one graph-hint call found.
type GraphHintResult struct {
	// Changed are the files the session changed, relative to the
	// repository root.
	Changed []string
	// Tasks are the task files the session worked on.
	Tasks []string
	// Context is the atoms and molecules the changed files (and the tasks'
	// Context Files) match; nil when nothing was looked up.
	Context *graph.ContextResult
	// Text is the hint; empty when there is none to give.
	Text string
}

// GraphHint runs graph-hint for r and returns what to print: the hint in
// the harness's end-of-turn format, or nothing when the session already
// had its hint, changed nothing an atom covers, or the harness has no
// channel at its end of turn.
func GraphHint(ctx context.Context, r Request) ([]byte, error) {
	id, err := NormalizeSessionID(r.Adapter.ID(), r.Input.SessionID)
	if err != nil {
		return nil, nil // without a session, "once per session" cannot hold: say nothing
	}
	var mark sessionMark
	if err := readJSONFile(r.KB, sessionMarkPath(r.KB, id), &mark); err != nil {
		var syntax *json.SyntaxError
		if !errors.As(err, &syntax) {
			return nil, err
		}
		// Torn by a power cut (marks are written unsynced): whether the
		// hint was given cannot be told, so none is, and the mark is
		// mended so that the next turns ask nothing either.
		mark = sessionMark{HintedAt: r.Now.UTC().Format(time.RFC3339Nano)}
		return nil, writeVolatileJSON(sessionMarkPath(r.KB, id), mark)
	}
	if mark.HintedAt != "" {
		return nil, nil
	}
	if _, ok := r.Adapter.HookOutput(harness.GraphHint, ""); !ok {
		return nil, nil
	}
	res, err := FindGraphHint(ctx, r.KB, mark.StartedAt)
	if err != nil || res.Text == "" {
		return nil, err
	}
	out, _ := r.Adapter.HookOutput(harness.GraphHint, res.Text)
	mark.HintedAt = r.Now.UTC().Format(time.RFC3339Nano)
	if err := writeJSONFile(sessionMarkPath(r.KB, id), mark); err != nil {
		// Without the mark the next turn would ask again: better to say
		// nothing now.
		return nil, err
	}
	return out, nil
}

// FindGraphHint works out the hint for a session that started at
// startedAt (RFC 3339; "" when unknown: every change in the work tree
// counts then, and no commit does).
func FindGraphHint(ctx context.Context, k *store.KB, startedAt string) (*GraphHintResult, error) {
	res := &GraphHintResult{}
	var start time.Time
	if startedAt != "" {
		t, err := time.Parse(time.RFC3339Nano, startedAt)
		if err != nil {
			return nil, fmt.Errorf("the session's mark: started_at %q: %v", startedAt, err)
		}
		start = t
	}
	if !ownGit(ctx, k.Root) {
		// git's environment points at another repository or index (a
		// harness started from a git hook or a script): what git would
		// call changed is not what the session changed.
		return res, nil
	}
	top, err := gitx.TopLevel(ctx, k.Root)
	if err != nil {
		return res, nil // not a git work tree: kk cannot tell what changed
	}
	// git names the folders themselves; the knowledge base may have been
	// found through a link (a session's cwd that is one): both are
	// compared resolved.
	root := k.Root
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	if real, err := filepath.EvalSymlinks(top); err == nil {
		top = real
	}
	changed, err := sessionChanges(ctx, top, root, start)
	if err != nil {
		return nil, err
	}
	res.Changed = changed
	if len(changed) == 0 {
		// Nothing changed, so no task file either (a task counts when its
		// file changed, or when anything did): the index stays closed.
		return res, nil
	}
	// A graph without atoms has nothing to hint at (the hook runs at the
	// end of every turn).
	db, err := graph.BranchIndex(ctx, k)
	if err != nil {
		return nil, err
	}
	if _, err := graph.SyncForRead(ctx, k, db); err != nil {
		return nil, err
	}
	if has, err := db.HasAtoms(ctx); err != nil || !has {
		return res, err
	}
	paths := slices.Clone(changed)
	uses, err := graph.TaskFileUses(k)
	if err != nil {
		return nil, err
	}
	for _, u := range uses {
		// A task counts when the session changed its file (marked it
		// done, say), or read it with a context query and then changed
		// anything at all.
		at, err := time.Parse(time.RFC3339Nano, u.At)
		usedNow := err == nil && !start.IsZero() && !at.Before(start) && len(changed) > 0
		if !usedNow && !slices.Contains(changed, u.File) {
			continue
		}
		src, err := os.ReadFile(filepath.Join(k.Root, filepath.FromSlash(u.File)))
		if err != nil {
			continue // the task file went: its paths with it
		}
		res.Tasks = append(res.Tasks, u.File)
		paths = append(paths, graph.ContextFiles(string(src))...)
	}
	if len(paths) == 0 {
		return res, nil
	}
	no := false
	c, err := graph.Context(ctx, k, graph.ContextParams{Paths: paths, IncludeChangelog: &no})
	if err != nil {
		return nil, err
	}
	res.Context = c
	atoms := len(c.OrphanAtoms)
	for _, m := range c.Molecules {
		atoms += len(m.Atoms)
	}
	if atoms == 0 {
		return res, nil
	}
	res.Text = graphHintText(res)
	return res, nil
}

// ownGit reports whether git, in this process's environment, works on the
// work tree holding root with that work tree's own git folder and index.
// A harness started from a git hook or a script passes GIT_DIR,
// GIT_WORK_TREE or GIT_INDEX_FILE on to its hooks, and they may name
// another repository, or a temporary index of a commit in progress.
func ownGit(ctx context.Context, root string) bool {
	if os.Getenv("GIT_DIR") == "" && os.Getenv("GIT_WORK_TREE") == "" && os.Getenv("GIT_INDEX_FILE") == "" {
		return true
	}
	top, gitDir, ok := gitx.WorkTreeGitDir(root)
	if !ok {
		return false
	}
	out, err := gitx.Read(ctx, root, "rev-parse", "--absolute-git-dir", "--show-toplevel")
	if err != nil {
		return false
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(got) != 2 || !sameFile(got[0], gitDir) || !sameFile(got[1], top) {
		return false
	}
	if index := os.Getenv("GIT_INDEX_FILE"); index != "" {
		if !filepath.IsAbs(index) {
			index = filepath.Join(top, index)
		}
		return sameFile(index, filepath.Join(gitDir, "index"))
	}
	return true
}

// sameFile reports whether a and b name the same existing file or folder.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// sessionChanges lists the files, relative to root (inside the work tree
// top), that a session which started at start changed: those the work
// tree has changed, added or removed against HEAD whose change is newer
// than the start (a removal always counts), and those the commits made
// since touched (from the newest first-parent commit made before the
// start to HEAD; every commit when there was none before). A zero start counts
// every change of the work tree and no commit. Files of the knowledge
// base itself (.ai/kenkeep/) are left out.
func sessionChanges(ctx context.Context, top, root string, start time.Time) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(topRel string) {
		abs := filepath.Join(top, filepath.FromSlash(topRel))
		rel, err := filepath.Rel(root, abs)
		if err != nil {
			return
		}
		rel = filepath.ToSlash(rel)
		if rel == ".." || strings.HasPrefix(rel, "../") || rel == store.DirName || strings.HasPrefix(rel, store.DirName+"/") || seen[rel] {
			return
		}
		seen[rel] = true
		out = append(out, rel)
	}
	// The knowledge base's own files are left out of git's walk too.
	var exclude []string
	if kb, err := filepath.Rel(top, filepath.Join(root, store.DirName)); err == nil && !strings.HasPrefix(filepath.ToSlash(kb), "../") {
		exclude = []string{"--", ".", ":(exclude)" + filepath.ToSlash(kb)}
	}
	// Read, not Run: git status would refresh the index and so take
	// .git/index.lock, and a git command the agent, another session or
	// the user runs at that moment would fail on it.
	status, err := gitx.Read(ctx, top, append([]string{"status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"}, exclude...)...)
	if err != nil {
		return nil, fmt.Errorf("git status: %w", err)
	}
	for _, e := range bytes.Split(status, []byte{0}) {
		if len(e) < 4 {
			continue
		}
		code, p := string(e[:2]), string(e[3:])
		if strings.Contains(code, "D") || start.IsZero() {
			add(p)
			continue
		}
		fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(p)))
		if errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.ModTime().Before(start)) {
			add(p)
		}
	}
	if !start.IsZero() {
		// HEAD at the start: the newest commit of HEAD's first-parent line
		// made before it (a second early: git's times are whole seconds,
		// and a commit made in the session's first second is the
		// session's).
		out, _ := gitx.Read(ctx, top, "rev-list", "-1", "--first-parent", "--before="+start.Add(-time.Second).UTC().Format(time.RFC3339), "HEAD")
		startHead := strings.TrimSpace(string(out))
		args := []string{"log", "--name-only", "--format=", "-z", "--no-renames", "-n", "500", "HEAD"}
		if startHead != "" {
			args = []string{"diff", "--name-only", "-z", "--no-renames", startHead, "HEAD"}
		}
		args = append(args, exclude...)
		// Without a HEAD now (no commit yet) there is nothing to add; a
		// start commit history rewrote away leaves the work tree's changes.
		if out, err := gitx.Read(ctx, top, args...); err == nil {
			for _, p := range bytes.Split(out, []byte{0}) {
				if p := strings.TrimSpace(string(p)); p != "" {
					add(p)
				}
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// graphHintText is the hint: what the session touched that the graph
// covers, then how to record what changed.
func graphHintText(res *GraphHintResult) string {
	// The graph's names, ids and paths are disarmed (harness.Defang); the
	// <placeholders> of kk's own instructions are not.
	d := harness.Defang
	paths := func(list []string, n int) string {
		list = capList(list, n)
		shown := make([]string, len(list))
		for i, p := range list {
			shown[i] = d(shownPath(p))
		}
		return strings.Join(shown, ", ")
	}
	var b strings.Builder
	b.WriteString("kk (knowledge graph): this session changed files that atoms of the project's knowledge graph cover. " +
		"If the work changed how these areas work (their patterns, constraints, integration points, or where their files are), " +
		"record it in the graph before you finish; if it changed nothing a later session needs to know, finish without it. " +
		"kk asks this once per session.\n\n")
	task := "<task id>"
	if len(res.Tasks) == 1 {
		if id := graph.TaskID(res.Tasks[0]); shownPath(id) == id {
			task = d(id) // one that does not print stays a placeholder
		}
	}
	if len(res.Tasks) > 0 {
		b.WriteString("Task files of this session:")
		for _, t := range res.Tasks {
			fmt.Fprintf(&b, " %s (task %s)", d(shownPath(t)), d(shownPath(graph.TaskID(t))))
		}
		b.WriteString("\n")
	}
	b.WriteString("Atoms whose paths match:\n")
	atom := func(a graph.AtomView, in string) {
		fmt.Fprintf(&b, "- atom %s %q, version %d, %s", d(a.ID), d(a.Name), a.Version, in)
		if len(a.MatchedPaths) > 0 {
			fmt.Fprintf(&b, ": %s", paths(a.MatchedPaths, 10))
		}
		b.WriteString("\n")
	}
	for _, m := range res.Context.Molecules {
		for _, a := range m.Atoms {
			atom(a, fmt.Sprintf("in molecule %s %q (version %d)", d(m.ID), d(m.Name), m.Version))
		}
	}
	for _, a := range res.Context.OrphanAtoms {
		atom(a, "in no molecule")
	}
	if u := res.Context.UnmatchedPaths; len(u) > 0 {
		fmt.Fprintf(&b, "Changed files no atom covers: %s\n", paths(u, 15))
	}
	if task == "<task id>" {
		b.WriteString("No task file was given to `kk context --task-file` in this session: use the id of the work (a ticket, or the branch name) as the task id.\n")
	}
	fmt.Fprintf(&b, `
How to record it with kk's MCP tools (the kk command for each in brackets):
- What changed in an atom's area: manage_graph {"operation":"update","entityType":"atom","id":"<atom id>","version":<version>,"knowledge":"<what a later session must know>","knowledgeMode":"append","lastTaskId":"%[1]s"} [kk graph update <atom id> --version <version> --knowledge-mode append --knowledge-file - --task %[1]s]
- Files moved or new folders: the same update with "paths":["<glob>",…], which replaces the atom's patterns [kk graph update <atom id> --version <version> --path '<glob>' --task %[1]s]
- What spans a molecule's atoms: manage_graph update with "entityType":"molecule" and the molecule's id and version
- A significant change: manage_changelog {"operation":"append","parentType":"atom","parentId":"<atom id>","taskId":"%[1]s","summary":"<what changed and why>"} [kk changelog append atom <atom id> --task %[1]s --summary "<what changed and why>"]
- A new area no atom covers: manage_graph {"operation":"create","entityType":"atom","name":"<name>","paths":["<glob>"],"knowledge":"<…>","moleculeId":"<molecule id>","createdByTaskId":"%[1]s"} [kk graph create atom --name "<name>" --path '<glob>' --molecule <molecule id> --knowledge-file - --task %[1]s]
A version is the one read last; on CONFLICT, read the atom again (query_graph get, or kk graph get <id>) and retry. The kk-graph skill describes the whole loop.
`, task)
	return b.String()
}

// capList returns at most n items of list, the rest counted.
func capList(list []string, n int) []string {
	if len(list) <= n {
		return list
	}
	return append(slices.Clone(list[:n]), fmt.Sprintf("and %d more", len(list)-n))
}
