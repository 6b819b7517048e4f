package index

import (
	"context"
	"strings"
	"testing"
)

// A note copied by hand into another folder without an id of its own: a
// tree read, kk read and the graph's readers leave both leaves out (their
// id names no one leaf), and so does search, which listed the id twice.
func TestSearchLeavesOutLeavesSharingAnID(t *testing.T) {
	ctx := context.Background()
	db := zebraCopiedByHand(t)
	hits, err := Search(ctx, db, "zebra crossing", 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(hits); len(got) != 1 || got[0] != "practice-zebra-herd" {
		t.Fatalf("Search(zebra crossing) = %v; want only practice-zebra-herd (the two leaves of practice-zebra-crossing share its id)", got)
	}
}

// A snippet is a few words of context, however long the words of the
// body: a 20,000-character word (a hash pasted whole, a line of one
// character) is shortened, matched or not.
func TestSnippetOfVeryLongWordsIsBounded(t *testing.T) {
	long := strings.Repeat("x", 20000)
	dashes := strings.Repeat("-", 20000)
	for _, text := range []string{
		"the token " + long + " follows",
		"token " + dashes + " more words " + long,
		long + " token",
	} {
		s := snippet(text, map[string]bool{"token": true, long: true})
		if len(s) > 2*snippetWords*(maxWordLen+8) {
			t.Errorf("snippet of %d bytes: %d bytes long", len(text), len(s))
		}
		if !strings.Contains(s, SnippetOpen+"token"+SnippetClose) {
			t.Errorf("snippet %.120q… lost the match", s)
		}
	}
}

// Accents are folded on both sides: a note written in French or German
// is found by a search typed without them, and one written without them
// by a search typed with them, in either Unicode form.
func TestSearchFoldsAccents(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	writeLeaf(t, k, "places/practice-zurich-office.md", leaf("practice-zurich-office", "Zürich office", "Where the team meets", nil, "", "The café on the ground floor opens at seven."))
	writeLeaf(t, k, "places/practice-resume-review.md", leaf("practice-resume-review", "Resume review", "Hiring", nil, "", "Every resume is read by two people."))
	writeLeaf(t, k, "places/practice-parking.md", leaf("practice-parking", "Parking", "Cars", nil, "", "Park behind the building."))
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	for q, want := range map[string]string{
		"zurich cafe":             "practice-zurich-office",
		"Zu\u0308rich cafe\u0301": "practice-zurich-office",
		"résumé":                  "practice-resume-review",
	} {
		hits, err := Search(ctx, db, q, 10)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(hits); len(got) == 0 || got[0] != want {
			t.Errorf("Search(%q) = %v; want %s first", q, got, want)
		}
	}
}

// The early answer a hook offers before feedback leaves out leaves that
// share an id, as the final answer does.
func TestEarlyHitsLeaveOutLeavesSharingAnID(t *testing.T) {
	ctx := context.Background()
	db := zebraCopiedByHand(t)
	var early []Hit
	if _, err := db.Search(ctx, Request{Text: "zebra crossing", Limit: 10, Early: func(h []Hit) { early = h }}); err != nil {
		t.Fatal(err)
	}
	if got := ids(early); len(got) != 1 || got[0] != "practice-zebra-herd" {
		t.Fatalf("early hits %v; want only practice-zebra-herd (the two leaves of practice-zebra-crossing share its id)", got)
	}
}

// zebraCopiedByHand is the index of a knowledge base where a note was
// copied by hand into another folder, both copies keeping its id
// (practice-zebra-crossing), beside a note of its own (practice-zebra-herd).
func zebraCopiedByHand(t *testing.T) *DB {
	t.Helper()
	k := seedKB(t)
	note := leaf("practice-zebra-crossing", "Zebra crossing", "Where pedestrians cross", nil, "", "Zebra crossings are painted stripes.")
	writeLeaf(t, k, "roads/practice-zebra-crossing.md", note)
	writeLeaf(t, k, "copy/practice-zebra-crossing.md", note)
	writeLeaf(t, k, "roads/practice-zebra-herd.md", leaf("practice-zebra-herd", "Zebra herd", "Animals", nil, "", "A herd of zebra grazing."))
	db, _, err := Open(context.Background(), k, "main")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}
