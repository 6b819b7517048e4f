package pack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kk-project/kk/internal/checks"
	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/schema"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

var testManifest = contracts.PackManifest{Name: "team", Version: "1.2.0", Summary: "conventions of the team", Homepage: "https://example.com/team-pack"}

// sourceKB is a small tree with folders, edges, citations, summaries and a
// redirect ledger.
func sourceKB(t testing.TB) *store.KB {
	t.Helper()
	k := newKB(t)
	storeLeaf := contracts.NodeInput{Type: "map", Title: "Store", Description: "Where data lives.", Tags: []string{"storage"}, Folder: "store/deep", Body: "The store keeps everything.\n"}
	writeLeaf(t, k, contracts.NodeInput{Type: "practice", Title: "Solo", Description: "Stands alone.", Body: "No edges here.\n"})
	writeLeaf(t, k, storeLeaf)
	writeLeaf(t, k, contracts.NodeInput{Type: "practice", Title: "Exit codes", Description: "One switch decides them.", Tags: []string{"cli"}, Folder: "cli",
		Body: "Exit codes are decided in one place.\n", RelatesTo: []string{"map-store"}, DependsOn: []string{"practice-solo"}, DerivedFrom: []string{"docs/cli.md"}})
	// The edge back is added once its target exists, so that every
	// Related link of the tree is a real path.
	storeLeaf.RelatesTo = []string{"practice-exit-codes"}
	if _, err := curate.WriteNode(context.Background(), k, storeLeaf, curate.WriteOptions{Mode: curate.Update, Command: "test"}); err != nil {
		t.Fatal(err)
	}
	writeSummaries(t, k, store.Summaries{"cli": "command line conventions", "store": "storage", "store/deep": "the deep end", "gone": "a folder with no leaves"})
	if err := os.WriteFile(k.RedirectsPath(), []byte(`{"practice-old": ["practice-exit-codes"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Rebuild(context.Background(), k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		t.Fatal(err)
	}
	return k
}

// leafFiles reads the leaves of k's tree (index files left out), by path
// under nodes/.
func leafFiles(t testing.TB, k *store.KB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for p, data := range readDir(t, k.NodesDir()) {
		if path.Base(p) != "index.md" && strings.HasSuffix(p, ".md") {
			out[p] = data
		}
	}
	return out
}

// relocated is what a leaf's bytes become once it moves under dest/: the
// Related section links to the new paths; everything else is unchanged.
func relocated(src, dest string) string {
	lines := strings.SplitAfter(src, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "- Related: [") || strings.HasPrefix(l, "- Depends on: [") {
			lines[i] = strings.Replace(l, "](/", "](/"+dest+"/", 1)
		}
	}
	return strings.Join(lines, "")
}

func mustLintClean(t *testing.T, k *store.KB) {
	t.Helper()
	rep, err := checks.Lint(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors > 0 {
		t.Errorf("lint found %d error(s): %+v", rep.Errors, rep.Items)
	}
	rb, err := indexfiles.Check(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	if len(rb.Changed)+len(rb.Removed) > 0 {
		t.Errorf("index rebuild --check: changed %v, removed %v", rb.Changed, rb.Removed)
	}
}

// TestRoundTrip exports a tree as a folder and as an archive and imports
// each into a fresh knowledge base: every leaf comes back byte for byte,
// except that its Related links follow it to nodes/<name>/.
func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	src := sourceKB(t)
	original := leafFiles(t, src)
	if len(original) != 3 {
		t.Fatalf("source tree has %d leaves", len(original))
	}
	out := t.TempDir()
	for _, target := range []string{filepath.Join(out, "team-pack"), filepath.Join(out, "team.tar.gz")} {
		t.Run(filepath.Base(target), func(t *testing.T) {
			res, err := Export(ctx, src, ExportOptions{Manifest: testManifest, Out: target})
			if err != nil {
				t.Fatal(err)
			}
			if res.Leaves != 3 || res.FolderSummaries != 3 || res.Redirects != true || len(res.MissingSummaries) != 0 {
				t.Errorf("export result = %+v", res)
			}
			if !IsArchive(target) {
				exported := map[string]string{}
				for p, data := range readDir(t, filepath.Join(target, KnowledgeDir)) {
					if path.Base(p) != "index.md" && strings.HasSuffix(p, ".md") {
						exported[p] = data
					}
				}
				sameFiles(t, "exported leaves against the tree's", original, exported)
			}

			dst := newKB(t)
			ir, err := Import(ctx, dst, ImportOptions{Source: target, Command: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if ir.Name != "team" || ir.Imported != 3 || len(ir.Skipped) != 0 || ir.Migrated || ir.Folder != ".ai/kenkeep/nodes/team" {
				t.Errorf("import result = %+v", ir)
			}
			want := map[string]string{}
			for p, data := range original {
				want["team/"+p] = relocated(data, "team")
			}
			got := leafFiles(t, dst)
			sameFiles(t, "imported leaves", want, got)
			if got["team/practice-solo.md"] != original["practice-solo.md"] {
				t.Error("a leaf without edges did not come back byte-identical")
			}
			if !strings.Contains(got["team/cli/practice-exit-codes.md"], "- Related: [map-store](/team/store/deep/map-store.md)\n") {
				t.Errorf("Related link not updated:\n%s", got["team/cli/practice-exit-codes.md"])
			}
			s, err := store.ReadSummaries(dst.SummariesPath())
			if err != nil {
				t.Fatal(err)
			}
			wantSummaries := store.Summaries{"team": "conventions of the team", "team/cli": "command line conventions", "team/store": "storage", "team/store/deep": "the deep end"}
			if fmt.Sprint(s) != fmt.Sprint(wantSummaries) {
				t.Errorf("summaries = %v, want %v", s, wantSummaries)
			}
			if _, err := os.Stat(filepath.Join(dst.NodesDir(), "team", ".redirects.json")); err == nil {
				t.Error("import copied .redirects.json")
			}
			mustLintClean(t, dst)
		})
	}
}

// TestExportDeterministic exports the same tree twice: same bytes, for an
// archive and for a folder; a re-export into a pack folder keeps the
// folder's other files.
func TestExportDeterministic(t *testing.T) {
	ctx := context.Background()
	k := sourceKB(t)
	out := t.TempDir()
	a, b := filepath.Join(out, "a.tar.gz"), filepath.Join(out, "b.tgz")
	for _, p := range []string{a, b} {
		if _, err := Export(ctx, k, ExportOptions{Manifest: testManifest, Out: p}); err != nil {
			t.Fatal(err)
		}
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if len(da) == 0 || !bytes.Equal(da, db) {
		t.Errorf("two exports of one tree differ (%d and %d bytes)", len(da), len(db))
	}
	if _, err := Export(ctx, k, ExportOptions{Manifest: testManifest, Out: a}); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(a); !bytes.Equal(again, da) {
		t.Error("exporting over the archive changed its bytes")
	}

	d := filepath.Join(out, "pack")
	if _, err := Export(ctx, k, ExportOptions{Manifest: testManifest, Out: d}); err != nil {
		t.Fatal(err)
	}
	first := readDir(t, d)
	for _, name := range []string{ManifestFile, ReadmeFile, SummariesFile, "knowledge/index.md", "knowledge/.redirects.json", "knowledge/cli/index.md"} {
		if _, ok := first[name]; !ok {
			t.Errorf("the pack lacks %s", name)
		}
	}
	wantManifest := "homepage: 'https://example.com/team-pack'\nname: team\nschema_version: 3\nsummary: conventions of the team\nversion: 1.2.0\n"
	if first[ManifestFile] != wantManifest {
		t.Errorf("manifest =\n%s\nwant\n%s", first[ManifestFile], wantManifest)
	}
	if strings.Contains(first[SummariesFile], "gone") {
		t.Error("the pack's summaries include a folder that holds no leaves")
	}
	if err := os.WriteFile(filepath.Join(d, "LICENSE"), []byte("MIT\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, KnowledgeDir, "stale.md"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Export(ctx, k, ExportOptions{Manifest: testManifest, Out: d}); err != nil {
		t.Fatal(err)
	}
	second := readDir(t, d)
	if second["LICENSE"] != "MIT\n" {
		t.Error("re-export removed the pack folder's LICENSE")
	}
	delete(second, "LICENSE")
	sameFiles(t, "a second export into the pack folder", first, second)
	if ents, _ := os.ReadDir(out); len(ents) != 3 {
		t.Errorf("%d entries beside the exports (want a.tar.gz, b.tgz, pack): %v", len(ents), ents)
	}
}

// TestExportRefuses covers inputs that must leave the output untouched.
func TestExportRefuses(t *testing.T) {
	ctx := context.Background()
	k := sourceKB(t)
	out := t.TempDir()

	bad := testManifest
	bad.Name = "Team Pack"
	_, err := Export(ctx, k, ExportOptions{Manifest: bad, Out: filepath.Join(out, "x")})
	var ve *schema.ValidationError
	if !errors.As(err, &ve) || ve.Failures[0].Pointer != "/name" {
		t.Errorf("bad name: %v; want a validation error at /name", err)
	}

	busy := filepath.Join(out, "busy")
	if err := os.MkdirAll(busy, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(busy, "notes.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Export(ctx, k, ExportOptions{Manifest: testManifest, Out: busy}); err == nil || !strings.Contains(err.Error(), "holds no kenkeep-pack.yaml") {
		t.Errorf("export into a folder that is not a pack: %v", err)
	}
	if _, err := Export(ctx, k, ExportOptions{Manifest: testManifest, Out: filepath.Join(k.Dir, "pack")}); err == nil || !strings.Contains(err.Error(), "inside the knowledge base") {
		t.Errorf("export into .ai/kenkeep: %v", err)
	}

	// A dangling edge fails lint: nothing is written.
	writeLeaf(t, k, contracts.NodeInput{Type: "practice", Title: "Dangling", Description: "Points nowhere.", RelatesTo: []string{"practice-nowhere"}, Body: "x\n"})
	target := filepath.Join(out, "lint.tar.gz")
	_, err = Export(ctx, k, ExportOptions{Manifest: testManifest, Out: target})
	var le *LintError
	if !errors.As(err, &le) || len(le.Items) != 1 || le.Items[0].Rule != "dangling-edge" {
		t.Errorf("export of a tree with a dangling edge: %v; want a LintError for it", err)
	}
	ents, _ := os.ReadDir(out)
	if len(ents) != 1 {
		t.Errorf("a refused export left %v beside the output", ents)
	}

	empty := newKB(t)
	if _, err := Export(ctx, empty, ExportOptions{Manifest: testManifest, Out: filepath.Join(out, "empty")}); err == nil || !strings.Contains(err.Error(), "nothing to export") {
		t.Errorf("export of an empty tree: %v", err)
	}
}

// TestImportDrupal imports kenkeep's published Drupal pack (schema
// version 2) with --migrate, from its folder and from an archive of it:
// all 141 leaves land with their ids, edges and descriptions and the 26
// folder summaries, and the tree passes lint and the index check.
func TestImportDrupal(t *testing.T) {
	knowledge := filepath.Join(drupalPack, KnowledgeDir)
	if _, err := os.Stat(knowledge); err != nil {
		t.Fatalf("the Drupal pack fixture is missing at %s (the tests need shared/ beside the repository, as CI has it): %v", drupalPack, err)
	}
	ctx := context.Background()
	fixture := map[string]*node.Node{}
	folderSummaries := map[string]string{}
	for rel, data := range readDir(t, knowledge) {
		if path.Base(rel) == "index.md" {
			doc, err := schema.ParseDocument([]byte(data))
			if err != nil {
				t.Fatal(err)
			}
			if s, _ := doc.(map[string]any)["summary"].(string); s != "" {
				folderSummaries[path.Dir(rel)] = strings.Join(strings.Fields(s), " ")
			}
			continue
		}
		n, err := node.Parse(rel, []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		fixture[rel] = n
	}
	if len(fixture) != 141 || len(folderSummaries) != 26 {
		t.Fatalf("fixture has %d leaves and %d folder summaries; the test expects 141 and 26", len(fixture), len(folderSummaries))
	}
	pathByID := map[string]string{}
	for rel, n := range fixture {
		pathByID[n.ID] = rel
	}

	for name, source := range map[string]string{"dir": drupalPack, "archive": archiveDir(t, drupalPack, "kenkeep-pack-drupal-1.0.1")} {
		t.Run(name, func(t *testing.T) {
			k := newKB(t)
			before := snapshot(t, k)
			if _, err := Import(ctx, k, ImportOptions{Source: source, Command: "test"}); err == nil || !strings.Contains(err.Error(), "--migrate") {
				t.Fatalf("import of a v2 pack without --migrate: %v", err)
			}
			sameFiles(t, "a refused import", before, snapshot(t, k))

			res, err := Import(ctx, k, ImportOptions{Source: source, Migrate: true, Command: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Imported != 141 || !res.Migrated || len(res.Skipped) != 0 || res.FolderSummaries != 27 || len(res.UnknownEdges) != 0 {
				t.Errorf("result: imported %d, migrated %v, skipped %d, summaries %d, unknown edges %v",
					res.Imported, res.Migrated, len(res.Skipped), res.FolderSummaries, res.UnknownEdges)
			}
			tree, err := k.ReadTree(store.LoadOptions{Bodies: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(tree.Leaves) != 141 {
				t.Fatalf("%d leaves after import", len(tree.Leaves))
			}
			for _, n := range tree.Leaves {
				rel, ok := strings.CutPrefix(n.Path, "drupal/")
				was := fixture[rel]
				if !ok || was == nil {
					t.Errorf("%s: not a leaf of the pack", n.Path)
					continue
				}
				if n.Format != 3 || n.ID != was.ID || n.Type != was.Type || n.Title != was.Title || n.Description != was.Description ||
					n.Confidence != was.Confidence || !slices.Equal(n.Tags, was.Tags) || !slices.Equal(n.RelatesTo, was.RelatesTo) ||
					!slices.Equal(n.DependsOn, was.DependsOn) || !slices.Equal(n.DerivedFrom, was.DerivedFrom) {
					t.Errorf("%s: fields changed on import:\n got %+v\nwant %+v", n.Path, n, was)
				}
				if !strings.HasPrefix(string(n.Body), strings.TrimRight(string(was.Body), " \t\r\n")) {
					t.Errorf("%s: the body does not start with the pack's body", n.Path)
				}
				for _, id := range was.RelatesTo {
					if line := fmt.Sprintf("- Related: [%s](/drupal/%s)\n", id, pathByID[id]); !bytes.Contains(n.Body, []byte(line)) {
						t.Errorf("%s: Related section lacks %q", n.Path, line)
					}
				}
			}
			s, err := store.ReadSummaries(k.SummariesPath())
			if err != nil {
				t.Fatal(err)
			}
			if s["drupal"] != "General knowledge and best practices for Drupal projects" || len(s) != 27 {
				t.Errorf("%d summaries; drupal = %q", len(s), s["drupal"])
			}
			for d, want := range folderSummaries {
				if got := s["drupal/"+d]; got != want {
					t.Errorf("summary of drupal/%s = %q, want %q", d, got, want)
				}
			}
			mustLintClean(t, k)

			// A second import is refused and changes nothing.
			after := snapshot(t, k)
			_, err = Import(ctx, k, ImportOptions{Source: source, Migrate: true, Command: "test"})
			var de *DestExistsError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), "nodes/drupal already exists") {
				t.Errorf("second import: %v; want nodes/drupal already exists", err)
			}
			sameFiles(t, "a second import", after, snapshot(t, k))

			// Under another name every id collides: nothing to import.
			_, err = Import(ctx, k, ImportOptions{Source: source, As: "again", Migrate: true, Command: "test"})
			if err == nil || !strings.Contains(err.Error(), "nothing to import") {
				t.Errorf("import with every id taken: %v", err)
			}
			sameFiles(t, "an import with every id taken", after, snapshot(t, k))
		})
	}
}

// TestImportCollisionsAndRelinks imports a pack into a tree that already
// has one of its ids and a leaf pointing at another of them.
func TestImportCollisionsAndRelinks(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	writeLeaf(t, k, contracts.NodeInput{Type: "practice", Title: "Solo", Description: "The tree's own solo.", Body: "Mine.\n"})
	writeLeaf(t, k, contracts.NodeInput{Type: "map", Title: "Waiting", Description: "Links ahead.", RelatesTo: []string{"practice-exit-codes"}, Body: "Waiting.\n"})
	mine, _ := os.ReadFile(k.NodePath("practice-solo.md"))
	waiting, _ := os.ReadFile(k.NodePath("map-waiting.md"))
	if !strings.Contains(string(waiting), "- Related: [practice-exit-codes](/practice-exit-codes.md)") {
		t.Fatalf("unexpected fallback link:\n%s", waiting)
	}

	src := sourceKB(t)
	target := filepath.Join(t.TempDir(), "team.tar.gz")
	if _, err := Export(ctx, src, ExportOptions{Manifest: testManifest, Out: target}); err != nil {
		t.Fatal(err)
	}
	res, err := Import(ctx, k, ImportOptions{Source: target, As: "imported", Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Imported != 2 || len(res.Skipped) != 1 || res.Skipped[0] != (SkippedLeaf{ID: "practice-solo", Path: "knowledge/practice-solo.md", Reason: "exists", Existing: ".ai/kenkeep/nodes/practice-solo.md"}) {
		t.Errorf("result = %+v", res)
	}
	if got, _ := os.ReadFile(k.NodePath("practice-solo.md")); !bytes.Equal(got, mine) {
		t.Error("the tree's own leaf with a colliding id was changed")
	}
	if _, err := os.Stat(k.NodePath("imported/practice-solo.md")); err == nil {
		t.Error("the colliding leaf was imported")
	}
	if !slices.Equal(res.Relinked, []string{".ai/kenkeep/nodes/map-waiting.md"}) {
		t.Errorf("relinked = %v", res.Relinked)
	}
	got, _ := os.ReadFile(k.NodePath("map-waiting.md"))
	// Its Related section now has the real path, and the changed leaf is
	// at its next version.
	want := strings.Replace(string(waiting), "(/practice-exit-codes.md)", "(/imported/cli/practice-exit-codes.md)", 1)
	if want = strings.Replace(want, "kk_version: 1\n", "kk_version: 2\n", 1); string(got) != want {
		t.Errorf("relinked leaf =\n%s\nwant\n%s", got, want)
	}
	// The imported leaf depends on the skipped id, which now means the
	// tree's own leaf.
	exit, _ := os.ReadFile(k.NodePath("imported/cli/practice-exit-codes.md"))
	if !strings.Contains(string(exit), "- Depends on: [practice-solo](/practice-solo.md)\n") {
		t.Errorf("imported leaf's link to the skipped id:\n%s", exit)
	}
	mustLintClean(t, k)
}

// TestImportRetiredIDs skips a pack leaf whose id the tree's redirect
// ledger has retired, and links edges to it to its successor.
func TestImportRetiredIDs(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	writeLeaf(t, k, contracts.NodeInput{Type: "map", Title: "Warehouse", Description: "Replaced the store.", Body: "Here now.\n"})
	if err := os.WriteFile(k.RedirectsPath(), []byte(`{"map-store": ["map-warehouse"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "team.tar.gz")
	if _, err := Export(ctx, sourceKB(t), ExportOptions{Manifest: testManifest, Out: target}); err != nil {
		t.Fatal(err)
	}
	res, err := Import(ctx, k, ImportOptions{Source: target, Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	want := []SkippedLeaf{{ID: "map-store", Path: "knowledge/store/deep/map-store.md", Reason: "retired", Existing: ".ai/kenkeep/nodes/.redirects.json"}}
	if res.Imported != 2 || !slices.Equal(res.Skipped, want) || len(res.UnknownEdges) != 0 {
		t.Errorf("result = %+v", res)
	}
	exit, _ := os.ReadFile(k.NodePath("team/cli/practice-exit-codes.md"))
	if !strings.Contains(string(exit), "- Related: [map-store](/map-warehouse.md)\n") {
		t.Errorf("the link to the retired id does not lead to its successor:\n%s", exit)
	}
	mustLintClean(t, k)
}

// TestImportBadPacks refuses packs with a bad manifest, layout or leaf,
// and writes nothing.
func TestImportBadPacks(t *testing.T) {
	ctx := context.Background()
	leaf := map[string]string{"knowledge/practice-tiny.md": smallLeaf}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{ManifestFile: smallManifest}
		for k, v := range leaf {
			out[k] = v
		}
		for k, v := range extra {
			if v == "" {
				delete(out, k)
			} else {
				out[k] = v
			}
		}
		return out
	}
	cases := []struct {
		name  string
		files map[string]string
		want  string
		flat  bool // archive without a wrapping folder
	}{
		{"no manifest", with(map[string]string{ManifestFile: ""}), "no kenkeep-pack.yaml", false},
		{"two wrapped manifests", map[string]string{"a/" + ManifestFile: smallManifest, "b/" + ManifestFile: smallManifest}, "2 manifests", true},
		{"unknown key", with(map[string]string{ManifestFile: smallManifest + "license: MIT\n"}), "/license: is not allowed here", false},
		{"bad name", with(map[string]string{ManifestFile: strings.Replace(smallManifest, "tiny", "Tiny Pack", 1)}), "/name:", false},
		{"schema version 4", with(map[string]string{ManifestFile: strings.Replace(smallManifest, "schema_version: 3", "schema_version: 4", 1)}), "/schema_version:", false},
		{"missing summary", with(map[string]string{ManifestFile: "name: tiny\nversion: 1\nschema_version: 3\n"}), "/summary: is required", false},
		{"bad homepage", with(map[string]string{ManifestFile: smallManifest + "homepage: not a url\n"}), "/homepage:", false},
		{"no knowledge", map[string]string{ManifestFile: smallManifest, "README.md": "hi\n"}, "no knowledge/ folder", false},
		{"no leaves", map[string]string{ManifestFile: smallManifest, "knowledge/index.md": "# x\n"}, "the pack has no leaves", false},
		{"invalid leaf", with(map[string]string{"knowledge/practice-broken.md": "---\ntype: practice\n---\nno id\n"}), "practice-broken.md", false},
		{"misnamed leaf", with(map[string]string{"knowledge/practice-other.md": strings.Replace(smallLeaf, "kk_id: practice-tiny", "kk_id: practice-elsewhere", 1)}), "does not match the id", false},
		{"duplicate id", with(map[string]string{"knowledge/sub/practice-tiny.md": smallLeaf}), "duplicate id practice-tiny", false},
		{"v2 leaf in a v3 pack", with(map[string]string{"knowledge/practice-old.md": "---\nschema_version: 2\nid: practice-old\ntitle: Old\nkind: practice\ntags: []\nderived_from: []\nrelates_to: []\ndepends_on: []\nconfidence: high\nsummary: old\n---\nOld.\n"}), "manifest declares schema_version 3", false},
		{"bad summaries", with(map[string]string{SummariesFile: "---\nschema_version: 1\nsummaries:\n  ../up: escapes\n---\n"}), "knowledge.FOLDER_SUMMARIES.md: folder \"../up\" climbs out", false},
		// The registry is kenkeep's strict format, version 1.
		{"registry version 2", with(map[string]string{SummariesFile: "---\nschema_version: 2\nsummaries:\n  '': the root\n---\n"}), "knowledge.FOLDER_SUMMARIES.md: field \"schema_version\" is 2", false},
		{"registry extra key", with(map[string]string{SummariesFile: "---\nschema_version: 1\nsummaries: {}\nowner: me\n---\n"}), "unknown key \"owner\"", false},
	}
	k := newKB(t)
	before := snapshot(t, k)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			top := "top"
			if c.flat {
				top = ""
			}
			for kind, src := range map[string]string{"dir": writePackDir(t, c.files), "archive": archiveDir(t, writePackDir(t, c.files), top)} {
				_, err := Import(ctx, k, ImportOptions{Source: src, Command: "test"})
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: err = %v; want it to mention %q", kind, err, c.want)
				}
			}
			sameFiles(t, "a refused import", before, snapshot(t, k))
		})
	}

	// Sources kk does not read.
	for src, want := range map[string]string{
		"e0ipso/kenkeep-pack-drupal":                 "remote pack sources are not supported",
		"https://example.com/pack.tar.gz":            "remote pack sources are not supported",
		filepath.Join(t.TempDir(), "missing.tar.gz"): "does not exist",
	} {
		_, err := Import(ctx, k, ImportOptions{Source: src, Command: "test"})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("source %s: %v; want %q", src, err, want)
		}
	}
	notGzip := filepath.Join(t.TempDir(), "pack.tar.gz")
	if err := os.WriteFile(notGzip, []byte("plain text"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Import(ctx, k, ImportOptions{Source: notGzip}); err == nil || !strings.Contains(err.Error(), "neither a folder nor a gzip-compressed tar archive") {
		t.Errorf("a file that is not gzip: %v", err)
	}
	if _, err := Import(ctx, k, ImportOptions{Source: writePackDir(t, with(nil)), As: "Bad Name"}); err == nil || !strings.Contains(err.Error(), "folder name") {
		t.Errorf("--as with a bad name: %v", err)
	}
	sameFiles(t, "refused imports", before, snapshot(t, k))

	// A manifest at the top wins over wrapped ones; a valid pack imports,
	// with a warning about its folders that have no summary (kenkeep
	// warns too).
	ok := with(map[string]string{"nested/" + ManifestFile: smallManifest, "knowledge/sub/deeper/practice-deep.md": strings.ReplaceAll(smallLeaf, "practice-tiny", "practice-deep"),
		SummariesFile: "---\nschema_version: 1\nsummaries:\n  sub: the sub folder\n---\n"})
	res, err := Import(ctx, k, ImportOptions{Source: writePackDir(t, ok), Command: "test"})
	if err != nil {
		t.Errorf("valid pack: %v", err)
	} else if !slices.Equal(res.MissingSummaries, []string{"sub/deeper"}) {
		t.Errorf("folders without a summary %q, want [sub/deeper]", res.MissingSummaries)
	}
}

// TestImportHostileArchives refuses archives that try to escape, link,
// or overflow, and writes nothing.
func TestImportHostileArchives(t *testing.T) {
	ctx := context.Background()
	base := []tarEntry{file("kenkeep-pack.yaml", smallManifest), dir("knowledge/"), file("knowledge/practice-tiny.md", smallLeaf)}
	plus := func(extra ...tarEntry) []tarEntry { return append(slices.Clone(base), extra...) }
	link := func(typ byte, name, target string) tarEntry {
		return tarEntry{hdr: tarHeader(typ, name, target)}
	}
	small := &Limits{MaxLeafSize: 2000, MaxFileSize: 500, MaxTotalSize: 3000, MaxEntries: 6}
	cases := []struct {
		name    string
		entries []tarEntry
		limits  *Limits
		want    string
	}{
		{"dot-dot entry", plus(file("../escape.md", smallLeaf)), nil, `"../escape.md": climbs out of the pack`},
		{"dot-dot inside", plus(file("knowledge/../../escape.md", smallLeaf)), nil, "climbs out of the pack"},
		{"absolute path", plus(file("/tmp/kk-escape.md", smallLeaf)), nil, "has an absolute path"},
		{"backslash", plus(file(`knowledge\..\..\x.md`, smallLeaf)), nil, "backslash"},
		{"symlink", plus(link('2', "knowledge/practice-link.md", "/etc/passwd")), nil, "is a symbolic link"},
		{"hardlink", plus(link('1', "knowledge/practice-hard.md", "knowledge/practice-tiny.md")), nil, "is a hard link"},
		{"char device", plus(link('3', "knowledge/dev", "")), nil, "is a device"},
		{"fifo", plus(link('6', "knowledge/fifo", "")), nil, "is a named pipe"},
		{"duplicate entry", plus(file("knowledge/practice-tiny.md", smallLeaf)), nil, "appears twice"},
		{"oversized leaf", plus(file("knowledge/practice-big.md", strings.Repeat("x", node.MaxSize+1))), nil, fmt.Sprintf("is %d bytes; a markdown file in a pack may be at most %d", node.MaxSize+1, node.MaxSize)},
		{"oversized leaf, small limits", plus(file("knowledge/practice-big.md", strings.Repeat("x", 2001))), small, "a markdown file in a pack may be at most 2000"},
		{"oversized other file", plus(file("LICENSE", strings.Repeat("x", 501))), small, "a file in a pack may be at most 500"},
		{"total size", plus(file("knowledge/a.md", strings.Repeat("x", 1500)), file("knowledge/b.md", strings.Repeat("x", 1500))), small, "unpacked size over the limit of 3000 bytes"},
		{"too many entries", plus(file("a", "1"), file("b", "2"), file("c", "3"), file("d", "4")), small, "at most 6 files and folders"},
	}
	k := newKB(t)
	before := snapshot(t, k)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := makeArchive(t, c.entries)
			_, err := Import(ctx, k, ImportOptions{Source: src, Limits: c.limits, Command: "test"})
			var ue *UnsafeError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v; want an UnsafeError mentioning %q", err, c.want)
			}
			sameFiles(t, "a refused archive", before, snapshot(t, k))
		})
	}
	for _, p := range []string{"/tmp/kk-escape.md", filepath.Join(filepath.Dir(k.Dir), "escape.md")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}

	// The same safe archive imports.
	if _, err := Import(ctx, k, ImportOptions{Source: makeArchive(t, base), Command: "test"}); err != nil {
		t.Errorf("safe archive: %v", err)
	}
}

// TestImportDirSymlinks refuses a pack folder that holds a symlink.
func TestImportDirSymlinks(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	before := snapshot(t, k)
	outside := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(outside, []byte(smallLeaf), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, mk := range map[string]func(root string) error{
		"leaf link": func(root string) error {
			return os.Symlink(outside, filepath.Join(root, "knowledge", "practice-secret.md"))
		},
		"knowledge link": func(root string) error { return os.Symlink(t.TempDir(), filepath.Join(root, "knowledge", "sub")) },
		"manifest link": func(root string) error {
			_ = os.Remove(filepath.Join(root, ManifestFile))
			return os.Symlink(outside, filepath.Join(root, ManifestFile))
		},
	} {
		t.Run(name, func(t *testing.T) {
			root := writePackDir(t, map[string]string{ManifestFile: smallManifest, "knowledge/practice-tiny.md": smallLeaf})
			if err := mk(root); err != nil {
				t.Skipf("the file system here cannot make symlinks (needed for this hostile pack): %v", err)
			}
			_, err := Import(ctx, k, ImportOptions{Source: root, Command: "test"})
			if err == nil || !(strings.Contains(err.Error(), "symbolic link") || strings.Contains(err.Error(), "not a regular file") || strings.Contains(err.Error(), "no kenkeep-pack.yaml")) {
				t.Errorf("err = %v; want the symlink refused", err)
			}
			sameFiles(t, "a refused folder", before, snapshot(t, k))
		})
	}
}

// TestImportUndoesFailedWrite makes a write fail midway: the import is
// undone and the tree is as it was.
func TestImportUndoesFailedWrite(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	writeLeaf(t, k, contracts.NodeInput{Type: "map", Title: "Waiting", Description: "Links ahead.", RelatesTo: []string{"practice-solo"}, Body: "Waiting.\n"})
	writeSummaries(t, k, store.Summaries{"team/old": "a stale key under the pack's folder"})
	before := snapshot(t, k)
	target := filepath.Join(t.TempDir(), "team.tar.gz")
	if _, err := Export(ctx, sourceKB(t), ExportOptions{Manifest: testManifest, Out: target}); err != nil {
		t.Fatal(err)
	}
	for _, failAt := range []string{"nodes/team/cli/practice-exit-codes.md", "nodes/map-waiting.md", "FOLDER_SUMMARIES.md"} { // a new leaf, the relinked leaf, the summaries
		t.Run(path.Base(failAt), func(t *testing.T) {
			var failed atomic.Bool
			full := txn.WithFaults(ctx, txn.Faults{Write: func(rel string) error {
				if rel == failAt {
					failed.Store(true)
					return fmt.Errorf("disk full (test)")
				}
				return nil
			}})
			_, err := Import(full, k, ImportOptions{Source: target, Command: "test"})
			if err == nil || !strings.Contains(err.Error(), "disk full (test)") || !strings.Contains(err.Error(), "nothing was imported") || !failed.Load() {
				t.Errorf("err = %v", err)
			}
			sameFiles(t, "an undone import", before, snapshot(t, k))
		})
	}
}

// A pack made with kenkeep, whose folder guard takes any name, may hold a
// folder kk would not create (a space, a Windows device name): the whole
// import was refused ("with space holds a space … choose another name"),
// a name no one can choose in the import. Its leaves go to the nearest
// name kk creates, with their folder summaries, and the result says so.
func TestImportRenamesFoldersKkDoesNotCreate(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	leaf := func(id string) string { return strings.ReplaceAll(smallLeaf, "practice-tiny", id) }
	src := writePackDir(t, map[string]string{
		ManifestFile: smallManifest,
		"knowledge/Meeting Notes/practice-standup.md": leaf("practice-standup"),
		"knowledge/con/practice-device.md":            leaf("practice-device"),
		"knowledge/ok/practice-fine.md":               leaf("practice-fine"),
		SummariesFile:                                 "---\nschema_version: 1\nsummaries:\n  Meeting Notes: the meetings\n  con: the console\n  ok: fine\n---\n",
	})
	res, err := Import(ctx, k, ImportOptions{Source: src, Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"tiny/Meeting-Notes/practice-standup.md", "tiny/con-notes/practice-device.md", "tiny/ok/practice-fine.md"} {
		if _, err := k.ReadLeaf(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	want := []Renamed{{From: "Meeting Notes", To: "Meeting-Notes"}, {From: "con", To: "con-notes"}}
	if !slices.Equal(res.Renamed, want) || res.Imported != 3 {
		t.Errorf("renamed %+v, imported %d", res.Renamed, res.Imported)
	}
	s, err := store.ReadSummaries(k.SummariesPath())
	if err != nil {
		t.Fatal(err)
	}
	if s["tiny/Meeting-Notes"] != "the meetings" || s["tiny/con-notes"] != "the console" || s["tiny/ok"] != "fine" || s["tiny/con"] != "" {
		t.Errorf("summaries %v", s)
	}
}
