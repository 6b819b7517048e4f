package pack

import (
	"context"
	"slices"
	"strings"
	"testing"
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
