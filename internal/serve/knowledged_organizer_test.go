package serve

// Ports of knowledged's organizer tests (wiztools/knowledged
// internal/organizer/organizer_test.go at da946d4), and of
// queue_test.go TestProcessJobRetriesPlacementOnExistingTargetPath, to
// kk serve's real backend with a model: kk asks for one placement
// decision (a folder, not a path; docs/serve.md "Jobs"), where
// knowledged makes two calls (route to sections, then place).

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/httpapi"
)

// placementCall returns the one placement call among calls.
func placementCall(t *testing.T, calls []recordedCall) recordedCall {
	t.Helper()
	var out []recordedCall
	for _, c := range calls {
		if slices.Contains(c.props, "folder") {
			out = append(out, c)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%d placement calls, want 1: %+v", len(out), calls)
	}
	return out[0]
}

func TestKnowledgedPlacementWithAModel(t *testing.T) {
	k := newRepo(t, 0)
	handNote(t, k, "tech/go/map-goroutines.md", "Goroutines", "concurrency primitives", []string{"go"}, "", "Goroutines are Go's lightweight threads.\n")
	handNote(t, k, "infra/docker/map-setup.md", "Setup", "installing docker", nil, "", "Install docker.\n")
	commitAll(t, k, "seed")
	rec, p := recordingModel(t)
	s := start(t, k, p)
	index := func() string {
		t.Helper()
		d, err := s.Client.Get(ctx, "INDEX.md")
		if err != nil {
			t.Fatal(err)
		}
		return d.Content
	}

	// TestDecide_UsesGeneratedTagsWhenNoTagsSupplied,
	// TestDecide_UsesStructuredOutput, TestExecuteWritesFrontmatter: the
	// model's folder, title, description and tags, from a call that
	// sends the decision's schema; the note's body as posted; INDEX.md
	// lists the note under its folder's section.
	rec.reply([2]string{"folder", `{"folder":"tech/go","title":"Go Generics","description":"Type parameters in Go 1.18+","type":"map","tags":["go","generics"]}`})
	j := s.post(t, httpapi.PostRequest{Content: "# Go Generics\n\nBody.\n", Hint: "go generics"})
	if j.Status != "done" || j.Path != "tech/go/map-go-generics.md" || j.Note != "" {
		t.Fatalf("post: %+v", j)
	}
	c := placementCall(t, rec.taken())
	if !strings.Contains(c.prompt, "Hint from the user: go generics") || !strings.Contains(c.prompt, "# Go Generics\n\nBody.") {
		t.Errorf("the placement prompt lacks the hint or the note:\n%s", c.prompt)
	}
	n, err := k.ReadLeaf(j.Path)
	if err != nil {
		t.Fatal(err)
	}
	if n.Title != "Go Generics" || n.Description != "Type parameters in Go 1.18+" || !slices.Equal(n.Tags, []string{"go", "generics"}) || string(n.Body) != "# Go Generics\n\nBody.\n" {
		t.Errorf("leaf %+v body %q", n, n.Body)
	}
	if got := index(); !strings.Contains(got, "\n## Go\n- [Go Generics](tech/go/map-go-generics.md) — Type parameters in Go 1.18+\n- [Goroutines](tech/go/map-goroutines.md) — concurrency primitives\n") {
		t.Errorf("INDEX.md:\n%s", got)
	}
	jobCommit(t, k, "store", j)

	// TestDecide_UsesSuppliedTitleAndTags: the user's title and tags are
	// in the prompt and win over the model's.
	rec.reply([2]string{"folder", `{"folder":"tech/go","title":"Model Title","description":"Type parameters in Go","type":"map","tags":["model-tag"]}`})
	j = s.post(t, httpapi.PostRequest{Content: "Go 1.18 added generics.\n", Hint: "go generics", Title: "User Title", Tags: []string{"go", "language"}})
	if j.Status != "done" || j.Path != "tech/go/map-user-title.md" {
		t.Fatalf("post with a title and tags: %+v", j)
	}
	c = placementCall(t, rec.taken())
	if !strings.Contains(c.prompt, "Title from the user: User Title") || !strings.Contains(c.prompt, "Tags from the user: go, language") {
		t.Errorf("the placement prompt lacks the user's title or tags:\n%s", c.prompt)
	}
	if n, err := k.ReadLeaf(j.Path); err != nil || n.Title != "User Title" || !slices.Equal(n.Tags, []string{"go", "language"}) {
		t.Errorf("leaf %+v %v", n, err)
	}

	// TestDecide_NewSectionFromTargetFolder: a folder the tree does not
	// have yet is made, and is a new section of INDEX.md.
	rec.reply([2]string{"folder", `{"folder":"web/frontend","title":"React","description":"Component-based UI library","type":"map","tags":[]}`})
	j = s.post(t, httpapi.PostRequest{Content: "React is a component library.\n", Hint: "react"})
	if j.Status != "done" || j.Path != "web/frontend/map-react.md" {
		t.Fatalf("post into a new folder: %+v", j)
	}
	rec.taken()
	if got := index(); !strings.Contains(got, "\n## Frontend\n- [React](web/frontend/map-react.md) — Component-based UI library\n") {
		t.Errorf("INDEX.md:\n%s", got)
	}

	// queue_test.go TestProcessJobRetriesPlacementOnExistingTargetPath,
	// organizer_test.go TestExecuteRejectsExistingTargetPath: a decision
	// that lands on an existing note never overwrites it; kk names the new
	// note with the next free suffix instead of asking the model again.
	before, err := os.ReadFile(k.NodePath("tech/go/map-goroutines.md"))
	if err != nil {
		t.Fatal(err)
	}
	rec.reply([2]string{"folder", `{"folder":"tech/go","title":"Goroutines","description":"Type parameters","type":"map","tags":[]}`})
	j = s.post(t, httpapi.PostRequest{Content: "Go supports type parameters.\n", Hint: "go generics"})
	if j.Status != "done" || j.Path != "tech/go/map-goroutines-2.md" {
		t.Fatalf("post onto an existing note: %+v", j)
	}
	placementCall(t, rec.taken())
	if after, err := os.ReadFile(k.NodePath("tech/go/map-goroutines.md")); err != nil || string(after) != string(before) {
		t.Errorf("the existing note changed: %v\n%s", err, after)
	}
	clean(t, k)
}

// organizer_test.go TestDecide_EmptyIndex: on an empty tree the model is
// asked all the same, told that nothing is like the note, and its folder
// is used.
func TestKnowledgedPlacementOnAnEmptyTree(t *testing.T) {
	k := newRepo(t, 0)
	rec, p := recordingModel(t, [2]string{"folder", `{"folder":"tech/go","title":"Go Intro","description":"Intro","type":"map","tags":[]}`})
	s := start(t, k, p)
	j := s.post(t, httpapi.PostRequest{Content: "Go is a language.\n"})
	if j.Status != "done" || j.Path != "tech/go/map-go-intro.md" {
		t.Fatalf("post: %+v", j)
	}
	if c := placementCall(t, rec.taken()); !strings.Contains(c.prompt, "(none: nothing in the tree is like this note)") {
		t.Errorf("the placement prompt does not say the tree has nothing like the note:\n%s", c.prompt)
	}
}
