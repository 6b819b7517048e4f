package serve

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/service"
)

// TestRequestTagsAreTidiedAsTheModels: the tags a post or an edit
// carries are made kk's tidy spelling, as a model's are
// (TestModelFieldsHeldToARequestsLimits): lower case, each run of white
// space and hyphens one hyphen, none at either end, no repeats. Before,
// only the model's were: a post's "Go Lang" was stored as it came, beside
// a model's go-lang, so the same tag had two spellings in one tree (and
// kk lint reported them). A tag search names the tag in any of those
// spellings, and finds a note a person wrote by hand ("Go Lang") too. A
// tag over the limit once tidied is still refused, naming it.
func TestRequestTagsAreTidiedAsTheModels(t *testing.T) {
	k := newRepo(t, 0)
	// A note a person wrote, with a tag in another spelling.
	hand := "inbox/hand-written.md"
	if err := os.MkdirAll(filepath.Dir(k.NodePath(hand)), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, k.NodePath(hand), "---\ntype: map\ntitle: Hand written\ndescription: By hand.\ntags:\n  - Release Notes\nkk_schema_version: 3\nkk_id: hand-written\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\n---\nBy hand.\n")
	git(t, k, "add", "-A")
	git(t, k, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a note by hand")
	s := start(t, k, nil)
	j := s.post(t, httpapi.PostRequest{Title: "Channels", Content: "Channels pass values between goroutines.\n",
		Tags: []string{"Go Lang", "  CI--Tools  ", "golang", "GOLANG", "tab\tsep", "go - lang", "-edge-case-", "---"}})
	if j.Status != "done" {
		t.Fatalf("post: %+v", j)
	}
	want := []string{"go-lang", "ci-tools", "golang", "tab-sep", "edge-case"}
	if n, err := k.ReadLeaf(j.Path); err != nil || n == nil || !slices.Equal(n.Tags, want) {
		t.Fatalf("the post's note tags: %+v %v, want %q", n, err, want)
	}
	e := s.edit(t, httpapi.EditRequest{Path: j.Path, Tags: []string{"Release Notes", "RELEASE-notes", "Ops"}})
	if e.Status != "done" {
		t.Fatalf("edit: %+v", e)
	}
	want = []string{"release-notes", "ops"}
	if n, err := k.ReadLeaf(j.Path); err != nil || n == nil || !slices.Equal(n.Tags, want) {
		t.Fatalf("the edited note's tags: %+v %v, want %q", n, err, want)
	}
	// Either note (the one written by hand too) is found under the tag
	// in any of its spellings.
	for _, q := range []string{"release-notes", "Release Notes", " release  notes "} {
		got, err := s.Client.ByTags(ctx, []string{q}, false)
		var paths []string
		for _, d := range got {
			paths = append(paths, d.Path)
		}
		slices.Sort(paths)
		if err != nil || !slices.Equal(paths, []string{hand, j.Path}) {
			t.Errorf("tag search %q: %+v %v", q, got, err)
		}
	}
	if tags, err := s.Client.Tags(ctx); err != nil || !slices.Contains(tags, service.TagCount{Tag: "release-notes", Count: 2}) {
		t.Errorf("/tags: %+v %v", tags, err)
	}
	// Over the limit once tidied: refused, naming it; within it once
	// tidied (white space runs that become one hyphen): accepted.
	var api *httpapi.APIError
	long := strings.Repeat("a", service.MaxTagLength+1)
	if _, err := s.Client.Post(ctx, httpapi.PostRequest{Content: "Over.\n", Tags: []string{long}}); !errors.As(err, &api) || api.Status != http.StatusBadRequest || !strings.Contains(api.Message, long) {
		t.Errorf("an overlong tag: %v", err)
	}
	spaced := strings.Repeat("a", service.MaxTagLength/2) + strings.Repeat(" ", 20) + strings.Repeat("b", service.MaxTagLength/2-1)
	j = s.post(t, httpapi.PostRequest{Title: "Spaced", Content: "Spaced.\n", Tags: []string{spaced}})
	if n, err := k.ReadLeaf(j.Path); j.Status != "done" || err != nil || n == nil || !slices.Equal(n.Tags, []string{strings.Join(strings.Fields(spaced), "-")}) {
		t.Errorf("a tag within the limit once tidied: %+v %+v %v", j, n, err)
	}
	clean(t, k)
}
