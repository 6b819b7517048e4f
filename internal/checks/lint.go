package checks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/safetext"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/trace"
	"github.com/kk-project/kk/internal/txn"

	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/node"
)

// Lint levels: an error fails `kk lint`; a finding is advice.
const (
	LintError   = "error"
	LintFinding = "finding"
)

// Lint rules.
const (
	ruleOKFConformance       = "okf-conformance"
	ruleNeedsMigration       = "needs-migration"
	ruleInvalidLeaf          = "invalid-leaf"
	ruleDanglingEdge         = "dangling-edge"
	ruleRedirectedEdge       = "redirected-edge"
	ruleSlugIDMismatch       = "slug-id-mismatch"
	ruleMissingFolderIndex   = "missing-folder-index"
	ruleEmptyFolder          = "empty-folder"
	ruleTagNearDuplicate     = "tag-near-duplicate"
	ruleTagWhitespace        = "tag-whitespace"
	ruleEmptySummary         = "empty-summary"
	ruleMissingFolderSummary = "missing-folder-summary"
	ruleOrphan               = "orphan"
	ruleStaleIndex           = "stale-index"
	ruleIrregularFile        = "irregular-file"
	ruleDeadLink             = "dead-link"
	ruleFolderCaseCollision  = "folder-case-collision"
	ruleFolderName           = "folder-name"
	ruleStrayFile            = "stray-file"
	ruleLoneMarker           = "lone-marker"
	ruleHiddenText           = "hidden-text"
	ruleRetiredID            = "retired-id"
	ruleMergeToolLeftover    = "merge-tool-leftover"
)

// LintItem is one problem lint found. File is relative to the repository
// root.
type LintItem struct {
	Rule    string `json:"rule"`
	Level   string `json:"level"`
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"` // the line in File, when the problem is on one
	Message string `json:"message"`
	Fix     string `json:"fix"`
}

// LintReport is the result of Lint, items sorted by rule, file, message.
type LintReport struct {
	Errors   int        `json:"errors"`
	Findings int        `json:"findings"`
	Items    []LintItem `json:"items"`
	// ConformanceOnly says that phase 1 failed, so only its problems are
	// in Items: the leaves kk skips, edges, folders and tags are checked
	// once every document under nodes/ is OKF.
	ConformanceOnly bool `json:"-"`
}

// nodesRel is the nodes folder relative to the repository root.
const nodesRel = store.DirName + "/nodes"

func lintPath(rel string) string {
	if rel == "" {
		return nodesRel
	}
	return nodesRel + "/" + rel
}

type linter struct {
	k     *store.KB
	items []LintItem
	// removed says where the leaves of dangling ids went, asking git
	// once
	removed *index.Removed
}

func (l *linter) add(rule, level, file, msg, fix string) {
	l.items = append(l.items, LintItem{Rule: rule, Level: level, File: file, Message: msg, Fix: fix})
}

// Lint checks the knowledge base and reports every problem it finds. It
// reads only; the leaf cache may be refreshed.
//
// Phase 1 checks that nodes/ is a conforming OKF bundle: index files carry
// the right front matter and every document has a type. If it fails, only
// those problems are reported. Phase 2 reports each leaf kk cannot read
// with every problem in it, and checks the others: edges, naming,
// folders, tags, summaries and the freshness of the index.
func Lint(ctx context.Context, k *store.KB) (*LintReport, error) {
	// Edges, folders and the index's freshness, judged from part of the
	// leaves, would be wrong: a sparse checkout that leaves some out is
	// refused, naming what to run.
	if err := index.CheckedOut(ctx, k); err != nil {
		return nil, err
	}
	l := &linter{k: k, removed: index.NewRemoved(k)}
	t, db, err := index.ReadTreeDB(ctx, k)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, rel := range t.Irregular {
		l.add(ruleIrregularFile, LintError, lintPath(rel), "is not a regular file (a FIFO, a device or a socket); kk never opens it",
			"remove it, or replace it with a regular file")
	}
	l.checkIndexFiles(t)
	l.classifyProblems(t.Problems)
	if conf := l.only(ruleOKFConformance); len(conf) > 0 {
		l.items = conf
		r := l.report()
		r.ConformanceOnly = true
		return r, nil
	}
	// The leaves kk can read are checked as ever; the ones it skips are
	// reported above, each with every problem in it.
	if err := l.checkTree(ctx, t, db); err != nil {
		return nil, err
	}
	return l.report(), nil
}

func (l *linter) only(rule string) []LintItem {
	var out []LintItem
	for _, it := range l.items {
		if it.Rule == rule {
			out = append(out, it)
		}
	}
	return out
}

func (l *linter) report() *LintReport {
	items := l.items
	if items == nil {
		items = []LintItem{}
	}
	slices.SortFunc(items, func(a, b LintItem) int {
		if c := strings.Compare(a.Rule, b.Rule); c != 0 {
			return c
		}
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return strings.Compare(a.Message, b.Message)
	})
	items = slices.Compact(items)
	r := &LintReport{Items: items}
	for _, it := range items {
		if it.Level == LintError {
			r.Errors++
		} else {
			r.Findings++
		}
	}
	return r
}

// checkIndexFiles checks the front matter of every index.md: the bundle
// root declares the OKF version and nothing else; other index files have
// no front matter keys.
func (l *linter) checkIndexFiles(t *store.Tree) {
	dirs := t.IndexDirs
	list := make([]string, 0, len(dirs))
	for d := range dirs {
		list = append(list, d)
	}
	slices.Sort(list)
	msgs := make([]string, len(list))
	store.Parallel(len(list), func(i int) {
		msgs[i] = l.checkIndexFile(list[i])
	})
	for i, d := range list {
		if msgs[i] == "" {
			continue
		}
		fix := "run `kk index rebuild`, which regenerates every index.md"
		switch {
		case strings.HasPrefix(msgs[i], v2IndexMsg):
			fix = "run `kk migrate okf-v3`, which converts the leaves and regenerates every index.md"
		case store.HandIndex(l.k, store.JoinRel(d, "index.md"), func(id string) bool { _, ok := t.ByID(id); return ok }) != nil:
			// a note a person named index.md: a rebuild leaves it, and
			// deleting it would lose their text
			fix = "this is a note written by hand: rename it to <type>-<slug>.md in its folder (git mv), then run `kk node adopt` on it; kk leaves it as it is until then"
		}
		l.add(ruleOKFConformance, LintError, lintPath(store.JoinRel(d, "index.md")), msgs[i], fix)
	}
}

const v2IndexMsg = "index is in the kenkeep v2 format"

func (l *linter) checkIndexFile(dir string) string {
	src, err := l.k.ReadFile(l.k.NodePath(store.JoinRel(dir, "index.md")))
	if err != nil {
		return fmt.Sprintf("cannot be read: %v", err)
	}
	doc, err := frontmatter.Parse(src)
	if err != nil {
		return fmt.Sprintf("front matter does not parse: %s", frontmatter.Describe(err))
	}
	keys := doc.Keys()
	if _, ok := doc.Value("schema_version"); ok {
		return v2IndexMsg + " (front matter has " + strings.Join(keys, ", ") + ")"
	}
	if dir != "" {
		if len(keys) > 0 {
			return fmt.Sprintf("a folder index has no front matter, but this one has %s", strings.Join(keys, ", "))
		}
		return ""
	}
	want := "the bundle root index has exactly one front matter key, okf_version: '0.1' or '0.2'"
	if len(keys) != 1 || keys[0] != "okf_version" {
		if len(keys) == 0 {
			return want + "; it has none"
		}
		return want + "; it has " + strings.Join(keys, ", ")
	}
	v, _ := doc.Value("okf_version")
	if s, ok := v.(string); !ok || (s != indexfiles.OKFVersion && s != "0.2") {
		return fmt.Sprintf("%s; okf_version is %s", want, describeValue(v))
	}
	return ""
}

func describeValue(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case nil:
		return "empty"
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case int64, float64:
		return fmt.Sprintf("the number %v", x)
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%v", v)
}

// okfCheck is what phase 1 learned about one document that the strict
// tree read rejected.
type okfCheck struct {
	problem   string // why the document is not OKF-conformant; "" when it is
	v2        bool   // a kenkeep v2 leaf (kind instead of type)
	v1        bool   // a kenkeep v1 leaf of the flat layout: migrated, never adopted
	adoptable bool   // only the type (or all front matter) is missing: kk node adopt can fill it in
	unparsed  bool   // the front matter does not parse (a hand edit's YAML): it is corrected, not given a type
	binary    bool   // a NUL byte, or saved as UTF-16: not UTF-8 text
}

// classifyProblems sorts the leaves the tree read rejected into documents
// that are not OKF at all (phase 1) and OKF documents that are not valid kk
// leaves (phase 2). Only rejected leaves are read again.
func (l *linter) classifyProblems(problems []error) {
	checked := map[string]okfCheck{}
	for _, p := range problems {
		var ne *node.Error
		if !errors.As(p, &ne) {
			l.add(ruleInvalidLeaf, LintError, nodesRel, p.Error(), "fix the problem named, then run `kk lint` again")
			continue
		}
		if ne.Msg == store.IndexFolderMsg {
			l.add(ruleInvalidLeaf, LintError, lintPath(ne.Path), ne.Msg, "rename the folder with git mv (its notes keep their ids), then run `kk index rebuild`")
			continue
		}
		if errors.Is(ne, store.ErrMergeToolLeftover) {
			// whatever its text (a copy of a note, or empty), it is no
			// note: not judged as one
			l.add(ruleMergeToolLeftover, LintError, lintPath(ne.Path), ne.Msg, "remove it once the conflict is resolved (rm "+safetext.ShellQuote(lintPath(ne.Path))+"); set mergetool.keepTemporaries to false if it keeps them")
			continue
		}
		if _, misnamed := store.MisnamedMD(ne.Path); misnamed {
			// whatever its text, kk does not read it until it is renamed
			l.add(ruleInvalidLeaf, LintError, lintPath(ne.Path), ne.Msg, "rename the file as the message says (git mv when it is committed), then run `kk lint` again; until then kk skips it")
			continue
		}
		c, seen := checked[ne.Path]
		// A leaf holding git's conflict markers is a conflict to resolve,
		// whatever its front matter looks like with them inside (an
		// add/add conflict puts them there).
		conflict := ne.Field == "" && strings.HasPrefix(ne.Msg, node.ConflictMarkersMsg)
		if !seen && !conflict {
			c = l.checkOKF(ne.Path)
			checked[ne.Path] = c
			if c.problem != "" {
				fix := "give the file YAML front matter with a non-empty string type (for example type: practice), or move it out of nodes/"
				switch {
				case c.v1:
					fix = "migrate the tree with the kk-migrate skill (`kk migrate status` lists its steps: place inventory, place apply, migrate okf-v3)"
				case c.binary:
					fix = "save it as UTF-8 text (a binary file does not belong under nodes/); until then kk skips it"
				case c.unparsed:
					fix = `correct the front matter where the message says: a value that holds ": " or " #", or starts with a character YAML reserves, goes in quotes (title: "Fix: retries"), and lines are indented with spaces, not tabs; until then kk skips it`
				case c.adoptable:
					fix = "run " + store.AdoptCommand(ne.Path) + " to make it a leaf (it needs a title: key or a # heading; the rest is filled in), " + fix
				}
				l.add(ruleOKFConformance, LintError, lintPath(ne.Path), c.problem, fix)
			}
			if c.v2 {
				l.addNeedsMigration(ne.Path)
			}
		}
		if c.problem != "" {
			continue
		}
		fix := "edit the leaf so its front matter is valid, or run " + store.AdoptCommand(ne.Path) + " to fill in what a note written by hand lacks; until then kk skips it"
		switch {
		case ne.Field == "" && strings.HasPrefix(ne.Msg, node.ConflictMarkersMsg) && strings.Contains(ne.Msg, "only around kk_version"):
			fix = "replace the <<<<<<< ======= >>>>>>> block with the kk_version line the message names, then `git add` it and continue the merge, rebase or cherry-pick"
		case ne.Field == "" && strings.HasPrefix(ne.Msg, node.ConflictMarkersMsg):
			fix = "resolve the git conflict: edit the leaf to keep the right text, remove the <<<<<<< ======= >>>>>>> lines, then `git add` it and continue the merge, rebase or cherry-pick"
		case errors.Is(ne, store.ErrCopiedID):
			fix = "run " + store.AdoptCommand(ne.Path) + " to give this copy an id of its own (from its file name when that is <type>-<slug>.md and free, else from its type and title; the file is renamed <kk_id>.md, the original is left as it is), or delete it; until then kk skips it"
		case errors.Is(ne, store.ErrSharedID):
			fix = "if this file is a copy, run " + store.AdoptCommand(ne.Path) + " to give it an id of its own (kk_id and file name), or delete it; otherwise give one of the leaves sharing the id " + ne.ID + " its own kk_id (and name its file <kk_id>.md); until then kk skips it"
		case ne.Field == "" && (strings.HasPrefix(ne.Msg, store.BrokenSymlinkMsg) || strings.HasPrefix(ne.Msg, store.OutsideSymlinkMsg)):
			fix = "replace the link with the note itself (a copy of the file it points to), or remove it; until then kk skips it"
		case ne.Field == "" && (strings.HasPrefix(ne.Msg, node.NotUTF8Msg) || ne.Msg == frontmatter.UTF16Msg):
			fix = "save the file as UTF-8 (your editor's encoding setting); until then kk skips it"
		case l.oversize(ne.Path):
			fix = fmt.Sprintf("shorten the leaf, or split it into several notes (at most %d bytes each); until then kk skips it", node.MaxSize)
		}
		for _, p := range ne.Problems() {
			l.add(ruleInvalidLeaf, LintError, lintPath(ne.Path), p.String(), fix)
		}
	}
}

// oversize reports whether the leaf rel (relative to nodes/) is over the
// size limit, which no edit of its front matter or adoption mends.
func (l *linter) oversize(rel string) bool {
	fi, err := os.Lstat(l.k.NodePath(rel))
	return err == nil && fi.Mode().IsRegular() && fi.Size() > node.MaxSize
}

func (l *linter) addNeedsMigration(rel string) {
	l.add(ruleNeedsMigration, LintError, lintPath(rel), "leaf is in the kenkeep v2 format (schema_version: 2, kind)",
		"run `kk migrate okf-v3` to convert every v2 leaf")
}

// checkOKF checks that a document under nodes/ parses and has a non-empty
// string type. A v2 leaf, whose type is its kind, passes.
func (l *linter) checkOKF(rel string) okfCheck {
	p := l.k.NodePath(rel)
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > node.MaxSize {
		// Not a document that can be judged here (a bad symlink, an
		// oversized file); the tree reader's own message says why.
		return okfCheck{}
	}
	src, err := os.ReadFile(p)
	if err != nil {
		return okfCheck{problem: fmt.Sprintf("cannot be read: %v", err)}
	}
	if !utf8.Valid(src) && !frontmatter.UTF16(src) && bytes.IndexByte(src, 0) < 0 {
		// Text in another encoding (Latin-1, Windows-1252): the tree
		// reader's message names the line and the byte, which YAML's
		// "invalid trailing UTF-8 octet" does not.
		return okfCheck{}
	}
	doc, err := frontmatter.Parse(src)
	if err != nil {
		if nul, ok := errors.AsType[*frontmatter.NULError](err); ok {
			return okfCheck{problem: nul.Error(), binary: true}
		}
		return okfCheck{problem: fmt.Sprintf("front matter does not parse: %s", frontmatter.Describe(err)), unparsed: true}
	}
	if !doc.HasFrontMatter() || len(doc.Keys()) == 0 {
		return okfCheck{problem: "has no front matter; an OKF document declares at least its type", adoptable: true}
	}
	if sv, ok := doc.Value("schema_version"); ok && sv == int64(1) {
		if _, typed := doc.Value(node.KeyType); !typed {
			return okfCheck{problem: "is a kenkeep v1 leaf (schema_version: 1) and has no type key", v1: true}
		}
	}
	if sv, ok := doc.Value("schema_version"); ok && sv == int64(2) {
		if _, v3 := doc.Value(node.KeySchemaVersion); !v3 {
			if kind, _ := doc.Value("kind"); isNonEmptyString(kind) {
				return okfCheck{v2: true}
			}
		}
	}
	v, ok := doc.Value(node.KeyType)
	switch {
	case !ok:
		return okfCheck{problem: "has no type key", adoptable: true}
	case !isNonEmptyString(v):
		return okfCheck{problem: fmt.Sprintf("type must be a non-empty string; it is %s", describeValue(v))}
	}
	return okfCheck{}
}

func isNonEmptyString(v any) bool {
	s, ok := v.(string)
	return ok && strings.TrimSpace(s) != ""
}

// leafFolders returns every folder that holds a leaf somewhere below it,
// plus the nodes/ root, which always has an index.
func leafFolders(t *store.Tree) map[string]bool {
	out := map[string]bool{"": true}
	for _, n := range t.Leaves {
		for d := n.Dir(); d != "" && !out[d]; d = store.DirOf(d) {
			out[d] = true
		}
	}
	return out
}

func (l *linter) checkTree(ctx context.Context, t *store.Tree, db *index.DB) error {
	summaries, err := store.ReadSummaries(l.k.SummariesPath())
	if err != nil {
		return err
	}
	redirects, err := l.k.ReadRedirects()
	if err != nil {
		return err
	}
	// The content hash is the costliest single step; compute it alongside.
	hash := make(chan string, 1)
	go func() { hash <- indexfiles.NodesHash(t) }()

	for _, n := range t.Leaves {
		if n.Format == 2 {
			l.addNeedsMigration(n.Path)
		}
		if msg := node.CheckNaming(n.Type, n.ID, n.Path); msg != "" {
			fix := fmt.Sprintf("make the id %s-<slug> with a lowercase, dash-separated slug and name the file <id>.md; update edges that point at the old id", n.Type)
			if was := strings.TrimSuffix(path.Base(n.Path), ".md"); node.CheckNaming(n.Type, was, n.Path) == "" && node.CheckNaming(n.Type, n.ID, n.ID+".md") == "" {
				// kk_id changed by hand in a file named for a valid id:
				// kk node rename finishes it (file, edges, links, ledger).
				fix = fmt.Sprintf("if kk_id was changed by hand, `kk node rename %s %s` renames the file and points the edges and links to %s at it; if the file was renamed, `kk node rename %s %s` gives the note the file's name as its id", was, n.ID, was, n.ID, was)
			}
			if low := strings.ToLower(n.ID); low != n.ID && node.CheckNaming(n.Type, low, low+".md") == "" {
				// An id that only its case keeps from being canonical.
				fix = fmt.Sprintf("`kk node rename %s %s` fixes the case of the id, its file's name and the edges and links that spell it", n.ID, low)
			}
			if was := strings.TrimSuffix(path.Base(n.Path), ".md"); was != n.ID && store.IDKey(was) == store.IDKey(n.ID) && node.CheckNaming(n.Type, n.ID, n.ID+".md") == "" {
				// kk_id's case fixed by hand, the file's name left.
				fix = fmt.Sprintf("`kk node rename %s %s` names the file for the id", n.ID, n.ID)
			}
			l.add(ruleSlugIDMismatch, LintError, lintPath(n.Path), msg, fix)
		}
	}
	// One look-up per entry of the ledger among the leaves read.
	for _, h := range redirects.Held(func(id string) (string, string, bool) {
		n, ok := t.ByID(id)
		if !ok {
			return "", "", false
		}
		return n.ID, n.Path, true
	}) {
		msg, fix := trace.RetiredHeldText(l.k, h)
		l.add(ruleRetiredID, LintError, lintPath(h.Path), msg, fix)
	}
	incoming := l.checkEdges(ctx, t, redirects)
	if err := l.checkLinks(ctx, t, db, redirects); err != nil {
		return err
	}
	l.checkOrphans(t, incoming)
	l.checkTags(t)
	l.checkFolders(t, summaries)
	l.checkEntryHash(ctx, <-hash)
	l.checkStrayFiles()
	return l.checkLoneMarkers(t)
}

// checkLoneMarkers reports the marker lines of generated blocks left
// without their partner by a hand edit (node.LoneMarkers): kk reads the
// rest of the old block as the note's text and writes its own block
// beside it, so the note holds two, one of them kept up to date by no
// edge.
func (l *linter) checkLoneMarkers(t *store.Tree) error {
	// Read on every CPU (the files are read for this check alone): the
	// markers each leaf's file leaves lone, and where its body starts.
	type found struct {
		markers []node.LoneMarker
		version any  // a kk_version that is no whole number of at least 1; nil when it is one, or absent
		hidden  rune // the body's first stray tag character (node.StrayTagChar)
		hline   int  // its line in the body
		before  int  // lines before the body
		err     error
	}
	out := make([]found, len(t.Leaves))
	store.Parallel(len(t.Leaves), func(i int) {
		src, err := os.ReadFile(l.k.NodePath(t.Leaves[i].Path))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				out[i].err = err
			}
			return
		}
		out[i].version = badVersion(src)
		lone, tags := node.MayHaveLoneMarkers(src), node.MayHaveTagChars(src)
		if !lone && !tags {
			return
		}
		parts, err := frontmatter.Split(src)
		if err != nil {
			return
		}
		out[i].before = bytes.Count(src[:len(src)-len(parts.Body)], []byte("\n"))
		if lone {
			out[i].markers = node.LoneMarkers(string(parts.Body))
		}
		if tags {
			out[i].hidden, out[i].hline = node.StrayTagChar(string(parts.Body))
		}
	})
	for i, n := range t.Leaves {
		if out[i].err != nil {
			return out[i].err
		}
		l.checkHiddenText(n, out[i].hidden, out[i].before+out[i].hline)
		if v := out[i].version; v != nil {
			// kk reads the leaf, but kk read and every update naming the
			// version it read refuse it until it is a number again.
			l.add(ruleOKFConformance, LintError, lintPath(n.Path), fmt.Sprintf("field %q must be a whole number of at least 1, not %v", txn.KeyVersion, v),
				"put back the number it had (git log -p shows it), or 1")
		}
		for _, m := range out[i].markers {
			block := "Related"
			if m.Marker == node.CitationsStart || m.Marker == node.CitationsEnd {
				block = "Citations"
			}
			msg := fmt.Sprintf("%s has no %s after it (a line deleted by hand?): kk reads the block as text of the note's and writes its own %s block after it", m.Marker, m.Partner, block)
			fix := fmt.Sprintf("delete what is left of the old block, from this line to its last link, or put %s back after it; the next write of the note renders the block again", m.Partner)
			if !m.Start {
				msg = fmt.Sprintf("%s has no %s before it (a line deleted by hand?): kk reads what is before it as text of the note's", m.Marker, m.Partner)
				fix = fmt.Sprintf("delete what is left of the old block, its # %s heading, its links and this line, or put %s back before its heading; the next write of the note renders the block again", block, m.Partner)
			}
			l.items = append(l.items, LintItem{Rule: ruleLoneMarker, Level: LintFinding, File: lintPath(n.Path), Line: out[i].before + m.Line, Message: msg, Fix: fix})
		}
	}
	return nil
}

// badVersion returns the kk_version of a leaf's source when it is not a
// whole number of at least 1 (a hand edit, a merge resolved by hand), nil
// when it is one or there is none. Only a front matter whose kk_version
// line is not plain digits is parsed.
func badVersion(src []byte) any {
	if !bytes.Contains(src, []byte(txn.KeyVersion+":")) {
		return nil
	}
	parts, err := frontmatter.Split(src)
	if err != nil || !parts.Has {
		return nil
	}
	for line := range bytes.SplitSeq(parts.YAML, []byte("\n")) {
		rest, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r"), []byte(txn.KeyVersion+":"))
		if !ok {
			continue
		}
		if v := bytes.TrimSpace(rest); len(v) > 0 && v[0] >= '1' && v[0] <= '9' && len(bytes.Trim(v, "0123456789")) == 0 {
			return nil
		}
		doc, err := frontmatter.Parse(src)
		if err != nil {
			return nil // not a leaf kk reads: another rule says so
		}
		v, ok := doc.Value(txn.KeyVersion)
		if i, isInt := v.(int64); !ok || isInt && i >= 1 {
			return nil
		}
		return v
	}
	return nil
}

// checkHiddenText reports text of a leaf that reads otherwise than it
// shows: in its one-line fields a control character, a bidirectional
// control or a stray tag character (node.LineProblem), in its body a
// stray tag character (r, on line of the file; 0 for none). kk's writes
// refuse them; a leaf that came by git (a teammate's commit, a pack) may
// hold them, and an agent reading it would read what no reviewer saw.
func (l *linter) checkHiddenText(n *node.Node, r rune, line int) {
	const fix = "retype the text without it (an editor that shows invisible characters, or `cat -v`, shows where it is); if the note came from someone else, read what it says before keeping it"
	fields := []struct{ name, v string }{{node.KeyTitle, n.Title}, {node.KeyDescription, n.Description}}
	for _, tag := range n.Tags {
		fields = append(fields, struct{ name, v string }{node.KeyTags, tag})
	}
	for _, f := range fields {
		if msg := node.LineProblem(f.v); msg != "" {
			l.add(ruleHiddenText, LintError, lintPath(n.Path), fmt.Sprintf("field %q %s", f.name, msg), fix)
		}
	}
	if r != 0 {
		l.items = append(l.items, LintItem{Rule: ruleHiddenText, Level: LintError, File: lintPath(n.Path), Line: line, Message: "its text " + node.TagCharMsg(r), Fix: fix})
	}
}

// checkEdges reports edges to ids that are not live, and returns how many
// edges from other leaves reach each live id (through redirects too).
func (l *linter) checkEdges(ctx context.Context, t *store.Tree, redirects store.Redirects) map[string]int {
	incoming := make(map[string]int, len(t.Leaves))
	for _, n := range t.Leaves {
		file := lintPath(n.Path)
		relKey, depKey := node.KeyRelatesTo, node.KeyDependsOn
		if n.Format == 2 {
			relKey, depKey = "relates_to", "depends_on"
		}
		for _, e := range []struct {
			key string
			ids []string
		}{{relKey, n.RelatesTo}, {depKey, n.DependsOn}} {
			for _, id := range e.ids {
				if _, ok := t.ByID(id); ok {
					if id != n.ID {
						incoming[id]++
					}
					continue
				}
				live := store.ResolveRedirect(redirects, id, t.IsLive)
				if _, skipped := t.Claimed(id); skipped && len(live) == 0 {
					continue // the leaf exists, but kk skips it: reported as invalid-leaf
				}
				if len(live) == 0 {
					fix := fmt.Sprintf("remove %s from %s or correct the id", id, e.key)
					if hint := trace.GoneHint(ctx, l.removed, id, func(p string) (string, bool) {
						n, ok := t.LeafAt(p)
						if !ok {
							return "", false
						}
						return n.ID, true
					}); hint != "" {
						fix += "; " + hint
					}
					l.add(ruleDanglingEdge, LintError, file, fmt.Sprintf("%s: %s is not the id of any leaf", e.key, id), fix)
					continue
				}
				for _, to := range live {
					if to != n.ID {
						incoming[to]++
					}
				}
				l.add(ruleRedirectedEdge, LintFinding, file,
					fmt.Sprintf("%s: %s was retired and now redirects to %s", e.key, id, strings.Join(live, ", ")),
					fmt.Sprintf("replace %s with %s in %s", id, strings.Join(live, ", "), e.key))
			}
		}
	}
	return incoming
}

// checkLinks reports links from a leaf to a leaf path where there is no
// file, saying where the leaf the link named is now when it still exists
// (moved by hand, or split: the redirect ledger knows its successors).
func (l *linter) checkLinks(ctx context.Context, t *store.Tree, db *index.DB, redirects store.Redirects) error {
	dead, err := index.DeadLinks(ctx, l.k, t, db, redirects)
	if err != nil {
		return err
	}
	for _, d := range dead {
		msg, fix := DescribeDeadLink(d)
		// A link a person wrote is an error. The generated Related block
		// is derived from the edges, which are right, and any write of
		// the leaf renders it again: stale, like an ENTRY.md generated
		// from other leaves, it is a finding (kk check fails on it).
		level := LintError
		if d.Generated {
			level = LintFinding
		}
		l.items = append(l.items, LintItem{Rule: ruleDeadLink, Level: level, File: lintPath(d.From), Line: d.Line, Message: msg, Fix: fix})
	}
	return nil
}

// DescribeDeadLink says what is wrong with a dead link, and how to fix it.
func DescribeDeadLink(d store.DeadLink) (msg, fix string) {
	what := "links to"
	if d.Generated {
		what = "the generated Related block links to"
	}
	msg = fmt.Sprintf("%s %s, which does not exist", what, lintPath(d.Missing))
	if d.Target != d.Missing {
		msg = fmt.Sprintf("%s %s (%s), which does not exist", what, d.Target, lintPath(d.Missing))
	}
	switch {
	case len(d.Now) == 1 && strings.EqualFold(d.NowIDs[0], d.ID):
		msg += fmt.Sprintf("; the leaf %s moved to %s", d.ID, lintPath(d.Now[0]))
	case len(d.Now) > 0:
		var to []string
		for i, p := range d.Now {
			to = append(to, d.NowIDs[i]+" ("+lintPath(p)+")")
		}
		msg += fmt.Sprintf("; %s was retired and redirects to %s", d.ID, strings.Join(to, ", "))
	default:
		msg += fmt.Sprintf("; no leaf has the id %s (deleted, or renamed without a redirect)", d.ID)
	}
	switch {
	case d.Generated && d.Relinkable():
		fix = fmt.Sprintf("run `kk doctor --fix`, which renders the Related block again with the link to %s", d.NewTarget())
	case d.Relinkable():
		fix = fmt.Sprintf("run `kk doctor --fix`, which relinks it to %s", d.NewTarget())
	case len(d.Now) > 1:
		fix = "point the link at the leaf among those it means"
	default:
		fix = "point the link at the leaf that holds this knowledge now, or remove it"
	}
	return msg, fix
}

// checkOrphans reports leaves with no edge to or from another leaf.
// The graph's links (kk_molecule, kk_related, kk_edges) count as edges.
func (l *linter) checkOrphans(t *store.Tree, incoming map[string]int) {
	linked := map[string]bool{}
	for _, n := range t.Leaves {
		for _, id := range n.GraphLinks {
			if id != n.ID {
				linked[id] = true
			}
		}
	}
	for _, n := range t.Leaves {
		other := func(id string) bool { return id != n.ID }
		if incoming[n.ID] > 0 || linked[n.ID] || slices.ContainsFunc(n.RelatesTo, other) || slices.ContainsFunc(n.DependsOn, other) ||
			slices.ContainsFunc(n.GraphLinks, other) {
			continue
		}
		l.add(ruleOrphan, LintFinding, lintPath(n.Path), "no edges lead to or from this leaf",
			"link it from a related leaf, or add the ids it relates to or depends on")
	}
}

// checkTags reports tags with stray whitespace, and tags that differ from
// another tag only in case, punctuation or a plural "s". The spelling most
// leaves use is the one to keep.
func (l *linter) checkTags(t *store.Tree) {
	type tagForms struct{ clean, norm string }
	type tagUse struct{ leaf, tag string }
	forms := map[string]tagForms{}          // each distinct tag is worked out once
	variants := map[string]map[string]int{} // normalized tag -> spelling -> leaves using it
	var uses []tagUse
	seen := map[string]bool{}
	for _, n := range t.Leaves {
		file := lintPath(n.Path)
		clear(seen)
		for _, tag := range n.Tags {
			f, ok := forms[tag]
			if !ok {
				f = tagForms{clean: strings.Join(strings.Fields(tag), " "), norm: normalizeTag(tag)}
				forms[tag] = f
			}
			if f.clean != tag {
				l.add(ruleTagWhitespace, LintFinding, file, fmt.Sprintf("tag %q has leading, trailing or repeated whitespace", tag),
					fmt.Sprintf("write it as %q", f.clean))
			}
			if f.norm == "" || seen[tag] {
				continue
			}
			seen[tag] = true
			if variants[f.norm] == nil {
				variants[f.norm] = map[string]int{}
			}
			variants[f.norm][tag]++
			uses = append(uses, tagUse{leaf: file, tag: tag})
		}
	}
	preferred := map[string]string{} // spelling -> the spelling to use instead
	for _, spellings := range variants {
		if len(spellings) < 2 {
			continue
		}
		names := make([]string, 0, len(spellings))
		for s := range spellings {
			names = append(names, s)
		}
		// The spelling most leaves use wins; on a tie, a clean lowercase
		// spelling.
		slices.SortFunc(names, func(a, b string) int {
			if d := spellings[b] - spellings[a]; d != 0 {
				return d
			}
			if d := tagTidiness(b) - tagTidiness(a); d != 0 {
				return d
			}
			return store.LocaleCompare(a, b)
		})
		for _, s := range names[1:] {
			preferred[s] = names[0]
		}
	}
	for _, u := range uses {
		best, ok := preferred[u.tag]
		if !ok {
			continue
		}
		l.add(ruleTagNearDuplicate, LintFinding, u.leaf,
			fmt.Sprintf("tag %q nearly duplicates %q, which %d leaf(s) use", u.tag, best, variants[forms[u.tag].norm][best]),
			fmt.Sprintf("use the tag %q", best))
	}
}

// checkFolders reports folders without their index.md, folders without
// leaves, and folder summaries that are missing or blank.
func (l *linter) checkFolders(t *store.Tree, summaries store.Summaries) {
	folders := leafFolders(t)
	// A folder holding a leaf kk skips is not empty.
	occupied := maps.Clone(folders)
	for _, p := range t.SkippedPaths() {
		for d := store.DirOf(p); d != "" && !occupied[d]; d = store.DirOf(d) {
			occupied[d] = true
		}
	}
	for _, d := range t.Dirs {
		switch {
		case occupied[d] && !folders[d]:
			// Only skipped leaves: generation gives it no index.
		case folders[d] && !t.IndexDirs[d]:
			l.add(ruleMissingFolderIndex, LintError, lintPath(store.JoinRel(d, "index.md")), "folder holds leaves but has no index.md",
				"run `kk index rebuild`")
		case !occupied[d] && occupied[store.DirOf(d)]:
			// Only the outermost empty folder is reported; removing it
			// removes the ones inside.
			msg, fix := "folder holds no leaves", "remove the folder"
			if t.IndexDirs[d] {
				msg, fix = "folder holds no leaves, only a leftover index.md", "remove the folder; `kk index rebuild` removes leftover index files"
			}
			kept, leftovers := l.keptFile(d)
			switch {
			case kept != "":
				// An OKF log.md, or any file that is not generated: removing
				// the folder would lose it.
				msg, fix = "folder holds no leaves", fmt.Sprintf("move %s (and any other file it holds) to a folder with leaves, then remove the folder", lintPath(kept))
			case len(leftovers) > 0:
				// An editor's files beside a note being written there.
				msg, fix = fmt.Sprintf("folder holds no leaves, only files an editor leaves (%s)", strings.Join(leftovers, ", ")), "finish or quit the editor there, then remove the folder"
			}
			l.add(ruleEmptyFolder, LintFinding, lintPath(d), msg, fix)
		}
	}
	// Folders whose paths differ only in case (a folder renamed by hand
	// on Linux, then written into under its old name) are one folder on
	// macOS and Windows: git cannot check both out there.
	seen := map[string]string{}
	for _, d := range t.Dirs {
		// Folded by case and by Unicode spelling: a name macOS wrote
		// decomposed ("e" and a combining accent) and the same name
		// typed composed are one folder there.
		key := strings.ToLower(norm.NFC.String(d))
		if first, ok := seen[key]; ok && d != "" {
			msg := fmt.Sprintf("folder differs from %s only in case: on macOS and Windows, whose file systems ignore case, they are one folder and git cannot check both out", lintPath(first))
			switch {
			case strings.EqualFold(d, first):
			case norm.NFC.String(d) == norm.NFC.String(first):
				msg = fmt.Sprintf("folder differs from %s only in how its name's accented letters are encoded (composed or decomposed Unicode): on macOS they are one folder and git cannot check both out", lintPath(first))
			default:
				msg = fmt.Sprintf("folder differs from %s only in case and in how its name's accented letters are encoded (composed or decomposed Unicode): on macOS they are one folder and git cannot check both out", lintPath(first))
			}
			l.add(ruleFolderCaseCollision, LintError, lintPath(d), msg,
				"move the leaves of one into the other with git mv, then run `kk index rebuild`")
			continue
		}
		seen[key] = d
	}
	// Folders made by hand with a name kk would not make (node.NameProblem):
	// a Windows clone cannot check out a device name or a name ending
	// with a dot or a space (an error); a space must be escaped in
	// every link to the folder, as the generated index files do (a
	// finding).
	for _, d := range t.Dirs {
		name := d[strings.LastIndex(d, "/")+1:]
		problem := node.NameProblem(name)
		if d == "" || problem == "" {
			continue
		}
		level, fix := LintError, "rename the folder with git mv, then run `kk index rebuild`"
		if dashed := strings.ReplaceAll(name, " ", "-"); node.NameProblem(dashed) == "" && !strings.HasSuffix(name, " ") {
			level, fix = LintFinding, fmt.Sprintf("rename the folder with git mv, to %s for example, then run `kk index rebuild`", dashed)
		}
		l.add(ruleFolderName, level, lintPath(d), strings.TrimSuffix(problem, "; use - instead"), fix)
	}
	file := l.k.Rel(l.k.SummariesPath())
	blank := store.BlankSummaries(l.k.SummariesPath())
	// Summaries of folders that are gone: a folder renamed by hand (git mv)
	// left its summary under the old name.
	var gone []string
	for key, text := range summaries {
		if key != "" && text != "" && !slices.Contains(t.Dirs, key) {
			gone = append(gone, key)
		}
	}
	slices.Sort(gone)
	for d := range folders {
		// A blank entry is reported as empty-summary instead.
		if d != "" && summaries[d] == "" && !slices.Contains(blank, d) {
			fix := fmt.Sprintf("add a one-line summary for %q to %s", d, file)
			switch len(gone) {
			case 0:
			case 1:
				fix += fmt.Sprintf("; it holds a summary for %q, a folder that is gone: if %q is that folder moved, rename the key %q to %q", gone[0], d, gone[0], d)
			default:
				fix += fmt.Sprintf("; it holds summaries for %s, folders that are gone: if %q is one of them moved, rename its key to %q", quotedList(gone), d, d)
			}
			l.add(ruleMissingFolderSummary, LintFinding, lintPath(d), "folder has no summary in FOLDER_SUMMARIES.md", fix)
		}
	}
	for _, key := range blank {
		l.add(ruleEmptySummary, LintFinding, file, fmt.Sprintf("folder %q has a blank summary", key),
			fmt.Sprintf("write a one-line summary for %q or remove the entry", key))
	}
}

// keptFile returns a file under folder d (relative to nodes/) that is
// neither a generated index.md, a dotfile nor a file an editor leaves
// (editorLeftover), such as an OKF log.md; "" when there is none. It also
// returns the names of the editor's files it passed over.
func (l *linter) keptFile(d string) (string, []string) {
	found := ""
	var leftovers []string
	root := l.k.NodePath(d)
	_ = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return fs.SkipDir
		}
		if strings.HasPrefix(e.Name(), ".") && p != root {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !e.IsDir() && editorLeftover(e.Name()) {
			leftovers = append(leftovers, e.Name())
			return nil
		}
		if !e.IsDir() && e.Name() != "index.md" {
			if rel, err := filepath.Rel(l.k.NodesDir(), p); err == nil {
				found = filepath.ToSlash(rel)
			}
		}
		return nil
	})
	return found, leftovers
}

// checkStrayFiles reports each file under nodes/ that kk never reads and
// never wrote (StrayFiles): a finding, for it may be a file put there on
// purpose, but kk leaves it out of everything, so a note saved with the
// wrong extension would otherwise be lost without a word.
func (l *linter) checkStrayFiles() {
	for _, rel := range StrayFiles(l.k) {
		l.add(ruleStrayFile, LintFinding, lintPath(rel), StrayFileMsg, strayFileFix(rel))
	}
}

// StrayFileMsg is the problem of a file StrayFiles lists.
const StrayFileMsg = "is not a note: kk reads only files named *.md and leaves this one out of everything"

func strayFileFix(rel string) string {
	name := path.Base(rel)
	if of, mark, ok := store.MergeToolLeftover(name); ok && mark == "orig" {
		return fmt.Sprintf("it is the backup git mergetool keeps of %s (mergetool.keepBackup); remove it: rm %s", lintPath(path.Join(path.Dir(rel), of)), safetext.ShellQuote(lintPath(rel)))
	}
	want := strings.TrimSuffix(name, path.Ext(name)) + ".md"
	if strings.HasPrefix(name, ".") || path.Ext(name) == name {
		want = name + ".md"
	}
	return fmt.Sprintf("if it is a note, rename it to %s (git mv when it is committed); if not, move it out of %s/ or remove it", want, nodesRel)
}

// StrayFiles lists, relative to nodes/ and sorted, the regular files under
// nodes/ that kk does not read: a file whose name does not end in .md,
// such as a note saved as note.txt or with no extension. Not listed: kk's
// own files (every .md, dotfiles such as .redirects.json and an atomic
// write's temporary files, and what is in dot folders), names
// store.MisnamedMD reports (a note saved as .MD or .markdown is an
// invalid leaf), the files an editor leaves (editorLeftover) and the ones
// a file manager leaves (Thumbs.db, desktop.ini). Symbolic links are not
// followed. A folder that cannot be read lists nothing under it.
func StrayFiles(k *store.KB) []string {
	var out []string
	root := k.NodesDir()
	_ = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if e != nil && e.IsDir() && p != root {
				return fs.SkipDir
			}
			return nil
		}
		name := e.Name()
		if p == root {
			return nil
		}
		if strings.HasPrefix(name, ".") {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() || strings.HasSuffix(name, ".md") || editorLeftover(name) || fileManagerLeftover(name) {
			return nil
		}
		if _, misnamed := store.MisnamedMD(name); misnamed {
			return nil
		}
		if rel, err := filepath.Rel(root, p); err == nil {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// fileManagerLeftover reports whether name is a file Windows Explorer
// leaves in a folder it shows (macOS's .DS_Store is a dotfile).
func fileManagerLeftover(name string) bool {
	switch strings.ToLower(name) {
	case "thumbs.db", "ehthumbs.db", "desktop.ini":
		return true
	}
	return false
}

// editorLeftover reports whether name is a file an editor leaves beside a
// file it edits (dotfiles, such as vim's .note.md.swp and emacs's
// .#note.md, are passed over anyway): vim's write probe 4913, a backup
// note.md~, an emacs autosave #note.md#.
func editorLeftover(name string) bool {
	return name == "4913" || strings.HasSuffix(name, "~") ||
		len(name) > 1 && strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#")
}

// checkEntryHash reports an ENTRY.md generated from other leaves than the
// tree's (hash is the tree's nodes_hash).
func (l *linter) checkEntryHash(ctx context.Context, hash string) {
	entry := l.k.Rel(l.k.EntryPath())
	if src, err := l.k.ReadFile(l.k.EntryPath()); err == nil {
		if from, to := node.ConflictMarkers(src); from > 0 {
			l.add(ruleStaleIndex, LintFinding, entry,
				fmt.Sprintf("ENTRY.md %s (lines %d to %d): a merge stopped on it where kk's merge driver is not set up (kk init sets it up in this clone)", node.ConflictMarkersMsg, from, to),
				"run `kk index rebuild`, then `git add` the generated files and conclude the merge")
			return
		}
	}
	switch got, ok := l.k.EntryHash(); {
	case !ok:
		l.add(ruleStaleIndex, LintFinding, entry, "ENTRY.md is missing or records no nodes_hash", "run `kk index rebuild`")
	case got != hash:
		l.add(ruleStaleIndex, LintFinding, entry, "ENTRY.md was generated from different leaves (nodes_hash differs)", "run `kk index rebuild`")
	default:
		// The leaves match; a folder summary or a generated file edited
		// by hand still makes ENTRY.md or GRAPH.md stale. (A folder's
		// index.md is judged by okf-conformance, which accepts one
		// written by hand; kk index rebuild --check compares it too.)
		graph := l.k.Rel(l.k.GraphPath())
		for _, f := range staleGenerated(ctx, l.k) {
			if f != entry && f != graph {
				continue
			}
			if _, err := os.Lstat(filepath.Join(l.k.Root, filepath.FromSlash(f))); errors.Is(err, fs.ErrNotExist) {
				continue // told below (GRAPH.md) or above (ENTRY.md)
			}
			l.add(ruleStaleIndex, LintFinding, f, "differs from what the leaves and FOLDER_SUMMARIES.md generate", "run `kk index rebuild`")
		}
	}
	// GRAPH.md records no hash of its own; only its absence is told here
	// (kk index rebuild --check compares its bytes).
	if _, err := os.Lstat(l.k.GraphPath()); errors.Is(err, fs.ErrNotExist) {
		l.add(ruleStaleIndex, LintFinding, l.k.Rel(l.k.GraphPath()), "GRAPH.md is missing", "run `kk index rebuild`")
	}
}

// tagTidiness ranks spellings of a tag: 2 for trimmed lowercase, 1 for
// trimmed, 0 otherwise.
func tagTidiness(tag string) int {
	if strings.Join(strings.Fields(tag), " ") != tag {
		return 0
	}
	if strings.ToLower(tag) != tag {
		return 1
	}
	return 2
}

// normalizeTag folds spelling variants of a tag together: lowercase, only
// letters and digits, and one trailing "s" dropped.
func normalizeTag(tag string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(tag) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return strings.TrimSuffix(b.String(), "s")
}

// quotedList joins quoted words with commas: "a", "b", "c".
func quotedList(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = strconv.Quote(w)
	}
	return strings.Join(q, ", ")
}
