package migrate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/progress"
)

// Schema migrations bring a tree written by an older kenkeep up to the leaf
// format kk writes. Version 1 is kenkeep's flat layout (nodes/practice/ and
// nodes/map/), version 2 its topical tree with schema_version/id/kind/summary
// keys, version 3 the OKF concept document with kk_ keys.

// TargetSchemaVersion is the leaf schema version migrations lead to.
const TargetSchemaVersion = node.SchemaVersion

// MigrationStep is one hop of the migration chain and the commands that
// carry it out.
type MigrationStep struct {
	ID         string   `json:"id"`
	From       int      `json:"from"`
	To         int      `json:"to"`
	Primitives []string `json:"primitives"`
}

// migrationSteps is the registry of every known step, in order. Each step's
// commands refuse to run unless the tree is at the step's From version.
var migrationSteps = []MigrationStep{
	{ID: "flat-to-tree", From: 1, To: 2, Primitives: []string{"place inventory", "place apply"}},
	{ID: "okf-v3", From: 2, To: 3, Primitives: []string{"migrate okf-v3"}},
}

// Commands are the step's primitives as kk commands ("kk place apply").
func (s MigrationStep) Commands() string {
	cmds := make([]string, len(s.Primitives))
	for i, p := range s.Primitives {
		cmds[i] = "kk " + p
	}
	return strings.Join(cmds, ", then ")
}

// ErrNewerSchema means the tree was written by a newer tool than this kk.
var ErrNewerSchema = errors.New("the knowledge tree is newer than this kk")

// ErrStepOrder means a migration step was asked for on a tree that is not
// at the version the step converts from.
var ErrStepOrder = errors.New("this migration step does not apply to the tree yet")

// PlanMigration returns the steps that take a tree at schema version
// current to TargetSchemaVersion, in the order to run them. current 0 (no
// leaves) and TargetSchemaVersion need no steps.
func PlanMigration(current int) ([]MigrationStep, error) {
	if current > TargetSchemaVersion {
		return nil, fmt.Errorf("%w: its leaves are at schema version %d and kk reads up to version %d; upgrade kk", ErrNewerSchema, current, TargetSchemaVersion)
	}
	plan := []MigrationStep{}
	if current == 0 {
		return plan, nil
	}
	for v := current; v < TargetSchemaVersion; {
		i := slices.IndexFunc(migrationSteps, func(s MigrationStep) bool { return s.From == v })
		if i < 0 {
			return nil, fmt.Errorf("no migration step leads from schema version %d toward version %d", v, TargetSchemaVersion)
		}
		s := migrationSteps[i]
		plan = append(plan, MigrationStep{ID: s.ID, From: s.From, To: s.To, Primitives: slices.Clone(s.Primitives)})
		v = s.To
	}
	return plan, nil
}

// legacyBuckets are the two folders of kenkeep's flat (v1) layout.
var LegacyBuckets = []string{"practice", "map"}

// DetectSchemaVersion reports the schema version the tree is stored at: the
// lowest kk_schema_version (or legacy schema_version) over its leaves, so a
// half-converted tree advances from its oldest leaf. A leaf without a
// readable version counts as version 1 when it sits in kenkeep's flat layout
// (nodes/practice/ or nodes/map/ with no index.md), and is otherwise left to
// the tree reader to report. 0 means there is nothing to migrate: no nodes/
// folder, or no leaf that declares a version.
func DetectSchemaVersion(k *store.KB) (int, error) {
	l, err := k.Scan()
	if err != nil {
		return 0, err
	}
	files, indexDirs := l.Files, l.IndexDirs
	versions := make([]int, len(files))
	errs := make([]error, len(files))
	store.Parallel(len(files), func(i int) {
		versions[i], errs[i] = leafSchemaVersion(files[i].Abs)
	})
	lowest := 0
	for i, f := range files {
		if bv, ok := errors.AsType[*badVersion](errs[i]); ok {
			v := fmt.Sprint(bv.v)
			if str, ok := bv.v.(string); ok {
				v = fmt.Sprintf("the string %q, not a number", str)
			}
			return 0, fmt.Errorf("%w: %s: %s is %s; fix it by hand (a leaf kk writes has kk_schema_version: 3)", ErrUnknownVersion, k.Rel(f.Abs), bv.key, v)
		}
		if errs[i] != nil {
			return 0, fmt.Errorf("reading %s: %w", k.Rel(f.Abs), errs[i])
		}
		v := versions[i]
		if v == 0 {
			if dir := store.DirOf(f.Rel); slices.Contains(LegacyBuckets, dir) && !indexDirs[dir] {
				v = 1
			}
		}
		if v > 0 && (lowest == 0 || v < lowest) {
			lowest = v
		}
	}
	return lowest, nil
}

// ErrUnknownVersion is a leaf that declares a schema version no kk or
// kenkeep wrote (0, or not a number): no migration leads from it, as
// kenkeep's migrate status also says.
var ErrUnknownVersion = errors.New("a leaf declares a schema version no migration converts")

// badVersion is a schema version key whose value is no version.
type badVersion struct {
	key string
	v   any
}

func (e *badVersion) Error() string { return fmt.Sprintf("%s is %v", e.key, e.v) }

// leafSchemaVersion reads the version a leaf declares, or 0 when it
// declares none; a version that is not a whole number above 0 is a
// *badVersion.
func leafSchemaVersion(file string) (int, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	doc, err := frontmatter.Parse(src)
	if err != nil {
		return 0, nil
	}
	for _, key := range []string{node.KeySchemaVersion, "schema_version"} {
		if v, ok := doc.Value(key); ok {
			if i, isInt := v.(int64); isInt && i > 0 {
				return int(i), nil
			}
			return 0, &badVersion{key: key, v: v}
		}
	}
	return 0, nil
}

// Collision is a leaf whose body already had a "# Citations" heading of
// its own; after migration the generated section repeats it. (A
// hand-written "# Related" section takes the generated links under its
// heading: node.RenderSections.)
type Collision struct {
	ID       string   `json:"id"`
	Path     string   `json:"path"` // relative to the repository root
	Headings []string `json:"headings"`
}

// MigrateResult says what MigrateOKFv3 did. Paths are relative to the
// repository root.
type MigrateResult struct {
	// Detected is the tree's schema version before the run (0: no leaves).
	Detected int `json:"-"`
	// Noop is set when the tree was already at version 3 or empty.
	Noop bool `json:"nothing_to_do"`
	// Converted counts the v2 leaves rewritten as v3.
	Converted int `json:"converted"`
	// FolderSummaries counts the summaries harvested from old index.md
	// front matter and added to FOLDER_SUMMARIES.md.
	FolderSummaries int         `json:"folder_summaries"`
	Collisions      []Collision `json:"collisions"`
	IndexChanged    []string    `json:"index_changed"`
	IndexRemoved    []string    `json:"index_removed"`
}

// writeFile replaces one file of a private copy (MigrateCopy); tests swap
// it to simulate a failing disk.
var writeFile = atomicfile.Write

// v3Keys are the keys a v2 leaf must not carry: the conversion writes them
// from the v2 fields and would silently drop the leaf's own values.
var v3Keys = []string{
	node.KeyType, node.KeyDescription, node.KeySchemaVersion, node.KeyID,
	node.KeyDerivedFrom, node.KeyRelatesTo, node.KeyDependsOn, node.KeyConfidence,
}

// v2FieldKeys are the keys the conversion maps to v3 keys.
var v2FieldKeys = []string{"schema_version", "id", "title", "kind", "summary", "tags", "derived_from", "relates_to", "depends_on", "confidence"}

type plannedFile struct {
	Rel  string // relative to the repository root
	Abs  string
	data []byte
}

// MigrateOKFv3 rewrites every v2 leaf as a v3 leaf, moves the folder
// summaries of the old index.md files into FOLDER_SUMMARIES.md (entries
// already there win) and regenerates every index file. It needs a tree at
// version 2; a tree already at version 3, or with no leaves, is left alone
// and reported as Noop. Every new file is computed and read back
// before the first one is written.
func MigrateOKFv3(ctx context.Context, k *store.KB, cmd string) (*MigrateResult, error) {
	var res *MigrateResult
	done, err := txn.Update(ctx, k, txn.Meta{Source: "cli", Command: cmd}, func(tx *txn.Tx) error {
		var err error
		res, err = migrateOKFv3(ctx, tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	if done.Index != nil {
		res.IndexChanged, res.IndexRemoved = done.Index.Changed, done.Index.Removed
	}
	return res, nil
}

// migrateOKFv3 stages the converted leaves as raw files (the conversion
// keeps every byte it does not change) and asks for the index files; the
// transaction writes all of it or none.
func migrateOKFv3(ctx context.Context, tx *txn.Tx) (*MigrateResult, error) {
	k := tx.KB()
	res := &MigrateResult{Collisions: []Collision{}, IndexChanged: []string{}, IndexRemoved: []string{}}
	v, err := DetectSchemaVersion(k)
	if err != nil {
		return nil, err
	}
	res.Detected = v
	switch {
	case v == 0 || v == TargetSchemaVersion:
		res.Noop = true
		return res, nil
	case v > TargetSchemaVersion:
		_, err := PlanMigration(v)
		return nil, err
	case v < 2:
		plan, err := PlanMigration(v)
		if err != nil {
			return nil, err
		}
		first := plan[0]
		return nil, fmt.Errorf("%w: kk migrate okf-v3 converts schema version 2, but the tree is at version %d; run step %s first (%s), then kk migrate okf-v3 (`kk migrate status` shows the plan)",
			ErrStepOrder, v, first.ID, first.Commands())
	}
	if _, err := k.LoadConfig(); err != nil {
		return nil, err
	}
	task := progress.Start(ctx, "migrate: reading leaves", 0)
	t, err := k.ReadTree(store.LoadOptions{Progress: task})
	task.Done()
	if err == nil {
		// A tree converts whole or not at all: a leaf left behind would
		// keep the tree at version 2.
		err = t.Err()
	}
	if err != nil {
		return nil, err
	}
	redirects, err := k.ReadRedirects()
	if err != nil {
		return nil, err
	}
	links := t.LinkResolver(redirects)
	files, err := planOKFv3(k, t, links, res)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, f := range files {
		rel, err := filepath.Rel(k.Dir, f.Abs)
		if err != nil {
			return nil, err
		}
		rel = filepath.ToSlash(rel)
		if leaf, ok := strings.CutPrefix(rel, "nodes/"); ok {
			if err := tx.MigrateLeaf(leaf, leaf, f.data); err != nil {
				return nil, err
			}
			continue
		}
		tx.WriteFile(rel, f.data)
	}
	tx.Regenerate()
	return res, nil
}

// convertLeaf renders one v2 leaf as v3 and checks that the result reads
// back as v3 with every field and unknown key intact. It returns the
// headings that collide with the generated sections.
func convertLeaf(k *store.KB, rel string, resolve node.Resolver) (plannedFile, []string, error) {
	abs := k.NodePath(rel)
	src, err := os.ReadFile(abs)
	if err != nil {
		return plannedFile{}, nil, &node.Error{Path: rel, Msg: err.Error()}
	}
	n, err := node.Parse(rel, src)
	if err != nil {
		return plannedFile{}, nil, err
	}
	if n.Format != 2 {
		return plannedFile{}, nil, &node.Error{Path: rel, Msg: "changed while being migrated; run kk migrate okf-v3 again"}
	}
	orig, err := frontmatter.Parse(src)
	if err != nil {
		return plannedFile{}, nil, &node.Error{Path: rel, Msg: frontmatter.Describe(err)}
	}
	for _, key := range v3Keys {
		if _, ok := orig.Value(key); ok {
			return plannedFile{}, nil, &node.Error{Path: rel, Field: key,
				Msg: "a v2 leaf (schema_version: 2) cannot also carry this v3 key; the conversion writes it from the v2 fields, so remove it or move its value into the v2 field"}
		}
	}
	data, err := n.Render(resolve)
	if err != nil {
		return plannedFile{}, nil, &node.Error{Path: rel, Msg: fmt.Sprintf("rendering as v3: %v", err)}
	}
	if len(data) > node.MaxSize {
		return plannedFile{}, nil, &node.Error{Path: rel, Msg: fmt.Sprintf("the converted leaf would be %d bytes; the limit is %d", len(data), node.MaxSize)}
	}
	if err := checkConverted(n, orig, data); err != nil {
		return plannedFile{}, nil, err
	}
	var headings []string
	for _, h := range node.HasUnmarkedSections(string(n.Body)) {
		if !slices.Contains(headings, h) {
			headings = append(headings, h)
		}
	}
	return plannedFile{Rel: k.Rel(abs), Abs: abs, data: data}, headings, nil
}

// checkConverted parses a converted leaf back and compares it with the v2
// leaf it came from.
func checkConverted(v2 *node.Node, orig *frontmatter.Doc, data []byte) error {
	fail := func(field, msg string) error { return &node.Error{Path: v2.Path, Field: field, Msg: msg} }
	back, err := node.Parse(v2.Path, data)
	if err != nil {
		return fmt.Errorf("the converted leaf does not read back as v3: %w", err)
	}
	if back.Format != node.SchemaVersion {
		return fail(node.KeySchemaVersion, "the converted leaf does not declare version 3")
	}
	for _, c := range []struct {
		field    string
		got, was string
	}{
		{node.KeyType, back.Type, v2.Type}, {node.KeyTitle, back.Title, v2.Title},
		{node.KeyDescription, back.Description, v2.Description}, {node.KeyID, back.ID, v2.ID},
		{node.KeyConfidence, back.Confidence, v2.Confidence},
	} {
		if c.got != c.was {
			return fail(c.field, fmt.Sprintf("converted to %q instead of %q", c.got, c.was))
		}
	}
	for _, c := range []struct {
		field    string
		got, was []string
	}{
		{node.KeyTags, back.Tags, v2.Tags}, {node.KeyDerivedFrom, back.DerivedFrom, v2.DerivedFrom},
		{node.KeyRelatesTo, back.RelatesTo, v2.RelatesTo}, {node.KeyDependsOn, back.DependsOn, v2.DependsOn},
	} {
		if !slices.Equal(c.got, c.was) {
			return fail(c.field, fmt.Sprintf("converted to %q instead of %q", c.got, c.was))
		}
	}
	backDoc, err := frontmatter.Parse(data)
	if err != nil {
		return fail("", frontmatter.Describe(err))
	}
	for _, key := range orig.Keys() {
		if slices.Contains(v2FieldKeys, key) {
			continue
		}
		was, _ := orig.Value(key)
		got, ok := backDoc.Value(key)
		if !ok || !frontmatter.Equal(got, was) {
			return fail(key, "was not carried over unchanged")
		}
	}
	return nil
}

// harvestSummaries collects the summary of every old index.md's front
// matter ("" for nodes/index.md) that FOLDER_SUMMARIES.md does not already
// have, and returns the merged file and how many were added.
func harvestSummaries(k *store.KB, t *store.Tree) ([]byte, int, error) {
	existing, err := store.ReadSummaries(k.SummariesPath())
	if err != nil {
		return nil, 0, err
	}
	dirs := make([]string, 0, len(t.IndexDirs))
	for d := range t.IndexDirs {
		dirs = append(dirs, d)
	}
	store.SortLocale(dirs)
	added := 0
	for _, d := range dirs {
		p := k.NodePath(path.Join(d, "index.md"))
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, 0, err
		}
		doc, err := frontmatter.Parse(src)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %s; its folder summary cannot be read (the file is regenerated: fix it, or delete it to drop the summary)", k.Rel(p), frontmatter.Describe(err))
		}
		v, ok := doc.Value("summary")
		if !ok || v == nil {
			continue
		}
		s, isStr := v.(string)
		if !isStr {
			return nil, 0, fmt.Errorf("%s: field \"summary\" must be a string (the folder's one-line summary)", k.Rel(p))
		}
		s = strings.Join(strings.Fields(s), " ")
		if _, have := existing[d]; have || s == "" {
			continue
		}
		existing[d] = s
		added++
	}
	if added == 0 {
		return nil, 0, nil
	}
	data, err := store.RenderSummaries(existing)
	if err != nil {
		return nil, 0, err
	}
	return data, added, nil
}

// planOKFv3 computes (without writing) the v3 bytes of every v2 leaf of t
// and the FOLDER_SUMMARIES.md that gains the summaries of the old index.md
// files, and records what it found in res.
func planOKFv3(k *store.KB, t *store.Tree, resolve node.Resolver, res *MigrateResult) ([]plannedFile, error) {
	var files []plannedFile
	var problems []error
	for _, leaf := range t.Leaves {
		if leaf.Format != 2 {
			continue
		}
		f, headings, err := convertLeaf(k, leaf.Path, resolve)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		files = append(files, f)
		if len(headings) > 0 {
			res.Collisions = append(res.Collisions, Collision{ID: leaf.ID, Path: f.Rel, Headings: headings})
		}
	}
	if len(problems) > 0 {
		return nil, &store.TreeError{Problems: problems}
	}
	res.Converted = len(files)
	summaries, added, err := harvestSummaries(k, t)
	if err != nil {
		return nil, err
	}
	if added > 0 {
		files = append(files, plannedFile{Rel: k.Rel(k.SummariesPath()), Abs: k.SummariesPath(), data: summaries})
	}
	res.FolderSummaries = added
	return files, nil
}
