package index

import (
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestAnalyze(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"How do I invalidate the API cache?", "invalid api cach"},
		{"CacheBackendInterface", "cach backend interfac cachebackendinterface"},
		{"hook_entity_presave", "hook entiti presav hookentitypresave"},
		{"src/Entity/Ticket.php", "src entiti ticket php"},
		{"setIfNotExists getIfOwner", "set exist setifnotexists get owner getifowner"},
		{"HTMLParser PHPUnit psr3Logger", "html parser htmlparser php unit phpunit psr3 logger psr3logger"},
		{"$connection->merge() #lazy_builder", "connect merg lazi builder lazybuilder"},
		{"retrying retries retried", "retri retri retri"},
		{"the and of a", ""},
		{"REST APIs need IDs and URLs; IDsFor XMLHttpRequest", "rest api id url id idsfor xml http request xmlhttprequest"},
		{"Ça coûte 5 €, naïve café", "ca cout naiv cafe"},
		{"cafe\u0301 Zu\u0308rich Ёлка Ἀθῆναι", "cafe zurich елка αθηναι"},
		{"हिन्दी 東京タワー", "हिन्दी 東京 京タ タワ ワー"},
		// Chinese, Japanese and Korean runs give their bigrams, of any
		// length, beside the words of other scripts.
		{"数据库迁移", "数据 据库 库迁 迁移"},
		{"部署前运行迁移脚本，否则缓存会失效。", "部署 署前 前运 运行 行迁 迁移 移脚 脚本 否则 则缓 缓存 存会 会失 失效"},
		{"键", "键"},
		{"サーバーの設定", "サー ーバ バー ーの の設 設定"},
		{"한국어 검색", "한국 국어 검색"},
		{"Drupal的缓存API键值", "drupal 的缓 缓存 api 键值"},
		// Thai: a character is a letter with the marks written on it
		// (ย้ is ย and the tone mark ้).
		{"ย้ายฐาน", "ย้า าย ยฐ ฐา าน"},
		{"ก่", "ก่"},
		{strings.Repeat("迁移", 40), strings.TrimSpace(strings.Repeat("迁移 移迁 ", 39)) + " 迁移"},
		{strings.Repeat("x", 70) + " ok word", "word"},
	} {
		if got := strings.Join(terms(c.in), " "); got != c.want {
			t.Errorf("terms(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestAuthoredText(t *testing.T) {
	body := "Use [cache tags](../cache/practice-x.md) and see https://example.com/a_b.\n<!-- note -->\n" +
		"<!-- kk:related:start -->\n# Related\n\n- Related: [practice-y](/y.md)\n<!-- kk:related:end -->\n" +
		"tail [not a link] (x)\n<!-- kk:citations:start -->\n[1] [https://x](https://x)\n<!-- kk:citations:end -->\n"
	got := strings.Join(strings.Fields(authoredText(body)), " ")
	if want := "Use [cache tags and see tail [not a link] (x)"; got != want {
		t.Fatalf("authoredText:\n got %q\nwant %q", got, want)
	}
}

// TestStemMatchesSQLitePorter checks stem against the porter tokenizer of
// the SQLite kk links, over every word of the drupal pack.
func TestStemMatchesSQLitePorter(t *testing.T) {
	words := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(drupalPack, "knowledge"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, w := range strings.FieldsFunc(strings.ToLower(string(src)), func(r rune) bool { return r < 'a' || r > 'z' }) {
			words[w] = true
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the drupal pack (shared/ must sit beside the repository): %v", err)
	}
	if len(words) < 2000 {
		t.Fatalf("only %d distinct words read", len(words))
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	db.SetMaxOpenConns(1)
	for _, s := range []string{
		`CREATE VIRTUAL TABLE p USING fts5(w, tokenize='porter ascii')`,
		`CREATE VIRTUAL TABLE pv USING fts5vocab(p, 'instance')`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	sorted := make([]string, 0, len(words))
	for w := range words {
		sorted = append(sorted, w)
	}
	slices.Sort(sorted)
	tx, _ := db.Begin()
	for i, w := range sorted {
		if _, err := tx.Exec(`INSERT INTO p(rowid, w) VALUES (?, ?)`, i+1, w); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT term, doc FROM pv`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	sqliteStem := map[string]string{}
	for rows.Next() {
		var s string
		var id int
		if err := rows.Scan(&s, &id); err != nil {
			t.Fatal(err)
		}
		sqliteStem[sorted[id-1]] = s
	}
	bad := 0
	for _, w := range sorted {
		if got, want := stem(w), sqliteStem[w]; got != want {
			if bad++; bad <= 20 {
				t.Errorf("stem(%q) = %q, SQLite's porter gives %q", w, got, want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d words differ", bad, len(sorted))
	}
}

func TestSnippet(t *testing.T) {
	want := map[string]bool{"cach": true, "tag": true}
	long := "One two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen " +
		"eighteen nineteen twenty twentyone twentytwo twentythree twentyfour. Attach cache tags to every cached entry; tags name the data."
	for _, c := range []struct{ text, want string }{
		{"Attach cache tags.", "Attach [cache] [tags]."},
		{"Nothing here matches.\n\nAt all.", "Nothing here matches. At all."},
		{long, "…twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty twentyone twentytwo twentythree twentyfour. Attach [cache] [tags] to every [cached] entry; [tags] name the data."},
		{"CacheBackendInterface is the cache bin's API.", "[CacheBackendInterface] is the [cache] bin's API."},
		{"", ""},
	} {
		if got := snippet(c.text, want); got != c.want {
			t.Errorf("snippet(%q)\n got %q\nwant %q", c.text, got, c.want)
		}
	}
	// A CJK word matched by its bigrams is bracketed whole; the window
	// counts characters.
	want = map[string]bool{"迁移": true, "脚本": true, "键": true, "cach": true, "माइग्रेशन": true, "ย้า": true, "าย": true}
	for _, c := range []struct{ text, want string }{
		{"部署前必须运行数据库迁移脚本，否则缓存会失效。", "部署前必须运行数据库[迁移脚本]，否则缓存会失效。"},
		{"数据迁移 and the cache", "数据[迁移] and the [cache]"},
		{"键 值", "[键] 值"},
		// A word whose letters carry marks (Devanagari's vowel signs) is
		// one word, as the analyzer reads it.
		{"डेटाबेस माइग्रेशन तैनाती से पहले", "डेटाबेस [माइग्रेशन] तैनाती से पहले"},
		{"ต้องย้ายฐานข้อมูลก่อน", "ต้อง[ย้าย]ฐานข้อมูลก่อน"},
		{"键值", "键值"},
	} {
		if got := snippet(c.text, want); got != c.want {
			t.Errorf("snippet(%q)\n got %q\nwant %q", c.text, got, c.want)
		}
	}
}

// drupalPack is the kenkeep v2 pack used as the analyzer's corpus; shared/
// sits beside the repository.
// © 2026 Mateu Aguiló Bosch, MIT licence (its LICENSE file is in that folder).
const drupalPack = "../../../shared/fixtures/kenkeep-pack-drupal"

// TestAuthoredTextKeepsQuotedMarkers: a note quoting the generated-block
// markers in a sentence (one documenting kk's format) kept none of the
// words between two quoted markers in the search text; the blocks are
// found as a write finds them, by whole marker lines
// (node.TestRenderSectionsQuotedMarkers).
func TestAuthoredTextKeepsQuotedMarkers(t *testing.T) {
	body := "Use `<!-- kk:related:start -->` to open. DURABLEFACT here.\nClose with `<!-- kk:related:end -->`.\n\n" +
		"<!-- kk:related:start -->\n# Related\n\n- Related: [practice-y](/y.md)\n<!-- kk:related:end -->\n"
	got := authoredText(body)
	if !strings.Contains(got, "DURABLEFACT") || strings.Contains(got, "practice-y") {
		t.Fatalf("authoredText: %q", got)
	}
}
