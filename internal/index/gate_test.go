package index

import (
	"context"
	"fmt"
	"testing"
)

// gated runs the prompt-context hook's search (the gate on) over k.
func gated(t *testing.T, db *DB, text string) []Hit {
	t.Helper()
	hits, err := db.Search(context.Background(), Request{Text: text, Limit: 5, Gate: true})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// A young knowledge base of a few notes has never seen most of the words
// a question wraps its subject in; the gate answers a question about one
// of its notes all the same, and still refuses one about another
// technology. Before, the known-share rule weighed "work", "watch" and
// "change" as names of another subject and refused both questions below.
func TestGateAnswersAYoungKnowledgeBase(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	writeLeaf(t, k, "practice-cache-invalidation.md", leaf("practice-cache-invalidation", "Cache invalidation rules",
		"How the render cache is invalidated", []string{"cache"}, "", "Tag every cached render with the entity's cache tags; invalidate the tags when the entity is saved."))
	writeLeaf(t, k, "practice-release.md", leaf("practice-release-train", "Release train",
		"How releases ship", nil, "", "The release train leaves every Tuesday; a release misses it when its checks fail."))
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	for _, q := range []string{
		"when an entity is saved, which tags get invalidated? I'm refactoring the storefront pricing module",
		"a failing check makes my release miss Tuesday's departure; is there a later one that week?",
		"I'm refactoring the storefront pricing module; how should its cached render be invalidated?",
	} {
		if hits := gated(t, db, q); len(hits) == 0 {
			t.Errorf("%q: refused; want the note that answers it", q)
		}
	}
	for _, q := range []string{
		"My Kubernetes pod is stuck in CrashLoopBackOff and kubectl logs shows nothing useful. How do I find out why the container keeps exiting?",
		"In SwiftUI, why does my List row lose its selection highlight when the underlying array is re-sorted?",
	} {
		if hits := gated(t, db, q); len(hits) != 0 {
			t.Errorf("%q: %v; want nothing (another subject)", q, ids(hits))
		}
	}
}

// A question naming a leaf by its title is answered whatever its other
// words, even in a knowledge base whose notes share a narrow vocabulary
// that holds none of them (here, generated notes: "work", "watch" and
// "change" are words no note holds, which the known share alone reads
// as another subject).
func TestGateAnswersAQuestionNamingATitle(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	words := []string{"timeout", "sync", "metric", "parser", "trace", "model", "worker", "config", "token", "graph", "lint", "tint", "fest", "mraph"}
	for i := range 120 {
		a, b, c := words[i%len(words)], words[(i/3+5)%len(words)], words[(i/7+2)%len(words)]
		title := fmt.Sprintf("%s %s %s %d", a, b, c, i)
		writeLeaf(t, k, fmt.Sprintf("gen/n-%03d.md", i), leaf(fmt.Sprintf("map-gen-%03d", i), title,
			fmt.Sprintf("%s of the %s %s", b, a, c), nil, "", fmt.Sprintf("The %s %s keeps its %s in the %s.", a, b, c, words[(i+3)%len(words)])))
	}
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	want := "map-gen-011"
	hits, err := db.Search(ctx, Request{Text: "tint timeout sync 11", Limit: 1})
	if err != nil || len(hits) == 0 || hits[0].ID != want {
		t.Fatalf("the title itself: %v %v; want %s", ids(hits), err, want)
	}
	title := hits[0].Title
	q := fmt.Sprintf("how does the %s work, and what should I watch for when I change it?", title[:len(title)-3])
	if hits := gated(t, db, q); len(hits) == 0 {
		t.Errorf("%q: refused; want %s", q, want)
	}
	// The same words, the title's not next to each other: the known
	// share alone judges, and refuses.
	q = "how does a tint work when I change the sync of its timeout, and what should I watch for?"
	if hits := gated(t, db, q); len(hits) != 0 {
		t.Errorf("%q: %v; want nothing (no title named, most words unknown)", q, ids(hits))
	}
}

// namesTitle: two adjacent terms of the title, adjacent in the question
// in the same order, stop words aside.
func TestNamesTitle(t *testing.T) {
	for _, c := range []struct {
		q, title string
		want     bool
	}{
		{"how does the render cache work?", "Render cache tags", true},
		{"how does the cache of the render work?", "Render cache tags", false},
		{"the render and the cache", "Render cache tags", true}, // stop words aside
		{"caching renders", "Render cache tags", false},         // order
		{"render", "Render", false},                             // one term: no pair
		{"what does CacheBackendInterface do", "Cache backend interface", true},
	} {
		if got := namesTitle(c.q, c.title); got != c.want {
			t.Errorf("namesTitle(%q, %q) = %v, want %v", c.q, c.title, got, c.want)
		}
	}
}

// Phrasings are how a developer would ask for a note, so they are written
// in the everyday words of any question ("set up", "remote", "team",
// "stuck", "logs"). They widen what a search finds; they do not widen what
// the knowledge base is about. The gate judges a text against the notes'
// own words, so a knowledge base with phrasings refuses the off-topic
// questions it refuses without them, and still answers its own. Before,
// the phrasings' words counted as known and these questions got notes.
func TestGateJudgesTheNotesOwnWordsNotThePhrasings(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	writeLeaf(t, k, "practice-cache-invalidation.md", leaf("practice-cache-invalidation", "Cache invalidation rules",
		"How the render cache is invalidated", []string{"cache"},
		"kk_phrasings:\n  - why does my page still show old data after I save\n  - how do I set up clearing of stale content for the team\n  - where do the logs say what got cleared\n  - my change is stuck behind a cached copy, how do I find out why\n",
		"Tag every cached render with the entity's cache tags; invalidate the tags when the entity is saved."))
	writeLeaf(t, k, "practice-release.md", leaf("practice-release-train", "Release train",
		"How releases ship", nil,
		"kk_phrasings:\n  - when does the next release go out to the remote servers\n  - my change missed the train, what keeps it from shipping\n  - who can lock the release state for the whole team\n  - how many days a week does the build run\n",
		"The release train leaves every Tuesday; a release misses it when its checks fail."))
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	for _, q := range []string{
		"when an entity is saved, which tags get invalidated?",
		"a failing check makes my release miss Tuesday's departure; is there a later one that week?",
		"my page still shows old data after I save",
	} {
		if hits := gated(t, db, q); len(hits) == 0 {
			t.Errorf("%q: refused; want the note that answers it", q)
		}
	}
	for _, q := range []string{
		"How do I set up a Terraform S3 remote backend with DynamoDB state locking for a team of five?",
		"My Kubernetes pod is stuck in CrashLoopBackOff and kubectl logs shows nothing useful. How do I find out why the container keeps exiting?",
	} {
		if hits := gated(t, db, q); len(hits) != 0 {
			t.Errorf("%q: %v; want nothing (another subject)", q, ids(hits))
		}
	}
}
