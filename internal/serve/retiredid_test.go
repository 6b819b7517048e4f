package serve

import (
	"context"
	"path"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/reorg"
)

// TestPostWhoseIDWasRetiredGetsAnother: a post whose title derives an id
// the redirect ledger retired (the note once written under it was renamed
// by a person, or split) is written under the next free id, as one whose
// id a live note holds is. kk node write refuses a retired id, since the
// edges still naming it lead to its successor and a new note would take
// them over; kk serve picks the id itself, and the job must not fail for
// it.
func TestPostWhoseIDWasRetiredGetsAnother(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	first := s.post(t, httpapi.PostRequest{Title: "Channels carry values", Content: "Channels pass values between goroutines.\n"})
	if first.Status != "done" {
		t.Fatalf("first job: %+v", first)
	}
	id := strings.TrimSuffix(path.Base(first.Path), ".md")
	if _, err := reorg.RenameNote(context.Background(), k, id, id+"-before", reorg.RenameOptions{Command: "test"}); err != nil {
		t.Fatal(err)
	}
	git(t, k, "add", "-A")
	git(t, k, "commit", "-qm", "renamed by hand")
	second := s.post(t, httpapi.PostRequest{Title: "Channels carry values", Content: "Channels close when the sender is done.\n"})
	if second.Status != "done" {
		t.Fatalf("second job, whose title derives the retired id %s: %+v", id, second)
	}
	if got := strings.TrimSuffix(path.Base(second.Path), ".md"); got != id+"-2" {
		t.Errorf("second note's id %s, want %s-2", got, id)
	}
	clean(t, k)
}
