package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
)

// A person's uncommitted edit of a note that origin changed too is never
// put in a stash and left in conflict by the --push-every tick: the
// tick's rebase (--autostash) stashed the edit, replayed onto origin, and
// its pop conflicted, leaving the person's note with conflict markers,
// the git index unmerged and every later tick failing ("Cannot
// autostash"). The tick now shares nothing while that lasts and says why,
// naming the note; the person's bytes stay as they were, and once they
// commit, the tick shares.
func TestShareKeepsPersonsEditOriginChanged(t *testing.T) {
	s := start(t, newRepo(t, 0), nil)
	k := s.KB
	j := s.post(t, httpapi.PostRequest{Title: "Shared note", Content: "first line\n", Tags: []string{"shared"}})
	if j.Status != "done" {
		t.Fatalf("post: %+v", j)
	}
	origin := filepath.Join(t.TempDir(), "origin.git")
	git(t, k, "init", "-q", "--bare", "-b", "main", origin)
	git(t, k, "remote", "add", "origin", origin)
	git(t, k, "push", "-q", "origin", "main")

	// A colleague changes the note's line on origin.
	other := filepath.Join(t.TempDir(), "colleague")
	if _, err := gitx.Run(ctx, k.Root, "clone", "-q", origin, other); err != nil {
		t.Fatal(err)
	}
	rel := filepath.Join(".ai", "kenkeep", "nodes", filepath.FromSlash(j.Path))
	theirs := filepath.Join(other, rel)
	data, err := os.ReadFile(theirs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(theirs, []byte(strings.Replace(string(data), "first line\n", "colleague's line\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-c", "user.name=c", "-c", "user.email=c@example.com", "commit", "-qam", "colleague"}, {"push", "-q", "origin", "main"}} {
		if out, err := gitx.Run(ctx, other, args...); err != nil {
			t.Fatalf("%v: %v %s", args, err, out)
		}
	}

	// The person edits the same line here, and does not commit.
	mine := k.NodePath(j.Path)
	data, err = os.ReadFile(mine)
	if err != nil {
		t.Fatal(err)
	}
	edited := []byte(strings.Replace(string(data), "first line\n", "first line\nthe person's line\n", 1))
	if err := os.WriteFile(mine, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	head := git(t, k, "rev-parse", "HEAD")

	s.Backend.Share(ctx)
	if got, err := os.ReadFile(mine); err != nil || string(got) != string(edited) {
		t.Errorf("the person's note after the tick (%v):\n%s", err, got)
	}
	if out := git(t, k, "ls-files", "-u"); out != "" {
		t.Errorf("the git index is left unmerged:\n%s", out)
	}
	if out := git(t, k, "stash", "list"); out != "" {
		t.Errorf("the person's edit went into a stash: %s", out)
	}
	if got := git(t, k, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved from %s to %s while the person's edit was in the way", head, got)
	}
	p := s.Backend.SharingProblem()
	if !strings.Contains(p, j.Path) || !strings.Contains(p, "not committed") {
		t.Errorf("sharing_failed does not name the note and why: %q", p)
	}
	// The jobs go on meanwhile.
	if j2 := s.post(t, httpapi.PostRequest{Title: "Another note", Content: "more\n"}); j2.Status != "done" {
		t.Fatalf("a post while the tick is held: %+v", j2)
	}

	// The person commits: the tick shares again.
	git(t, k, "-c", "user.name=p", "-c", "user.email=p@example.com", "commit", "-qm", "person", "--", rel)
	s.Backend.Share(ctx)
	if p := s.Backend.SharingProblem(); p != "" {
		t.Errorf("after the person's commit: %s", p)
	}
	if got, want := git(t, k, "rev-parse", "origin/main"), git(t, k, "rev-parse", "HEAD"); got != want {
		t.Errorf("origin at %s, HEAD at %s", got, want)
	}
}
