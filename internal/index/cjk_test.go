package index

import (
	"context"
	"testing"
)

// Notes written in Chinese, Japanese or Korean are found by questions in
// those languages: a run of their characters is indexed as its bigrams,
// so a word is found wherever it stands in a sentence. Before, the run
// was one term (a whole clause, which no question repeats), and a
// sentence longer than 21 characters was no term at all: none of the
// questions below found anything.
func TestSearchFindsCJKNotes(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	writeLeaf(t, k, "ops/practice-migrate-before-deploy.md", leaf("practice-migrate-before-deploy", "部署前运行数据库迁移",
		"部署前必须先运行数据库迁移脚本", nil, "", "部署前必须运行数据库迁移脚本，否则缓存会失效，页面会报错。迁移脚本在 scripts/migrate 目录下。"))
	writeLeaf(t, k, "ops/practice-server-config.md", leaf("practice-server-config", "サーバーの設定ファイル",
		"本番サーバーの設定はリポジトリで管理する", nil, "", "本番サーバーの設定ファイルは config/prod にあり、変更はレビューを経てからデプロイする。"))
	writeLeaf(t, k, "ops/practice-search-index.md", leaf("practice-search-index", "검색 색인 재구축",
		"검색 색인은 배포 후에 다시 만든다", nil, "", "검색 색인은 배포가 끝난 뒤에 재구축해야 한다. 그렇지 않으면 새 문서가 검색되지 않는다."))
	writeLeaf(t, k, "ops/practice-cache.md", leaf("practice-cache-tags", "Cache tags",
		"Invalidate render caches by tag", nil, "", "Tag every cached render with the entity's cache tags."))
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	for _, c := range []struct{ q, want string }{
		{"迁移脚本放在哪里？", "practice-migrate-before-deploy"},
		{"上线之前要做什么？要不要先跑数据库迁移", "practice-migrate-before-deploy"},
		{"本番の設定ファイルはどこにありますか", "practice-server-config"},
		{"サーバー設定を変更したい", "practice-server-config"},
		{"배포 후 검색 색인", "practice-search-index"},
		{"render cache tags", "practice-cache-tags"},
	} {
		hits, err := db.Search(ctx, Request{Text: c.q, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].ID != c.want {
			t.Errorf("%q: %v; want %s first", c.q, ids(hits), c.want)
		}
		gatedHits, err := db.Search(ctx, Request{Text: c.q, Limit: 3, Gate: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(gatedHits) == 0 || gatedHits[0].ID != c.want {
			t.Errorf("%q, the hook's gate: %v; want %s first", c.q, ids(gatedHits), c.want)
		}
	}
}
