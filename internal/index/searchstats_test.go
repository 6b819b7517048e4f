package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// countedSearchStats is search_stats as the full count over every search
// doc gives it, computed here with the same SQL as setSearchStats.
func countedSearchStats(t *testing.T, db *DB) string {
	t.Helper()
	var n int64
	var tot [numFields]float64
	if err := db.r.QueryRow(`SELECT count(*), total(len_title), total(len_description), total(len_tags), total(len_phrasings), total(len_body)
		FROM search_docs INDEXED BY search_docs_lens`).Scan(&n, &tot[0], &tot[1], &tot[2], &tot[3], &tot[4]); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d %d %d %d %d %d", n, int64(tot[0]), int64(tot[1]), int64(tot[2]), int64(tot[3]), int64(tot[4]))
}

func storedSearchStats(t *testing.T, db *DB) string {
	t.Helper()
	v, err := db.Meta(context.Background(), "search_stats")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSyncPathsSearchStats: SyncPaths updates search_stats by the docs it
// inserts, replaces and deletes, leaves' and extracted entities' alike,
// and the value it stores is, after every step of a random sequence of
// writes, exactly what counting every doc gives. An extracted document
// takes the id of a leaf now and then, so that the clash recheck rewrites
// entities too.
func TestSyncPathsSearchStats(t *testing.T) {
	ctx := context.Background()
	k, db, ex := openPadded(t, 10)
	rng := rand.New(rand.NewPCG(7, 11))
	words := strings.Fields("queue worker cache token session login render handler retry backoff index search ranking field length corpus " +
		"ledger invoice refund webhook tenant quota shard replica lease lock")
	text := func(max int) string {
		out := make([]string, rng.IntN(max+1))
		for i := range out {
			out[i] = words[rng.IntN(len(words))]
		}
		return strings.Join(out, " ")
	}
	writeSource := func(rel, content string) {
		p := filepath.Join(k.Root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Leaves the steps write: the seed's and the padding's, and new ones;
	// pool/p0.md has the id req-clash, which a document declares too.
	rels := []string{"auth/session-tokens.md", "auth/login-flow.md", "cache/render-cache.md", "filler/practice-filler-3.md", "filler/practice-filler-7.md"}
	for i := range 8 {
		rels = append(rels, fmt.Sprintf("pool/p%d.md", i))
	}
	id := func(rel string) string {
		switch rel {
		case "pool/p0.md":
			return "req-clash"
		case "auth/session-tokens.md":
			return "practice-session-tokens"
		case "auth/login-flow.md":
			return "map-login-flow"
		case "cache/render-cache.md":
			return "practice-render-cache"
		}
		return "practice-" + strings.TrimSuffix(filepath.Base(rel), ".md")
	}
	sources := []string{"docs/requirements/r0.md", "docs/requirements/r1.md", "docs/requirements/r2.md", "docs/requirements/clash.md"}
	var leafSteps, extractSteps, clashSteps int
	for step := range 120 {
		var names []string
		for range 1 + rng.IntN(3) {
			rel := rels[rng.IntN(len(rels))]
			names = append(names, rel)
			if _, err := os.Stat(k.NodePath(rel)); err == nil && rng.IntN(4) == 0 {
				if err := os.Remove(k.NodePath(rel)); err != nil {
					t.Fatal(err)
				}
				continue
			}
			var tags []string
			for range rng.IntN(3) {
				tags = append(tags, words[rng.IntN(len(words))])
			}
			extra := ""
			if n := rng.IntN(3); n > 0 {
				extra = "kk_phrasings:\n"
				for range n {
					extra += "  - how do I " + text(5) + "\n"
				}
			}
			writeLeaf(t, k, rel, leaf(id(rel), "T "+text(4), "D "+text(6), tags, extra, text(30)))
		}
		if rng.IntN(3) == 0 {
			rel := sources[rng.IntN(len(sources))]
			docID := fmt.Sprintf("REQ-%d", rng.IntN(3))
			if rel == "docs/requirements/clash.md" {
				docID = "req-clash"
			}
			if _, err := os.Stat(filepath.Join(k.Root, rel)); err == nil && rng.IntN(3) == 0 {
				if err := os.Remove(filepath.Join(k.Root, rel)); err != nil {
					t.Fatal(err)
				}
			} else {
				writeSource(rel, fmt.Sprintf("---\nid: %s\ntype: req\ntitle: %s\n---\n# %s\n\n%s\n", docID, "R "+text(3), text(3), text(20)))
			}
		}
		st, err := db.SyncPaths(ctx, k.NodesDir(), ex, names)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if st.Unchanged != 0 {
			t.Fatalf("step %d: SyncPaths took the full sync: %+v", step, st)
		}
		if st.Added+st.Updated+st.Removed > 0 {
			leafSteps++
		}
		if st.Extracted.Added+st.Extracted.Updated+st.Extracted.Removed > 0 {
			extractSteps++
		}
		for _, p := range st.Skipped {
			if strings.Contains(p.Msg, "req-clash") {
				clashSteps++
				break
			}
		}
		if got, want := storedSearchStats(t, db), countedSearchStats(t, db); got != want {
			t.Fatalf("step %d (%v, %+v): search_stats %q, counted %q", step, names, st, got, want)
		}
	}
	if leafSteps < 100 || extractSteps < 20 || clashSteps < 10 {
		t.Fatalf("the sequence changed leaves in %d steps, extracted entities in %d, had the clash in %d", leafSteps, extractSteps, clashSteps)
	}

	// The value is updated, not counted again: one shifted by hand stays
	// shifted. (This is how the steps above are known to test the update.)
	shift := func(v string, by int64) string {
		f := strings.Fields(v)
		for i := range f {
			var n int64
			_, _ = fmt.Sscan(f[i], &n)
			f[i] = fmt.Sprint(n + by)
		}
		return strings.Join(f, " ")
	}
	setStats := func(v string) {
		if _, err := db.w.Exec(`UPDATE meta SET value = ? WHERE key = 'search_stats'`, v); err != nil {
			t.Fatal(err)
		}
	}
	setStats(shift(countedSearchStats(t, db), 1000))
	writeLeaf(t, k, "pool/p1.md", leaf(id("pool/p1.md"), "Shifted", "by hand", nil, "", "one two three"))
	writeSource("docs/requirements/r0.md", "---\nid: REQ-0\ntype: req\ntitle: Shifted\n---\n# Shifted\n\nfour five\n")
	if st, err := db.SyncPaths(ctx, k.NodesDir(), ex, []string{"pool/p1.md"}); err != nil || st.Updated+st.Added != 1 || st.Extracted.Updated+st.Extracted.Added != 1 {
		t.Fatalf("SyncPaths = %+v, %v", st, err)
	}
	if got, want := storedSearchStats(t, db), shift(countedSearchStats(t, db), 1000); got != want {
		t.Fatalf("search_stats %q, want the shifted %q", got, want)
	}

	// A value that does not read back as written is counted again.
	for _, bad := range []string{"", "1 2 3", "01 2 3 4 5 6", "1 2 3 4 5 -6", "1  2 3 4 5 6", "x 2 3 4 5 6"} {
		setStats(bad)
		writeLeaf(t, k, "pool/p1.md", leaf(id("pool/p1.md"), "Counted", "again", nil, "", text(10)+" "+bad))
		if _, err := db.SyncPaths(ctx, k.NodesDir(), ex, []string{"pool/p1.md"}); err != nil {
			t.Fatal(err)
		}
		if got, want := storedSearchStats(t, db), countedSearchStats(t, db); got != want {
			t.Fatalf("after %q: search_stats %q, counted %q", bad, got, want)
		}
	}
}
