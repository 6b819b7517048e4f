package serve

import (
	"os"
	"slices"
	"testing"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/node"
)

// With a model configured, the organizer writes the note's phrasings as
// the model gives them (kk_phrasings, which search indexes); a phrasing
// that is not one line is dropped, not a reason to fail the post.
func TestTheModelsPhrasingsAreWritten(t *testing.T) {
	k := newRepo(t, 0)
	answer := `{"folder":"go/concurrency","title":"Channels","description":"What channels are for","type":"map","tags":["golang"],` +
		`"phrasings":["how do goroutines hand values to each other"," my workers deadlock on an unbuffered send ","two\nlines","how do goroutines hand values to each other"]}`
	_, p := modelServer(t, answer, func(int) int { return 0 })
	s := start(t, k, p)
	j := s.post(t, httpapi.PostRequest{Content: "Channels pass values between goroutines.\n"})
	if j.Status != "done" || j.Path != "go/concurrency/map-channels.md" {
		t.Fatalf("job: %+v", j)
	}
	src, err := os.ReadFile(k.NodePath(j.Path))
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.Parse(j.Path, src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"how do goroutines hand values to each other", "my workers deadlock on an unbuffered send"}
	if !slices.Equal(n.Phrasings, want) {
		t.Errorf("kk_phrasings %q, want %q", n.Phrasings, want)
	}
	clean(t, k)
}
