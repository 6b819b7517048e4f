package reorg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/migrate"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/node"
)

// Placing is the first migration step (flat-to-tree, schema 1 to 2): the
// leaves of kenkeep's flat layout (nodes/practice/ and nodes/map/, front
// matter with schema_version: 1) move into topical folders that a
// clustering step chose, and their schema_version becomes 2. The tree
// reader does not read v1 leaves, so this file reads their front matter
// directly and rewrites only the version key, keeping every other key's
// bytes.

// placeFromVersion and placeToVersion are the schema versions placing
// converts between.
const (
	placeFromVersion = 1
	placeToVersion   = 2
)

// flatLeaf is a leaf file of the tree as placing sees it.
type flatLeaf struct {
	rel  string // relative to nodes/
	abs  string
	src  []byte
	doc  *frontmatter.Doc
	id   string
	v1   bool
	info contracts.PlaceLeaf
}

// readFlatLeaves reads the front matter of every leaf file under nodes/.
// It returns the v1 leaves sorted by id, and the path of every other leaf
// by id. A v1 leaf without an id, and an id carried by two v1 leaves, are
// errors naming the files.
func readFlatLeaves(k *store.KB) ([]*flatLeaf, map[string]string, error) {
	l, err := k.Scan()
	if err != nil {
		return nil, nil, err
	}
	files, indexDirs := l.Files, l.IndexDirs
	leaves := make([]*flatLeaf, len(files))
	errs := make([]error, len(files))
	store.Parallel(len(files), func(i int) {
		leaves[i], errs[i] = readFlatLeaf(k, files[i], indexDirs)
	})
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	var v1 []*flatLeaf
	others := map[string]string{}
	byID := map[string]*flatLeaf{}
	var problems []error
	for _, l := range leaves {
		if !l.v1 {
			if l.id != "" {
				others[l.id] = l.rel
			}
			continue
		}
		if prev, dup := byID[l.id]; dup {
			problems = append(problems, &node.Error{Path: l.rel, Field: "id", Msg: fmt.Sprintf("duplicate id %s (also used by %s); give each leaf its own id before placing", l.id, prev.rel)})
			continue
		}
		byID[l.id] = l
		v1 = append(v1, l)
	}
	if len(problems) > 0 {
		return nil, nil, &store.TreeError{Problems: problems}
	}
	slices.SortFunc(v1, func(a, b *flatLeaf) int { return store.LocaleCompare(a.id, b.id) })
	return v1, others, nil
}

func readFlatLeaf(k *store.KB, f store.LeafFile, indexDirs map[string]bool) (*flatLeaf, error) {
	if f.Size > node.MaxSize {
		return nil, &node.Error{Path: f.Rel, Msg: fmt.Sprintf("leaf is %d bytes; the limit is %d", f.Size, node.MaxSize)}
	}
	src, err := os.ReadFile(f.Abs)
	if err != nil {
		return nil, &node.Error{Path: f.Rel, Msg: err.Error()}
	}
	doc, err := frontmatter.Parse(src)
	if err != nil {
		return nil, &node.Error{Path: f.Rel, Msg: frontmatter.Describe(err)}
	}
	l := &flatLeaf{rel: f.Rel, abs: f.Abs, src: src, doc: doc}
	if id, ok := doc.Value(node.KeyID); ok {
		l.id, _ = id.(string)
		return l, nil
	}
	sv, hasVersion := doc.Value("schema_version")
	switch {
	case hasVersion && sv == int64(placeFromVersion):
		l.v1 = true
	case !hasVersion && slices.Contains(migrate.LegacyBuckets, store.DirOf(f.Rel)) && !indexDirs[store.DirOf(f.Rel)]:
		l.v1 = true
	}
	id, _ := doc.Value("id")
	l.id, _ = id.(string)
	if !l.v1 {
		return l, nil
	}
	if strings.TrimSpace(l.id) == "" {
		return nil, &node.Error{Path: f.Rel, Field: "id", Msg: "a v1 leaf needs a string id to be placed"}
	}
	l.info = contracts.PlaceLeaf{
		ID: l.id, Title: flatString(doc, "title"), Kind: flatString(doc, "kind"), Tags: flatStrings(doc, "tags"),
		Summary: flatString(doc, "summary"), RelatesTo: flatStrings(doc, "relates_to"), SourcePath: k.Rel(f.Abs),
	}
	return l, nil
}

func flatString(doc *frontmatter.Doc, key string) string {
	v, _ := doc.Value(key)
	s, _ := v.(string)
	return s
}

func flatStrings(doc *frontmatter.Doc, key string) []string {
	v, _ := doc.Value(key)
	list, _ := v.([]any)
	out := []string{}
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// PlaceInventoryResult is what PlaceInventory found.
type PlaceInventoryResult struct {
	// Detected is the tree's schema version (0: no leaves).
	Detected int `json:"-"`
	// Noop is set when the tree is not a v1 tree; Leaves is empty.
	Noop   bool                  `json:"nothing_to_do"`
	Leaves []contracts.PlaceLeaf `json:"leaves"`
}

// PlaceInventory lists the leaves of a v1 (flat) tree for the clustering
// step that chooses their folders, sorted by id. A tree at another schema
// version has nothing to place. It writes nothing.
func PlaceInventory(k *store.KB) (*PlaceInventoryResult, error) {
	v, err := migrate.DetectSchemaVersion(k)
	if err != nil {
		return nil, err
	}
	res := &PlaceInventoryResult{Detected: v, Leaves: []contracts.PlaceLeaf{}}
	if v != placeFromVersion {
		res.Noop = true
		return res, nil
	}
	leaves, _, err := readFlatLeaves(k)
	if err != nil {
		return nil, err
	}
	for _, l := range leaves {
		res.Leaves = append(res.Leaves, l.info)
	}
	return res, nil
}

// PlacedLeaf is one leaf ApplyPlacement moved. From and To are relative to
// nodes/.
type PlacedLeaf struct {
	ID           string `json:"id"`
	TargetFolder string `json:"targetFolder"`
	From         string `json:"from"`
	To           string `json:"to"`
}

// PlaceResult says what ApplyPlacement did.
type PlaceResult struct {
	// Detected is the tree's schema version before the run (0: no leaves).
	Detected int `json:"-"`
	// Noop is set when every placement of the plan was already
	// carried out; nothing was written.
	Noop   bool         `json:"nothing_to_do"`
	Placed []PlacedLeaf `json:"placed"`
	// Summaries lists the folders whose summary was recorded or changed.
	Summaries []string `json:"summaries"`
}

// placeItem is one checked placement of a plan.
type placeItem struct {
	leaf   *flatLeaf
	folder string
	to     string // relative to nodes/
	data   []byte
}

// ApplyPlacement carries out a place plan on a v1 tree under the writer
// lock. The whole plan is checked first: every id is a v1 leaf, every v1
// leaf is placed exactly once, every folder summary belongs to a folder the
// placements create (or an ancestor of one), no target is taken, and every
// rewritten leaf reads back as a valid v2 leaf. Any problem rejects the
// plan before a file is touched. Each leaf is then written to
// <targetFolder>/<id>.md with schema_version: 2 (every other front matter
// key and the body keep their bytes) and its old file is removed; the
// summaries go to FOLDER_SUMMARIES.md. The index is not regenerated: the
// next step, `kk migrate okf-v3`, does that.
//
// A plan whose leaves are all in place already (a second run) is reported
// as Noop; on a tree at another version, any other plan is an
// ErrStepOrder error.
func ApplyPlacement(ctx context.Context, k *store.KB, plan contracts.PlacePlan, cmd string) (*PlaceResult, error) {
	var res *PlaceResult
	_, err := txn.Update(ctx, k, txn.Meta{Source: "cli", Command: cmd}, func(tx *txn.Tx) error {
		var err error
		res, err = applyPlacement(tx, plan)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// applyPlacement stages the placed leaves as raw files: the leaves of a v1
// tree are rewritten byte for byte, not rendered.
func applyPlacement(tx *txn.Tx, plan contracts.PlacePlan) (*PlaceResult, error) {
	k := tx.KB()
	v, err := migrate.DetectSchemaVersion(k)
	if err != nil {
		return nil, err
	}
	leaves, others, err := readFlatLeaves(k)
	if err != nil {
		return nil, err
	}
	res := &PlaceResult{Detected: v, Placed: []PlacedLeaf{}, Summaries: []string{}}
	if v != placeFromVersion || len(leaves) == 0 {
		if placedAlready(plan, others) {
			res.Noop = true
			return res, nil
		}
		desc := fmt.Sprintf("version %d", v)
		if v == 0 {
			desc = "no leaves at all"
		}
		return nil, fmt.Errorf("%w: kk place apply places the leaves of a schema version 1 (flat) tree, and this tree has %s; `kk migrate status` shows the steps it needs",
			migrate.ErrStepOrder, desc)
	}
	pending, summaries, problems := checkPlacement(k, plan, leaves, others)
	if len(problems) > 0 {
		return nil, &MovePlanError{Plan: "place plan", Problems: problems}
	}
	old, err := store.ReadSummaries(k.SummariesPath())
	if err != nil {
		return nil, err
	}
	merged := store.Summaries{}
	for f, s := range old {
		merged[f] = s
	}
	for f, s := range summaries {
		if old[f] != s {
			merged[f] = s
			res.Summaries = append(res.Summaries, f)
		}
	}
	store.SortLocale(res.Summaries)
	changed := false
	if len(res.Summaries) > 0 {
		data, err := store.RenderSummaries(merged)
		if err != nil {
			return nil, err
		}
		tx.WriteFile("FOLDER_SUMMARIES.md", data)
		changed = true
	}
	t, err := tx.Tree()
	if err != nil {
		return nil, err
	}
	for _, p := range pending {
		// The tree skips a v1 leaf (kk cannot read that format): placing
		// it replaces it deliberately.
		if t.Skipped(p.leaf.rel) {
			if _, err := tx.Adopt(p.leaf.rel); err != nil {
				return nil, err
			}
		}
		if err := tx.MigrateLeaf(p.leaf.rel, p.to, p.data); err != nil {
			return nil, err
		}
		changed = true
		res.Placed = append(res.Placed, PlacedLeaf{ID: p.leaf.id, TargetFolder: p.folder, From: p.leaf.rel, To: p.to})
	}
	if !changed {
		res.Noop = true
	}
	return res, nil
}

// placedAlready reports whether every placement of the plan names a leaf
// that already sits at <targetFolder>/<id>.md.
func placedAlready(plan contracts.PlacePlan, others map[string]string) bool {
	for _, p := range plan.Placements {
		folder, err := node.TreeFolder(p.TargetFolder)
		if err != nil || others[p.ID] != store.JoinRel(folder, p.ID+".md") {
			return false
		}
	}
	return true
}

// checkPlacement checks a plan against the v1 leaves and renders each
// placed leaf. It returns the placements to carry out (in plan order), the
// folder summaries to record, and every problem found.
func checkPlacement(k *store.KB, plan contracts.PlacePlan, leaves []*flatLeaf, others map[string]string) ([]placeItem, store.Summaries, []MoveProblem) {
	var problems []MoveProblem
	fail := func(ptr, format string, args ...any) {
		problems = append(problems, MoveProblem{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
	}
	byID := make(map[string]*flatLeaf, len(leaves))
	for _, l := range leaves {
		byID[l.id] = l
	}
	seen := map[string]string{}    // id -> pointer of its placement
	targets := map[string]string{} // target path -> pointer
	created := map[string]bool{"": true}
	var pending []placeItem
	for i, p := range plan.Placements {
		ptr := fmt.Sprintf("/placements/%d", i)
		if prev, dup := seen[p.ID]; dup {
			fail(ptr+"/id", "leaf %s is already placed by %s; place each leaf exactly once", p.ID, prev)
			continue
		}
		seen[p.ID] = ptr
		folder, err := node.TreeFolder(p.TargetFolder)
		if err == nil {
			err = k.CheckFolder(folder)
		}
		if err != nil {
			fail(ptr+"/targetFolder", "%v", err)
			continue
		}
		for d := folder; d != "" && !created[d]; d = store.DirOf(d) {
			created[d] = true
		}
		to := store.JoinRel(folder, p.ID+".md")
		l, ok := byID[p.ID]
		if !ok {
			switch at, placed := others[p.ID]; {
			case placed && at == to:
				// Placed by an earlier run that was cut short.
			case placed:
				fail(ptr+"/id", "leaf %s is not a v1 leaf (it is at %s); only the leaves `kk place inventory` lists are placed", p.ID, at)
			default:
				fail(ptr+"/id", "no v1 leaf has the id %q; `kk place inventory` lists them", p.ID)
			}
			continue
		}
		if prev, dup := targets[to]; dup {
			fail(ptr+"/targetFolder", "%s is also the target of %s", to, prev)
			continue
		}
		targets[to] = ptr
		if to != l.rel {
			if _, err := os.Lstat(k.NodePath(to)); err == nil {
				fail(ptr+"/targetFolder", "%s already exists and kk does not overwrite it", to)
				continue
			} else if !errors.Is(err, fs.ErrNotExist) {
				fail(ptr+"/targetFolder", "%v", err)
				continue
			}
		}
		data, err := placedLeaf(l, to)
		if err != nil {
			fail(ptr+"/id", "%v", err)
			continue
		}
		pending = append(pending, placeItem{leaf: l, folder: folder, to: to, data: data})
	}
	for _, l := range leaves {
		if _, ok := seen[l.id]; !ok {
			fail("/placements", "leaf %s (%s) is not placed; every leaf `kk place inventory` lists must be placed exactly once", l.id, l.rel)
		}
	}
	summaries := store.Summaries{}
	seenFolder := map[string]string{}
	for i, f := range plan.Folders {
		ptr := fmt.Sprintf("/folders/%d", i)
		folder, err := node.TreeFolder(f.Folder)
		if err != nil {
			fail(ptr+"/folder", "%v", err)
			continue
		}
		if prev, dup := seenFolder[folder]; dup {
			fail(ptr+"/folder", "folder %q already has a summary at %s", folder, prev)
			continue
		}
		seenFolder[folder] = ptr
		if !created[folder] {
			fail(ptr+"/folder", "no leaf is placed in folder %q or below it; summaries are for the folders the placements create", folder)
			continue
		}
		summary := strings.TrimSpace(f.Summary)
		switch {
		case summary == "":
			fail(ptr+"/summary", "is blank; write a one-line summary of the folder")
		case strings.ContainsAny(summary, "\r\n"):
			fail(ptr+"/summary", "a folder summary is one line")
		case node.LineProblem(summary) != "":
			fail(ptr+"/summary", "%s", node.LineProblem(summary))
		default:
			summaries[folder] = summary
		}
	}
	return pending, summaries, problems
}

// placedLeaf renders a v1 leaf as it is written at to: schema_version
// becomes 2, every other key and the body keep their bytes. The result must
// read back as a v2 leaf with the same id, so the next migration step can
// convert it.
func placedLeaf(l *flatLeaf, to string) ([]byte, error) {
	items := make([]frontmatter.Item, 0, len(l.doc.Keys())+1)
	hasVersion := false
	for _, key := range l.doc.Keys() {
		v, _ := l.doc.Value(key)
		if key == "schema_version" {
			v, hasVersion = int64(placeToVersion), true
		}
		items = append(items, frontmatter.Item{Key: key, Value: v})
	}
	if !hasVersion {
		items = slices.Insert(items, 0, frontmatter.Item{Key: "schema_version", Value: int64(placeToVersion)})
	}
	data, err := l.doc.Render(items, l.doc.Body(), frontmatter.Emit)
	if err != nil {
		return nil, fmt.Errorf("leaf %s: %v", l.rel, err)
	}
	n, err := node.Parse(to, data)
	if err != nil {
		return nil, fmt.Errorf("leaf %s would not be a valid v2 leaf once placed (%v); fix it in place, then apply the plan again", l.rel, err)
	}
	if n.Format != placeToVersion || n.ID != l.id {
		return nil, fmt.Errorf("leaf %s does not read back as the v2 leaf %s once placed", l.rel, l.id)
	}
	return data, nil
}
