package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/store"
)

// newKB makes an empty knowledge base in a temporary folder.
func newKB(t *testing.T) *store.KB {
	t.Helper()
	k := store.New(t.TempDir())
	if _, err := k.Scaffold(store.InitOptions{Version: "test", Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Command: "test"}); err != nil {
		t.Fatal(err)
	}
	return k
}

// leaf renders a v3 leaf; extra is appended to the front matter verbatim.
func leaf(id, title, desc string, tags []string, extra, body string) string {
	var b strings.Builder
	typ, _, _ := strings.Cut(id, "-")
	fmt.Fprintf(&b, "---\ntype: %s\ntitle: %s\ndescription: %s\n", typ, title, desc)
	b.WriteString("tags:")
	if len(tags) == 0 {
		b.WriteString(" []")
	}
	b.WriteString("\n")
	for _, tg := range tags {
		fmt.Fprintf(&b, "  - %s\n", tg)
	}
	fmt.Fprintf(&b, "kk_schema_version: 3\nkk_id: %s\nkk_derived_from: []\n", id)
	for _, key := range []string{"kk_relates_to", "kk_depends_on"} {
		if !strings.Contains(extra, key+":") {
			b.WriteString(key + ": []\n")
		}
	}
	fmt.Fprintf(&b, "%skk_confidence: high\n---\n%s\n", extra, body)
	return b.String()
}

func writeLeaf(t *testing.T, k *store.KB, rel, content string) {
	t.Helper()
	p := k.NodePath(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// age sets a leaf's mtime an hour back, out of the racy window.
func age(t *testing.T, k *store.KB, rels ...string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	for _, rel := range rels {
		if err := os.Chtimes(k.NodePath(rel), old, old); err != nil {
			t.Fatal(err)
		}
	}
}

func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func seedKB(t *testing.T) *store.KB {
	k := newKB(t)
	writeLeaf(t, k, "auth/session-tokens.md", leaf("practice-session-tokens", "Session tokens", "How login sessions are issued and refreshed", []string{"auth", "security"},
		"kk_relates_to:\n  - map-login-flow\nkk_paths:\n  - src/auth/**\n  - src/session.go\nkk_version: 4\nkk_changelog:\n  - at: 2026-01-01T00:00:00Z\n    task: T-1\n    summary: first\n",
		"Tokens rotate every hour. Refreshing uses the refresh endpoint."))
	writeLeaf(t, k, "auth/login-flow.md", leaf("map-login-flow", "Login flow", "Pages and handlers of the login", []string{"auth"}, "", "The login form posts credentials to the handler."))
	writeLeaf(t, k, "cache/render-cache.md", leaf("practice-render-cache", "Render cache", "Cache tags and contexts for rendered output", []string{"cache", "performance"},
		"kk_edges:\n  - type: verified_by\n    to: test-cache-hit\n    created_at: 2026-01-01T00:00:00Z\n    created_by: tester\n    source: manual\n", "Invalidate with cache tags; never clear the whole cache."))
	age(t, k, "auth/session-tokens.md", "auth/login-flow.md", "cache/render-cache.md")
	return k
}

func TestSyncIncremental(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	db, st, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if st.Added != 3 || st.Leaves != 3 || st.Removed != 0 || len(st.Skipped) != 0 {
		t.Fatalf("first sync: %+v; want 3 added", st)
	}
	var patterns, edges, changes int
	if err := db.r.QueryRow(`SELECT count(*) FROM kk_paths`).Scan(&patterns); err != nil {
		t.Fatal(err)
	}
	if err := db.r.QueryRow(`SELECT count(*) FROM edges`).Scan(&edges); err != nil {
		t.Fatal(err)
	}
	if err := db.r.QueryRow(`SELECT count(*) FROM changelog`).Scan(&changes); err != nil {
		t.Fatal(err)
	}
	if patterns != 2 || edges != 2 || changes != 1 {
		t.Errorf("kk_paths=%d edges=%d changelog=%d; want 2, 2, 1", patterns, edges, changes)
	}
	var version int
	var molecule, tags string
	if err := db.r.QueryRow(`SELECT version, molecule, tags FROM nodes WHERE id = 'practice-session-tokens'`).Scan(&version, &molecule, &tags); err != nil {
		t.Fatal(err)
	}
	if version != 4 || tags != "auth security" {
		t.Errorf("version=%d tags=%q; want 4, \"auth security\"", version, tags)
	}
	if v, _ := db.Meta(ctx, "last_sync"); v == "" {
		t.Error("meta last_sync is empty after a sync")
	}

	// Nothing changed: nothing is read.
	st, err = db.Sync(ctx, k.NodesDir())
	if err != nil || st.Unchanged != 3 || st.Changed() || st.Touched != 0 {
		t.Fatalf("no-change sync: %+v, %v; want 3 unchanged", st, err)
	}

	// Touch without change, edit, add, remove, and break one leaf.
	now := time.Now().Add(-30 * time.Minute)
	if err := os.Chtimes(k.NodePath("auth/login-flow.md"), now, now); err != nil {
		t.Fatal(err)
	}
	writeLeaf(t, k, "cache/render-cache.md", leaf("practice-render-cache", "Render cache", "Cache tags and contexts", []string{"cache"}, "", "Use bubbling metadata."))
	writeLeaf(t, k, "jobs/queue.md", leaf("map-queue", "Queue workers", "Background queue", []string{"jobs"}, "kk_depends_on:\n  - practice-render-cache\n", "Workers drain the queue."))
	if err := os.Remove(k.NodePath("auth/session-tokens.md")); err != nil {
		t.Fatal(err)
	}
	writeLeaf(t, k, "broken.md", "---\ntitle: [unclosed\n---\n")
	st, err = db.Sync(ctx, k.NodesDir())
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != 1 || st.Updated != 1 || st.Touched != 1 || st.Removed != 1 || st.Leaves != 3 || len(st.Skipped) != 1 || st.Skipped[0].Path != "broken.md" {
		t.Fatalf("incremental sync: %+v", st)
	}
	if err := db.r.QueryRow(`SELECT count(*) FROM kk_paths`).Scan(&patterns); err != nil {
		t.Fatal(err)
	}
	if err := db.r.QueryRow(`SELECT count(*) FROM edges`).Scan(&edges); err != nil {
		t.Fatal(err)
	}
	if err := db.r.QueryRow(`SELECT count(*) FROM changelog`).Scan(&changes); err != nil {
		t.Fatal(err)
	}
	if patterns != 0 || edges != 1 || changes != 0 {
		t.Errorf("after removal kk_paths=%d edges=%d changelog=%d; want 0, 1, 0", patterns, edges, changes)
	}
	hits, err := holders(ctx, db, "bubbling", 5)
	if err != nil || !slices.Equal(ids(hits), []string{"practice-render-cache"}) {
		t.Errorf("search for the edited body: %v, %v", ids(hits), err)
	}
	if hits, _ := holders(ctx, db, "tokens", 5); len(hits) != 0 {
		t.Errorf("search finds a removed leaf: %v", ids(hits))
	}
	if hits, _ := holders(ctx, db, "invalidate", 5); len(hits) != 0 {
		t.Errorf("search finds the old body of an edited leaf: %v", ids(hits))
	}
}

// A same-size edit inside the racy window is seen even though size and
// mtime look unchanged.
func TestSyncRacyEdit(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	writeLeaf(t, k, "a.md", leaf("practice-a", "Alpha", "first", nil, "", "apple"))
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	fi, _ := os.Stat(k.NodePath("a.md"))
	writeLeaf(t, k, "a.md", leaf("practice-a", "Alpha", "first", nil, "", "mango"))
	if err := os.Chtimes(k.NodePath("a.md"), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	st, err := db.Sync(ctx, k.NodesDir())
	if err != nil || st.Updated != 1 {
		t.Fatalf("sync after a same-size, same-mtime edit: %+v, %v; want 1 updated", st, err)
	}
	if hits, _ := holders(ctx, db, "mango", 5); len(hits) != 1 {
		t.Errorf("the racy edit is not indexed: %v", ids(hits))
	}
}

func TestSchemaMismatchRebuilds(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.Exec(`UPDATE meta SET value = '0' WHERE key = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.Exec(`CREATE TABLE stray (x)`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, st, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if st.Added != 3 {
		t.Errorf("sync after a schema change: %+v; want every leaf added again", st)
	}
	var n int
	if err := db.r.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'stray'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if v, _ := db.Meta(ctx, "schema_version"); v != fmt.Sprint(SchemaVersion) || n != 0 {
		t.Errorf("schema_version=%q stray tables=%d after rebuild", v, n)
	}
}

// Two syncs at once (two handles, as two processes would have) both succeed
// and leave one consistent index.
func TestConcurrentSyncs(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	for i := range 40 {
		writeLeaf(t, k, fmt.Sprintf("bulk/n%02d.md", i), leaf(fmt.Sprintf("practice-n%02d", i), fmt.Sprintf("Note %d", i), "bulk note", []string{"bulk"}, "", strings.Repeat("filler words ", 50)))
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for g := range errs {
		wg.Go(func() {
			_, errs[g] = Sync(ctx, k, "main")
		})
	}
	// A reader keeps searching meanwhile and sees either no index or a whole one.
	wg.Go(func() {
		for range 20 {
			db, err := openFile(ctx, Path(k, "main"), "main")
			if err != nil {
				continue
			}
			hits, err := holders(ctx, db, "bulk", 100)
			if err == nil && len(hits) != 0 && len(hits) != 40 {
				t.Errorf("reader saw %d of 40 bulk leaves", len(hits))
			}
			_ = db.Close()
		}
	})
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	db, st, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if st.Leaves != 43 || st.Changed() {
		t.Errorf("after concurrent syncs: %+v; want 43 leaves, nothing left to do", st)
	}
	var check string
	if err := db.r.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil {
		t.Fatal(err)
	}
	if check != "ok" {
		t.Errorf("integrity_check: %s", check)
	}
}

func TestEncodeBranch(t *testing.T) {
	for _, b := range []string{"main", "feature/login", ".hidden", "a..b", "x%y", "über", "detached-abc123", "release/1.2"} {
		enc := EncodeBranch(b)
		if strings.ContainsAny(enc, "/\\") || strings.HasPrefix(enc, ".") {
			t.Errorf("EncodeBranch(%q) = %q is not a safe folder name", b, enc)
		}
		if dec, ok := DecodeBranch(enc); !ok || dec != b {
			t.Errorf("DecodeBranch(%q) = %q, %v; want %q", enc, dec, ok, b)
		}
	}
	for _, bad := range []string{"", "a%2", "a%zz", "a%2f", "%61"} {
		if dec, ok := DecodeBranch(bad); ok {
			t.Errorf("DecodeBranch(%q) = %q; want it rejected", bad, dec)
		}
	}
	// git allows each part of a branch name (between slashes) up to what
	// the file system does, 255 bytes, and the encoding joins the parts
	// and triples every byte outside ASCII: a name longer than a folder
	// may be gets a prefix of the encoding and a hash of the whole name.
	long := []string{
		strings.Repeat("ü", 100),
		strings.Repeat("ü", 100) + "x",
		strings.Repeat("a", 200) + "/" + strings.Repeat("b", 200),
		strings.Repeat("功能", 50),
	}
	seen := map[string]string{}
	for _, b := range long {
		enc := EncodeBranch(b)
		if len(enc) > 255 || strings.ContainsAny(enc, "/\\") || enc != EncodeBranch(b) {
			t.Errorf("EncodeBranch(%q) = %q (%d bytes)", b, enc, len(enc))
		}
		if o, dup := seen[enc]; dup {
			t.Errorf("%q and %q both encode to %q", o, b, enc)
		}
		seen[enc] = b
		if _, ok := DecodeBranch(enc); ok {
			t.Errorf("DecodeBranch(%q) decoded a shortened name", enc)
		}
	}
}

// User text never produces an FTS5 syntax error.
func TestSearchEscapesQueries(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	for _, q := range []string{`"`, `cache"`, `a AND OR NOT`, `(cache`, `cache*`, `title:cache`, `NEAR(a b)`, `^cache`, `-cache +tags`, `c++ node.js`, `'`, `{}`, `cache -`, "tags\x00", `""""`, `AND`, `-`} {
		if _, err := Search(ctx, db, q, 5); err != nil {
			t.Errorf("Search(%q): %v", q, err)
		}
	}
	if hits, err := Search(ctx, db, "  ---  ", 5); err != nil || len(hits) != 0 {
		t.Errorf("punctuation-only query: %v, %v; want no hits", ids(hits), err)
	}
	if _, err := Search(ctx, db, "cache", 0); err == nil {
		t.Error("a zero limit was accepted")
	}
	// Punctuation inside a word makes a phrase of its parts.
	hits, err := Search(ctx, db, "render-cache", 5)
	if err != nil || !slices.Equal(ids(hits), []string{"practice-render-cache"}) {
		t.Errorf("Search(render-cache) = %v, %v", ids(hits), err)
	}
}

// sortedIDs returns the ids of hits, sorted.
func sortedIDs(hits []Hit) []string {
	out := ids(hits)
	slices.Sort(out)
	return out
}

// holders returns the nodes holding every word of text, best first: the
// filter search (Request.Every), which adds nothing by feedback or graph
// links, so a test of the sync sees exactly the leaves a word is in.
func holders(ctx context.Context, db *DB, text string, limit int) ([]Hit, error) {
	return db.Search(ctx, Request{Text: text, Limit: limit, Every: true})
}

// Ranking: a title match beats a body match; a leaf linked to another top
// hit gets the boost, and is listed after the matches even when it holds
// no word of the text; snippets mark the matched words.
func TestSearchRankingAndSnippets(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	writeLeaf(t, k, "misc/tokens-body.md", leaf("practice-misc", "Misc notes", "Assorted", nil, "", "Mentions tokens once among many other words here."))
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	hits, err := Search(ctx, db, "tokens", 5)
	if err != nil || len(hits) != 3 || hits[0].ID != "practice-session-tokens" || hits[1].ID != "practice-misc" {
		t.Fatalf("Search(tokens) = %v, %v; want the title match, the body match, then the linked map", ids(hits), err)
	}
	if hits[2].ID != "map-login-flow" || hits[2].Linked != 1 || hits[2].Score >= hits[1].Score {
		t.Errorf("the map linked to the best hit: %+v; want it last, linked to one strong hit", hits[2])
	}
	if !strings.Contains(hits[0].Snippet, SnippetOpen+"tokens"+SnippetClose) && !strings.Contains(hits[0].Snippet, SnippetOpen+"Tokens"+SnippetClose) {
		t.Errorf("snippet %q does not mark the match", hits[0].Snippet)
	}
	// NoSnippets: the same hits in the same order, without snippets.
	bare, err := db.Search(ctx, Request{Text: "tokens", Limit: 5, NoSnippets: true})
	if err != nil || len(bare) != len(hits) {
		t.Fatalf("Search(tokens, NoSnippets) = %v, %v", ids(bare), err)
	}
	for i := range bare {
		if bare[i].ID != hits[i].ID || bare[i].Score != hits[i].Score || bare[i].Snippet != "" {
			t.Errorf("hit %d without snippets: %+v, with: %+v", i, bare[i], hits[i])
		}
	}
	// "login" matches the login-flow map (title) and the session-tokens
	// practice (description); they are linked by relates_to.
	hits, err = Search(ctx, db, "login", 5)
	if err != nil || len(hits) < 2 || !slices.Equal(sortedIDs(hits[:2]), []string{"map-login-flow", "practice-session-tokens"}) {
		t.Fatalf("Search(login) = %v, %v; want the two leaves holding the word first", ids(hits), err)
	}
	for _, h := range hits[:2] {
		if h.Linked != 1 {
			t.Errorf("%s: linked = %d; want 1 (relates_to between the two hits)", h.ID, h.Linked)
		}
	}
}

// Request.Early gets the text's own ranking: what the same search gives
// without feedback and graph neighbours.
func TestSearchEarly(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	writeLeaf(t, k, "misc/tokens-body.md", leaf("practice-misc", "Misc notes", "Assorted", nil, "", "Mentions tokens once among many other words here."))
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	for _, text := range []string{"tokens", "login", "session login tokens"} {
		var early [][]Hit
		full, err := db.Search(ctx, Request{Text: text, Limit: 5, NoSnippets: true, Early: func(h []Hit) { early = append(early, h) }})
		if err != nil || len(full) == 0 {
			t.Fatalf("%q: %v %v", text, ids(full), err)
		}
		plain := DefaultRanking
		plain.FeedbackDocs, plain.NeighbourTop = 0, 0
		want, err := db.Search(ctx, Request{Text: text, Limit: 5, NoSnippets: true, Ranking: &plain})
		if err != nil || len(early) != 1 || !reflect.DeepEqual(early[0], want) {
			t.Fatalf("%q: early %+v, want %+v (%v)", text, early, want, err)
		}
	}
	// The gate comes first: a text it refuses gets no early hits.
	called := false
	hits, err := db.Search(ctx, Request{Text: "kubernetes ingress annotations", Limit: 5, Gate: true, Early: func([]Hit) { called = true }})
	if err != nil || len(hits) != 0 || called {
		t.Fatalf("gated: %v %v, early called %v", ids(hits), err, called)
	}
}

// The gate refuses, before scoring anything, a text whose every term more
// than half of the leaves hold when ranking them would read more postings
// than the budget; a text with a term few leaves hold is let through.
func TestGateRefusesATextNoTermOfWhichTellsLeavesApart(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	for i := range 12 {
		body := "Retry the queue handler after a timeout."
		if i == 0 {
			body += " Backoff doubles each attempt."
		}
		writeLeaf(t, k, fmt.Sprintf("ops/leaf-%02d.md", i), leaf(fmt.Sprintf("practice-ops-%02d", i), fmt.Sprintf("Operations note %d", i), "Queue handling", nil, "", body))
	}
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	search := func(text string, postings int) []Hit {
		t.Helper()
		hits, err := db.Search(ctx, Request{Text: text, Limit: 5, Gate: true, Postings: postings})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	common := "retry the queue handler after a timeout"
	if hits := search(common, 4); len(hits) != 0 {
		t.Errorf("%q with a budget of 4 postings: %v; want nothing (every word is in most leaves)", common, ids(hits))
	}
	if hits := search(common, 0); len(hits) == 0 {
		t.Errorf("%q within the default budget: nothing; want the leaves ranked", common)
	}
	if hits := search(common+" with backoff", 4); len(hits) == 0 || hits[0].ID != "practice-ops-00" {
		t.Errorf("with a rare word: %v; want practice-ops-00 first", ids(hits))
	}
}

// Request.Like reads the text as a document: it searches with the terms
// that best tell the text apart (count times idf), not with every word,
// leaves out terms no leaf holds, and reads a text of thousands of
// distinct words (their document frequencies looked up in chunks).
func TestSearchLike(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	writeLeaf(t, k, "misc/release.md", leaf("practice-release-train", "Release train", "How releases ship", nil, "", "The release train leaves every Tuesday; a release misses it when its checks fail."))
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	// A note about tokens that names the release train once, padded with
	// thousands of words no leaf holds: with one term, Like searches with
	// the word the note repeats, not the first one.
	var b strings.Builder
	b.WriteString("release notes. ")
	for i := range 3000 {
		fmt.Fprintf(&b, "zq%dx ", i)
	}
	b.WriteString("tokens tokens tokens")
	hits, err := db.Search(ctx, Request{Text: b.String(), Like: 1, Limit: 5, NoSnippets: true})
	if err != nil || len(hits) == 0 || hits[0].ID != "practice-session-tokens" {
		t.Fatalf("Search(Like 1) = %v, %v; want the tokens practice first", ids(hits), err)
	}
	for _, h := range hits {
		if h.ID == "practice-release-train" {
			t.Errorf("Like 1 searched with %q too: %v", "release", ids(hits))
		}
	}
	// With more terms the release train is found too.
	hits, err = db.Search(ctx, Request{Text: b.String(), Like: 5, Limit: 5, NoSnippets: true})
	if err != nil || !slices.Contains(ids(hits), "practice-release-train") {
		t.Fatalf("Search(Like 5) = %v, %v; want the release train among the hits", ids(hits), err)
	}
	// A text whose every word no leaf holds finds nothing.
	hits, err = db.Search(ctx, Request{Text: "zq1x zq2x", Like: 5, Limit: 5})
	if err != nil || len(hits) != 0 {
		t.Fatalf("Search(Like, unknown words) = %v, %v; want none", ids(hits), err)
	}
}
