package pack

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/store"
)

// Ported from kenkeep v1.17 tests/lib/pack.test.ts (validatePack). kk
// validates a pack when it imports it, and refuses it whole; the other cases
// of that file (missing manifest, bad name, missing knowledge/, invalid,
// misnamed and duplicate leaves, bad registry, escaping registry key) are
// rows of TestImportBadPacks.

func kenkeepPackFiles(extra map[string]string) map[string]string {
	leaf := func(id string) string {
		typ := "practice"
		if strings.HasPrefix(id, "map-") {
			typ = "map"
		}
		return "---\nkk_schema_version: 3\nkk_id: " + id + "\ntitle: " + id + "\ntype: " + typ + "\ndescription: Summary for " + id +
			".\ntags: [drupal]\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\n---\n\n# Body"
	}
	files := map[string]string{
		ManifestFile: "name: drupal\nversion: 1.2.0\nschema_version: 3\nsummary: Drupal project conventions.\nhomepage: https://example.com/drupal-pack\n",
		"knowledge/framework/practice-drupal-services.md": leaf("practice-drupal-services"),
		"knowledge/framework/map-drupal-hooks.md":         leaf("map-drupal-hooks"),
		SummariesFile: "---\nschema_version: 1\nsummaries:\n  framework: Framework conventions.\n---\n\n# kenkeep Folder Summaries\n",
		// kenkeep's fixture gives every folder an index.md of the older
		// generator, front matter and all; import regenerates them.
		"knowledge/index.md":           kenkeepOldIndex,
		"knowledge/framework/index.md": kenkeepOldIndex,
	}
	for k, v := range extra {
		if v == "" {
			delete(files, k)
			continue
		}
		if strings.HasPrefix(v, "leaf:") {
			v = leaf(strings.TrimPrefix(v, "leaf:"))
		}
		files[k] = v
	}
	return files
}

const kenkeepOldIndex = "---\nschema_version: 2\nnodes_hash: sha256:test\nnode_count: 1\nsummary: Drupal conventions.\n---\n# Index"

func TestKenkeepLibPackValidAndWarnings(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	res, err := Import(ctx, k, ImportOptions{Source: writePackDir(t, kenkeepPackFiles(nil)), Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Name != "drupal" || res.Imported != 2 || len(res.MissingSummaries) != 0 {
		t.Errorf("valid pack: %+v", res)
	}
	// The pack's summaries go under its folder; the folder's own is the
	// manifest's.
	sums, err := store.ReadSummaries(k.SummariesPath())
	if err != nil || sums["drupal"] != "Drupal project conventions." || sums["drupal/framework"] != "Framework conventions." {
		t.Errorf("summaries after the import: %v %v", sums, err)
	}
	for _, f := range []string{"drupal/index.md", "drupal/framework/index.md"} {
		data, err := os.ReadFile(k.NodePath(f))
		if err != nil || strings.Contains(string(data), "schema_version: 2") || !strings.Contains(string(data), "# kenkeep Index: drupal") {
			t.Errorf("%s after the import: %v\n%s", f, err, data)
		}
	}
	// A folder with no registry entry is a warning, not a failure; the pack
	// root never is (its summary is the manifest's).
	k = newKB(t)
	res, err = Import(ctx, k, ImportOptions{Source: writePackDir(t, kenkeepPackFiles(map[string]string{
		"knowledge/runtime/practice-runtime-tuning.md": "leaf:practice-runtime-tuning",
	})), Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.MissingSummaries, []string{"runtime"}) || res.Imported != 3 {
		t.Errorf("missing summaries = %q (imported %d), want [runtime]", res.MissingSummaries, res.Imported)
	}
}

func TestKenkeepLibPackRefusals(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	before := snapshot(t, k)
	for name, c := range map[string]struct {
		extra map[string]string
		want  []string
	}{
		"malformed manifest YAML": {map[string]string{ManifestFile: "name: [unterminated"}, []string{ManifestFile}},
		"manifest schema_version 1": {map[string]string{ManifestFile: "name: drupal\nversion: 1.2.0\nschema_version: 1\nsummary: s\n"},
			[]string{"schema_version"}},
		"leaf without description": {map[string]string{"knowledge/bad/practice-missing-summary.md": "---\nkk_schema_version: 3\nkk_id: practice-missing-summary\ntitle: Missing summary\ntype: practice\ntags: []\nkk_derived_from: []\nkk_relates_to: []\nkk_confidence: high\n---\n# Body"},
			[]string{"practice-missing-summary.md", "description"}},
		"file name not the id": {map[string]string{"knowledge/bad/practice-different.md": strings.Replace(kenkeepPackFiles(nil)["knowledge/framework/practice-drupal-services.md"], "kk_id: practice-drupal-services", "kk_id: practice-not-canonical", 1)},
			[]string{"practice-different.md"}},
		"duplicate id": {map[string]string{"knowledge/other/practice-drupal-services.md": "leaf:practice-drupal-services"},
			[]string{"duplicate id practice-drupal-services"}},
		"registry version 2": {map[string]string{SummariesFile: "---\nschema_version: 2\nsummaries:\n  framework: Framework conventions.\n---\n"},
			[]string{"knowledge.FOLDER_SUMMARIES.md", "schema_version"}},
		"registry key escaping": {map[string]string{SummariesFile: "---\nschema_version: 1\nsummaries:\n  framework: F.\n  \"../../../evil\": Escapes the tree.\n---\n"},
			[]string{"../../../evil"}},
	} {
		_, err := Import(ctx, k, ImportOptions{Source: writePackDir(t, kenkeepPackFiles(c.extra)), Command: "test"})
		if err == nil {
			t.Errorf("%s: imported", name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v; want it to name %q", name, err, w)
			}
		}
	}
	sameFiles(t, "refused imports", before, snapshot(t, k))
}
