package migrate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"

	"github.com/kk-project/kk/internal/checks"
	"github.com/kk-project/kk/internal/frontmatter"
)

// drupalPack is kenkeep's published Drupal pack (schema version 2), kept
// beside the repository in shared/fixtures.
// © 2026 Mateu Aguiló Bosch, MIT licence (its LICENSE file is in that folder).
const drupalPack = "../../../shared/fixtures/kenkeep-pack-drupal"

// migInit creates an initialised knowledge base in a temporary folder.
func migInit(t *testing.T) *store.KB {
	t.Helper()
	k := store.New(t.TempDir())
	if _, err := txn.Init(context.Background(), k, store.InitOptions{Version: "test", Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Command: "test"}); err != nil {
		t.Fatal(err)
	}
	return k
}

// migWriteTree writes files (paths relative to nodes/) into k's tree.
func migWriteTree(t *testing.T, k *store.KB, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := k.NodePath(rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// migCopyDir copies the folder src into dst, which may exist.
func migCopyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// migSnapshot reads every file of the knowledge base that git would track:
// everything but .state/, except .state/installed-version.
func migSnapshot(t *testing.T, k *store.KB) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(k.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasPrefix(p, k.StateDir()+string(filepath.Separator)) && p != k.InstalledPath() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[k.Rel(p)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func migDiff(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	var diffs []string
	for _, p := range slices.Sorted(maps.Keys(before)) {
		if a, ok := after[p]; !ok {
			diffs = append(diffs, "removed "+p)
		} else if a != before[p] {
			diffs = append(diffs, "changed "+p)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(after)) {
		if _, ok := before[p]; !ok {
			diffs = append(diffs, "added "+p)
		}
	}
	if len(diffs) > 0 {
		t.Errorf("%s changed files:\n  %s", what, strings.Join(diffs, "\n  "))
	}
}

func TestPlanMigration(t *testing.T) {
	for _, tc := range []struct {
		current int
		want    []string
		err     error
	}{
		{0, []string{}, nil},
		{1, []string{"flat-to-tree 1->2 place inventory,place apply", "okf-v3 2->3 migrate okf-v3"}, nil},
		{2, []string{"okf-v3 2->3 migrate okf-v3"}, nil},
		{3, []string{}, nil},
		{4, nil, ErrNewerSchema},
	} {
		plan, err := PlanMigration(tc.current)
		if !errors.Is(err, tc.err) {
			t.Errorf("PlanMigration(%d) error = %v, want %v", tc.current, err, tc.err)
			continue
		}
		if tc.err != nil {
			continue
		}
		got := []string{}
		for _, s := range plan {
			got = append(got, fmt.Sprintf("%s %d->%d %s", s.ID, s.From, s.To, strings.Join(s.Primitives, ",")))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("PlanMigration(%d) = %q, want %q", tc.current, got, tc.want)
		}
	}
	if _, err := PlanMigration(-1); err == nil || !strings.Contains(err.Error(), "no migration step leads from schema version -1") {
		t.Errorf("a gap in the registry must fail loudly, got %v", err)
	}
}

const (
	migV1Leaf = "---\nschema_version: 1\nid: practice-a\ntitle: A\nkind: practice\ntags: []\nsummary: s\nrelates_to: []\n---\nbody\n"
	migV2Leaf = "---\nschema_version: 2\nid: %s\ntitle: T\nkind: practice\nsummary: s\nconfidence: high\n---\nbody\n"
	migV3Leaf = "---\ntype: practice\ntitle: T\ndescription: s\ntags: []\nkk_schema_version: 3\nkk_id: %s\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\n---\nbody\n"
)

func TestDetectSchemaVersion(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  int
	}{
		{"no leaves", map[string]string{}, 0},
		{"v1 flat layout", map[string]string{"practice/practice-a.md": migV1Leaf}, 1},
		{"flat layout leaf without a version", map[string]string{"map/map-a.md": "---\ntitle: A\n---\nbody\n"}, 1},
		{"unversioned leaf outside the flat layout", map[string]string{"x/map-a.md": "---\ntitle: A\n---\nbody\n"}, 0},
		{"flat layout folder with an index", map[string]string{"map/index.md": "# map\n", "map/map-a.md": "---\ntitle: A\n---\n"}, 0},
		{"v3 leaf in a folder named map", map[string]string{"map/map-a.md": fmt.Sprintf(migV3Leaf, "practice-a")}, 3},
		{"v1 leaf in a topical folder", map[string]string{"cli/practice-a.md": migV1Leaf, "cli/practice-b.md": fmt.Sprintf(migV2Leaf, "practice-b")}, 1},
		{"v2 tree", map[string]string{"cli/practice-a.md": fmt.Sprintf(migV2Leaf, "practice-a")}, 2},
		{"half converted", map[string]string{"practice-a.md": fmt.Sprintf(migV2Leaf, "practice-a"), "practice-b.md": fmt.Sprintf(migV3Leaf, "practice-b")}, 2},
		{"v3 tree with a broken leaf", map[string]string{"practice-b.md": fmt.Sprintf(migV3Leaf, "practice-b"), "broken.md": "---\nx: [\n---\n"}, 3},
		{"hidden folders are not the tree", map[string]string{".old/practice-a.md": migV1Leaf, "practice-b.md": fmt.Sprintf(migV3Leaf, "practice-b")}, 3},
		{"newer than kk", map[string]string{"practice-b.md": strings.Replace(fmt.Sprintf(migV3Leaf, "practice-b"), "kk_schema_version: 3", "kk_schema_version: 4", 1)}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := store.New(t.TempDir())
			migWriteTree(t, k, tc.files)
			if err := os.MkdirAll(k.NodesDir(), 0o755); err != nil {
				t.Fatal(err)
			}
			got, err := DetectSchemaVersion(k)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("DetectSchemaVersion() = %d, want %d", got, tc.want)
			}
		})
	}
	t.Run("no nodes folder", func(t *testing.T) {
		got, err := DetectSchemaVersion(store.New(t.TempDir()))
		if err != nil || got != 0 {
			t.Errorf("DetectSchemaVersion() = %d, %v; want 0, nil", got, err)
		}
	})
}

// drupalLeaf is what the test knows about a leaf from its raw front matter,
// read without the code under test.
type drupalLeaf struct {
	path, id, typ, title, description, confidence string
	tags, derivedFrom, relatesTo, dependsOn       []string
	body                                          string
}

func migStrings(t *testing.T, file string, doc *frontmatter.Doc, key string) []string {
	t.Helper()
	v, ok := doc.Value(key)
	if !ok {
		return []string{}
	}
	items, ok := v.([]any)
	if !ok {
		t.Fatalf("%s: %s is %T", file, key, v)
	}
	out := []string{}
	for _, it := range items {
		out = append(out, it.(string))
	}
	return out
}

func migString(doc *frontmatter.Doc, key string) string {
	v, _ := doc.Value(key)
	s, _ := v.(string)
	return s
}

// readDrupalPack reads the fixture's leaves (by path under knowledge/) and
// its folder summaries (by folder) straight from the YAML.
func readDrupalPack(t *testing.T, dir string) (map[string]drupalLeaf, map[string]string) {
	t.Helper()
	leaves := map[string]drupalLeaf{}
	summaries := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		doc, err := frontmatter.Parse(src)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		if path.Base(rel) == "index.md" {
			if s := migString(doc, "summary"); s != "" {
				summaries[strings.TrimSuffix(path.Dir(rel), ".")] = strings.Join(strings.Fields(s), " ")
			}
			return nil
		}
		if v, _ := doc.Value("schema_version"); v != int64(2) {
			return fmt.Errorf("%s: fixture leaf is not schema_version 2 but %v", rel, v)
		}
		leaves[rel] = drupalLeaf{
			path: rel, id: migString(doc, "id"), typ: migString(doc, "kind"), title: migString(doc, "title"),
			description: migString(doc, "summary"), confidence: migString(doc, "confidence"),
			tags: migStrings(t, rel, doc, "tags"), derivedFrom: migStrings(t, rel, doc, "derived_from"),
			relatesTo: migStrings(t, rel, doc, "relates_to"), dependsOn: migStrings(t, rel, doc, "depends_on"),
			body: string(doc.Body()),
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return leaves, summaries
}

// TestMigrateOKFv3Drupal migrates kenkeep's real Drupal pack and checks
// that every leaf keeps its id, fields, edges and body, that the folder
// summaries move into FOLDER_SUMMARIES.md, that lint and the index check
// pass, and that a second run and a rebuild change no byte.
func TestMigrateOKFv3Drupal(t *testing.T) {
	knowledge := filepath.Join(drupalPack, "knowledge")
	if _, err := os.Stat(knowledge); err != nil {
		t.Fatalf("the Drupal pack fixture is missing at %s (the tests need shared/ beside the repository, as CI has it): %v", drupalPack, err)
	}
	ctx := context.Background()
	before, folderSummaries := readDrupalPack(t, knowledge)
	if len(before) != 141 || len(folderSummaries) != 26 {
		t.Fatalf("fixture has %d leaves and %d folder summaries; the test expects 141 and 26", len(before), len(folderSummaries))
	}
	pathByID := map[string]string{}
	for _, l := range before {
		pathByID[l.id] = l.path
	}

	k := migInit(t)
	migCopyDir(t, knowledge, k.NodesDir())
	if v, err := DetectSchemaVersion(k); err != nil || v != 2 {
		t.Fatalf("DetectSchemaVersion() = %d, %v before migration; want 2", v, err)
	}
	res, err := MigrateOKFv3(ctx, k, "test")
	if err != nil {
		t.Fatal(err)
	}
	if res.Noop || res.Converted != 141 || res.FolderSummaries != 26 || len(res.Collisions) != 0 {
		t.Fatalf("result = %+v; want 141 converted, 26 summaries, no collisions", res)
	}
	if v, err := DetectSchemaVersion(k); err != nil || v != 3 {
		t.Fatalf("DetectSchemaVersion() = %d, %v after migration; want 3", v, err)
	}

	tree, err := k.ReadTree(store.LoadOptions{Bodies: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Leaves) != len(before) {
		t.Fatalf("%d leaves after migration, %d before", len(tree.Leaves), len(before))
	}
	for _, n := range tree.Leaves {
		was, ok := before[n.Path]
		if !ok {
			t.Errorf("%s: a leaf that was not in the fixture", n.Path)
			continue
		}
		check := func(field string, got, want any) {
			t.Helper()
			if !frontmatter.Equal(got, want) {
				t.Errorf("%s: %s = %q, want %q", n.Path, field, got, want)
			}
		}
		check("format", n.Format, 3)
		check("kk_id", n.ID, was.id)
		check("type", n.Type, was.typ)
		check("title", n.Title, was.title)
		check("description", n.Description, was.description)
		check("kk_confidence", n.Confidence, was.confidence)
		check("tags", n.Tags, was.tags)
		check("kk_derived_from", n.DerivedFrom, was.derivedFrom)
		check("kk_relates_to", n.RelatesTo, was.relatesTo)
		check("kk_depends_on", n.DependsOn, was.dependsOn)
		body := string(n.Body)
		kept := strings.TrimRight(was.body, " \t\r\n")
		if !strings.HasPrefix(body, kept) {
			t.Errorf("%s: the body does not start with the original body", n.Path)
			continue
		}
		generated := body[len(kept):]
		for _, id := range was.relatesTo {
			if line := fmt.Sprintf("- Related: [%s](/%s)\n", id, pathByID[id]); !strings.Contains(generated, line) {
				t.Errorf("%s: generated Related section lacks %q", n.Path, line)
			}
		}
		for _, id := range was.dependsOn {
			if line := fmt.Sprintf("- Depends on: [%s](/%s)\n", id, pathByID[id]); !strings.Contains(generated, line) {
				t.Errorf("%s: generated Related section lacks %q", n.Path, line)
			}
		}
		for i, ref := range was.derivedFrom {
			if line := fmt.Sprintf("[%d] [%s](%s)\n", i+1, ref, ref); !strings.Contains(generated, line) {
				t.Errorf("%s: generated Citations section lacks %q", n.Path, line)
			}
		}
	}

	summaries, err := store.ReadSummaries(k.SummariesPath())
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(summaries, store.Summaries(folderSummaries)) {
		t.Errorf("FOLDER_SUMMARIES.md holds %v\nwant %v", summaries, folderSummaries)
	}

	check, err := indexfiles.Check(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if len(check.Changed)+len(check.Removed)+len(check.MissingSummaries) > 0 {
		t.Errorf("index rebuild --check after migration: changed %v, removed %v, folders without summary %v", check.Changed, check.Removed, check.MissingSummaries)
	}
	lint, err := checks.Lint(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if lint.Errors > 0 {
		t.Errorf("lint after migration found %d error(s): %+v", lint.Errors, lint.Items)
	}

	// Idempotence: a second migration and a rebuild change nothing.
	snap := migSnapshot(t, k)
	again, err := MigrateOKFv3(ctx, k, "test")
	if err != nil {
		t.Fatal(err)
	}
	if !again.Noop || again.Detected != 3 || again.Converted != 0 {
		t.Errorf("second run = %+v; want nothing to do at version 3", again)
	}
	if _, err := txn.Rebuild(ctx, k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		t.Fatal(err)
	}
	migDiff(t, "a second migration and a rebuild", snap, migSnapshot(t, k))
}

// migSmallTree is a hand-written v2 tree: unknown keys, a body that already
// has its own Related heading, old index.md summaries (root included), and
// edges across folders.
var migSmallTree = map[string]string{
	"index.md":       "---\nschema_version: 2\nnodes_hash: 'sha256:00'\nnode_count: 2\nsummary: the whole tree\n---\n# old root\n",
	"cli/index.md":   "---\nschema_version: 2\nsummary: |\n  command line\n  conventions\n---\n# old cli index\n",
	"store/index.md": "---\nschema_version: 2\nsummary: storage layer\n---\n# old store index\n",
	"cli/practice-exit-codes.md": `---
schema_version: 2
id: practice-exit-codes
title: Exit codes are decided in one place
kind: practice
tags:
  - cli
derived_from:
  - docs/cli.md
relates_to:
  - map-store
depends_on: []
confidence: high
summary: Main maps errors to exit codes; nothing else exits.
x_owner: platform-team
x_review:
  due: 2026-01-01
  by: [ann, bob]
---

Return errors; never call os.Exit below main.

# Related

- the store, which never exits either
`,
	"store/map-store.md": `---
schema_version: 2
id: map-store
title: The store
kind: map
summary: ''
confidence: low
---
Where leaves are kept.
`,
}

const migWantExitCodes = `---
type: practice
title: Exit codes are decided in one place
description: Main maps errors to exit codes; nothing else exits.
tags:
  - cli
kk_schema_version: 3
kk_id: practice-exit-codes
kk_derived_from:
  - docs/cli.md
kk_relates_to:
  - map-store
kk_depends_on: []
kk_confidence: high
x_owner: platform-team
x_review:
  by:
    - ann
    - bob
  due: '2026-01-01'
---

Return errors; never call os.Exit below main.

# Related

- the store, which never exits either

<!-- kk:related:start -->
- Related: [map-store](/store/map-store.md)
<!-- kk:related:end -->

<!-- kk:citations:start -->
# Citations

[1] [docs/cli.md](docs/cli.md)
<!-- kk:citations:end -->
`

const migWantStore = `---
type: map
title: The store
description: ''
tags: []
kk_schema_version: 3
kk_id: map-store
kk_derived_from: []
kk_relates_to: []
kk_depends_on: []
kk_confidence: low
---
Where leaves are kept.
`

func TestMigrateOKFv3Small(t *testing.T) {
	ctx := context.Background()
	k := migInit(t)
	migWriteTree(t, k, migSmallTree)
	// An entry already in FOLDER_SUMMARIES.md wins over the old index.md.
	data, err := store.RenderSummaries(store.Summaries{"store": "where data lives"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.SummariesPath(), data, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := MigrateOKFv3(ctx, k, "test")
	if err != nil {
		t.Fatal(err)
	}
	// The hand-written "# Related" section takes the generated links (one
	// Related section): it is no collision.
	var want []Collision
	if res.Converted != 2 || res.FolderSummaries != 2 || !slices.EqualFunc(res.Collisions, want, func(a, b Collision) bool {
		return a.ID == b.ID && a.Path == b.Path && slices.Equal(a.Headings, b.Headings)
	}) {
		t.Errorf("result = %+v", res)
	}
	for rel, want := range map[string]string{"cli/practice-exit-codes.md": migWantExitCodes, "store/map-store.md": migWantStore} {
		got, err := os.ReadFile(k.NodePath(rel))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s =\n%s\nwant\n%s", rel, got, want)
		}
	}
	summaries, err := store.ReadSummaries(k.SummariesPath())
	if err != nil {
		t.Fatal(err)
	}
	if wantS := (store.Summaries{"": "the whole tree", "cli": "command line conventions", "store": "where data lives"}); !maps.Equal(summaries, wantS) {
		t.Errorf("summaries = %v, want %v", summaries, wantS)
	}
	for _, rel := range []string{"index.md", "cli/index.md", "store/index.md"} {
		src, err := os.ReadFile(k.NodePath(rel))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "schema_version: 2") || strings.Contains(string(src), "# old") {
			t.Errorf("%s was not regenerated:\n%s", rel, src)
		}
	}
	if entry, err := os.ReadFile(k.EntryPath()); err != nil || !strings.Contains(string(entry), "node_count: 2") {
		t.Errorf("ENTRY.md was not regenerated (%v):\n%s", err, entry)
	}
	snap := migSnapshot(t, k)
	again, err := MigrateOKFv3(ctx, k, "test")
	if err != nil || !again.Noop {
		t.Fatalf("second run = %+v, %v; want nothing to do", again, err)
	}
	if _, err := txn.Rebuild(ctx, k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		t.Fatal(err)
	}
	migDiff(t, "a second migration and a rebuild", snap, migSnapshot(t, k))
}

func TestMigrateOKFv3Noop(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    map[string]string
		detected int
	}{
		{"empty tree", map[string]string{}, 0},
		{"v3 tree", map[string]string{"practice-b.md": fmt.Sprintf(migV3Leaf, "practice-b")}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := migInit(t)
			migWriteTree(t, k, tc.files)
			snap := migSnapshot(t, k)
			res, err := MigrateOKFv3(context.Background(), k, "test")
			if err != nil {
				t.Fatal(err)
			}
			if !res.Noop || res.Detected != tc.detected {
				t.Errorf("result = %+v; want nothing to do, detected %d", res, tc.detected)
			}
			migDiff(t, "a migration with nothing to do", snap, migSnapshot(t, k))
		})
	}
}

// TestMigrateOKFv3RefusesAndWritesNothing covers input the migration must
// reject before it writes anything.
func TestMigrateOKFv3RefusesAndWritesNothing(t *testing.T) {
	v2 := func(id, extra string) string {
		return strings.Replace(fmt.Sprintf(migV2Leaf, id), "confidence: high\n", "confidence: high\n"+extra, 1)
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		is    error
		msg   []string
	}{
		{"v1 tree", map[string]string{"practice/practice-a.md": migV1Leaf},
			ErrStepOrder, []string{"at version 1", "run step flat-to-tree first (kk place inventory, then kk place apply)"}},
		{"newer tree", map[string]string{"practice-b.md": strings.Replace(fmt.Sprintf(migV3Leaf, "practice-b"), "kk_schema_version: 3", "kk_schema_version: 4", 1)},
			ErrNewerSchema, []string{"schema version 4", "upgrade kk"}},
		{"v2 leaf carrying a v3 key", map[string]string{"practice-a.md": v2("practice-a", "description: other\n"), "practice-b.md": fmt.Sprintf(migV2Leaf, "practice-b")},
			nil, []string{`practice-a.md: field "description": a v2 leaf (schema_version: 2) cannot also carry this v3 key`}},
		{"extra key that is invalid in v3", map[string]string{"practice-a.md": fmt.Sprintf(migV2Leaf, "practice-a"), "practice-b.md": v2("practice-b", "status: finished\n")},
			nil, []string{"the converted leaf does not read back as v3", `practice-b.md: field "status"`}},
		{"invalid v2 leaf", map[string]string{"practice-a.md": fmt.Sprintf(migV2Leaf, "practice-a"), "practice-b.md": strings.Replace(fmt.Sprintf(migV2Leaf, "practice-b"), "confidence: high", "confidence: sure", 1)},
			nil, []string{`practice-b.md: field "confidence": is "sure"`}},
		{"non-string folder summary", map[string]string{"cli/practice-a.md": fmt.Sprintf(migV2Leaf, "practice-a"), "cli/index.md": "---\nsummary: [a, b]\n---\n"},
			nil, []string{`.ai/kenkeep/nodes/cli/index.md: field "summary" must be a string`}},
		{"unreadable folder index", map[string]string{"cli/practice-a.md": fmt.Sprintf(migV2Leaf, "practice-a"), "cli/index.md": "---\nsummary: [\n---\n"},
			nil, []string{".ai/kenkeep/nodes/cli/index.md:", "delete it to drop the summary"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := migInit(t)
			migWriteTree(t, k, tc.files)
			snap := migSnapshot(t, k)
			_, err := MigrateOKFv3(context.Background(), k, "test")
			if err == nil {
				t.Fatal("migration succeeded; want an error")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
			for _, m := range tc.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			migDiff(t, "a refused migration", snap, migSnapshot(t, k))
		})
	}
}

// TestMigrateOKFv3FailedWriteWritesNothing fails the disk on the second
// file of the migration: the transaction undoes the first, the tree is
// exactly as before (still version 2, nothing left behind), and a second
// run gives the same bytes as an uninterrupted migration.
func TestMigrateOKFv3FailedWriteWritesNothing(t *testing.T) {
	ctx := context.Background()
	clean := migInit(t)
	migWriteTree(t, clean, migSmallTree)
	if _, err := MigrateOKFv3(ctx, clean, "test"); err != nil {
		t.Fatal(err)
	}

	k := migInit(t)
	migWriteTree(t, k, migSmallTree)
	before := migSnapshot(t, k)
	var mu sync.Mutex
	calls := 0
	full := txn.WithFaults(ctx, txn.Faults{Write: func(rel string) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 2 {
			return fmt.Errorf("writing %s: disk full", rel)
		}
		return nil
	}})
	_, err := MigrateOKFv3(full, k, "test")
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("error = %v; want the disk error", err)
	}
	migDiff(t, "a failed migration", before, migSnapshot(t, k))
	if v, err := DetectSchemaVersion(k); err != nil || v != 2 {
		t.Fatalf("tree after a failed migration detected as %d, %v; want 2", v, err)
	}
	if left, err := txn.Leftovers(k); err != nil || len(left) != 0 {
		t.Fatalf("leftovers after a failed migration: %v, %v", left, err)
	}

	res, err := MigrateOKFv3(ctx, k, "test")
	if err != nil {
		t.Fatal(err)
	}
	if res.Converted != 2 || res.FolderSummaries != 3 {
		t.Errorf("second run = %+v; want 2 leaves converted and 3 summaries", res)
	}
	want, got := migSnapshot(t, clean), migSnapshot(t, k)
	for p, data := range want {
		if got[p] != data {
			t.Errorf("%s differs from an uninterrupted migration", p)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d files after a retried migration, %d after an uninterrupted one", len(got), len(want))
	}
}

// A schema version written as a string ("2") is no version, and the error
// says it is a string: "schema_version is 2" read as if 2 were refused.
func TestDetectSchemaVersionQuotedVersion(t *testing.T) {
	k := store.New(t.TempDir())
	migWriteTree(t, k, map[string]string{"cli/practice-a.md": strings.Replace(fmt.Sprintf(migV2Leaf, "practice-a"), "schema_version: 2", `schema_version: "2"`, 1)})
	_, err := DetectSchemaVersion(k)
	if !errors.Is(err, ErrUnknownVersion) || !strings.Contains(err.Error(), `schema_version is the string "2"`) {
		t.Fatalf("err = %v, want ErrUnknownVersion saying schema_version is the string \"2\"", err)
	}
}
