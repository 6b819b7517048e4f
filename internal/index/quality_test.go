package index_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/migrate"
	"github.com/kk-project/kk/internal/store"
)

// drupalPack is the kenkeep v2 pack used as the retrieval-quality corpus;
// shared/ sits beside the repository.
// © 2026 Mateu Aguiló Bosch, MIT licence (its LICENSE file is in that folder).
const drupalPack = "../../../shared/fixtures/kenkeep-pack-drupal"

// golden maps a query, phrased as a developer would ask it (not the
// title), to the leaves that answer it.
var golden = []struct {
	query string
	want  []string
}{
	{"how to invalidate cached data with tags", []string{"practice-tag-cache-entries-for-targeted-invalidation"}},
	{"cache contexts vary render output per user", []string{"practice-vary-render-cache-with-cache-contexts"}},
	{"max-age caching pitfalls", []string{"practice-account-for-render-cache-max-age-gotchas"}},
	{"block plugin cache metadata", []string{"practice-set-cache-metadata-on-block-plugin-builds"}},
	{"queue worker plugin background processing", []string{"practice-processing-queueworker-plugin-pattern"}},
	{"queue worker id must equal the queue name", []string{"practice-match-queue-worker-id-to-queue-name"}},
	{"batch api sandbox progress finished callback", []string{"practice-processing-batch-api-pattern"}},
	{"cron hook locking resumable state", []string{"practice-processing-cron-advanced-safety"}},
	{"SQL injection safe queries", []string{"practice-prevent-sql-injection-with-safe-query-apis"}},
	{"XSS output escaping", []string{"practice-prevent-xss-with-context-aware-output"}},
	{"private file uploads security", []string{"practice-handle-files-securely"}},
	{"secrets API keys in config export", []string{"practice-keep-secrets-out-of-code-and-config"}},
	{"entity query accessCheck", []string{"practice-call-access-check-on-entity-queries"}},
	{"permissions yml declare", []string{"practice-declare-and-compose-drupal-permissions-explicitly"}},
	{"JSON-RPC method plugins", []string{"map-jsonrpc-method-plugins"}},
	{"REST resource plugin", []string{"map-rest-resource-plugins"}},
	{"JSON:API entity CRUD", []string{"practice-use-jsonapi-for-entity-crud"}},
	{"OOP hooks attribute classes", []string{"practice-prefer-oop-hooks-in-src-hook"}},
	{"event subscriber vs entity hooks", []string{"practice-use-event-subscribers-for-events-not-entity-operations"}},
	{"dependency injection in plugins ContainerFactoryPluginInterface", []string{"practice-inject-services-into-plugins-with-container-factory"}},
	{"logger channel PSR-3", []string{"practice-use-dedicated-psr3-logger-channels"}},
	{"load many entities at once after query", []string{"practice-batch-load-entities-after-querying-ids"}},
	{"computed field item list", []string{"practice-computed-fields-are-computed-on-access"}},
	{"paragraphs nesting depth and revisions", []string{"practice-keep-paragraphs-depth-and-revisions-under-control"}},
	{"layout builder sections and components", []string{"map-layout-builder-page-assembly"}},
	{"media library opener service", []string{"practice-register-media-library-custom-openers-as-services"}},
	{"search api indexing problems", []string{"practice-handle-search-api-indexing-gotchas"}},
	{"pathauto URL alias patterns", []string{"practice-drupal-pathauto-alias-types-patterns-and-generation"}},
	{"tempstore cleanup after multistep form", []string{"practice-clean-up-tempstore-data-after-workflows"}},
	{"configuration schema yml", []string{"practice-define-schema-for-drupal-configuration"}},
	{"settings form config_target", []string{"practice-prefer-config-target-for-settings-forms"}},
	{"form alter specific form id", []string{"practice-target-form-alters-precisely"}},
	{"javascript behaviors once attach", []string{"practice-write-idempotent-drupal-javascript-behaviors"}},
	{"attach css js libraries", []string{"practice-attach-frontend-assets-through-libraries"}},
	{"kernel test versus unit test", []string{"practice-quality-drupal-unit-kernel-tests", "practice-quality-choose-lightest-drupal-test-type"}},
	{"phpcs phpstan coding standards", []string{"practice-quality-drupal-coding-standards"}},
	{"drush command autowiring", []string{"practice-define-drush-commands-with-attributes-and-autowiring", "practice-use-autowired-attribute-drush-commands"}},
	{"hook_update_N post update data migration", []string{"practice-use-update-hooks-for-schema-and-post-updates-for-data"}},
	{"content moderation state workflow", []string{"practice-processing-content-moderation-workflow-guidance", "map-processing-workflow-moderation-map"}},
	{"database transaction custom table", []string{"practice-wrap-atomic-custom-table-operations-in-transactions"}},
}

// Quality floors: the figures measured with the current engine (BM25F,
// RM3 and graph neighbours: 1.0000 / 0.9875; the engine these queries
// were first written against scored 1.0000 / 0.9500, a later one fitted
// to them 1.0000). A change to ranking or tokenising that lowers either
// fails the test; TestRetrievalQuality in internal/searcheval holds the
// two public corpora, which were not used to choose the ranking's values.
const (
	minRecallAt5 = 1.0  // measured 1.0000 over 40 queries
	minMRR       = 0.98 // measured 0.9875
)

func TestRetrievalQualityDrupal(t *testing.T) {
	knowledge := filepath.Join(drupalPack, "knowledge")
	if _, err := os.Stat(knowledge); err != nil {
		t.Fatalf("the Drupal pack fixture is missing at %s (the tests need shared/ beside the repository, as CI has it): %v", drupalPack, err)
	}
	ctx := context.Background()
	k := store.New(t.TempDir())
	if _, err := k.Scaffold(store.InitOptions{Version: "test", Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Command: "test"}); err != nil {
		t.Fatal(err)
	}
	copyTree(t, knowledge, k.NodesDir())
	if _, err := migrate.MigrateOKFv3(ctx, k, "test"); err != nil {
		t.Fatal(err)
	}
	db, st, err := index.Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if st.Leaves != 141 || len(st.Skipped) != 0 {
		t.Fatalf("indexed %d leaves (skipped %v); want 141", st.Leaves, st.Skipped)
	}
	if len(golden) < 30 {
		t.Fatalf("the golden set has %d queries; keep at least 30", len(golden))
	}
	var recall, mrr float64
	for _, g := range golden {
		for _, id := range g.want {
			if ents, err := db.EntitiesByID(ctx, []string{id}); err != nil || ents[store.IDKey(id)] == nil {
				t.Fatalf("golden id %s is not in the migrated fixture", id)
			}
		}
		hits, err := index.Search(ctx, db, g.query, 10)
		if err != nil {
			t.Fatalf("%q: %v", g.query, err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.ID)
		}
		found := 0
		for _, id := range g.want {
			if i := slices.Index(got, id); i >= 0 && i < 5 {
				found++
			}
		}
		recall += float64(found) / float64(len(g.want))
		for i, id := range got {
			if slices.Contains(g.want, id) {
				mrr += 1 / float64(i+1)
				break
			}
		}
		if found == 0 {
			t.Logf("miss: %q -> %v (want %v)", g.query, got[:min(5, len(got))], g.want)
		}
	}
	recall /= float64(len(golden))
	mrr /= float64(len(golden))
	t.Logf("queries=%d recall@5=%.4f MRR=%.4f", len(golden), recall, mrr)
	if recall < minRecallAt5 || mrr < minMRR {
		t.Errorf("retrieval quality dropped: recall@5=%.3f (floor %.3f), MRR=%.3f (floor %.3f)", recall, minRecallAt5, mrr, minMRR)
	}
}

func copyTree(t *testing.T, src, dst string) {
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
