package serve

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/httpapi"
)

// TestModelFieldsHeldToARequestsLimits: what the model proposes for a
// posted note is held to the limits the request's own fields are held
// to. Its tags are made kk's tidy spelling (lowercase, white space a
// hyphen) and one that cannot be (over httpapi.MaxTagLength characters,
// blank) is dropped and logged; a title that is nothing once made plain
// text gives way to the one kk derives, and an overlong phrasing is
// dropped: the job is done, never failed for the model's answer. Found by
// a QA run: a 500-character tag and "Go Lang" were stored in a note.
func TestModelFieldsHeldToARequestsLimits(t *testing.T) {
	k := newRepo(t, 0)
	long := strings.Repeat("a", 500)
	reply, err := json.Marshal(map[string]any{
		"folder":      "go",
		"title":       "\u202e",
		"description": "What channels are for",
		"type":        "map",
		"tags":        []string{"Go Lang", long, "golang", "GOLANG", " \t ", "tab\tsep", "go - lang", "-edge-case-"},
		"phrasings":   []string{"how do goroutines talk", strings.Repeat("why ", 1000)},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, p := modelServer(t, string(reply), nil)
	logs := &syncBuffer{}
	s := startOpts(t, context.Background(), Options{KB: k, Provider: p, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	j := s.post(t, httpapi.PostRequest{Content: "# Channels carry values\nChannels pass values between goroutines.\n"})
	if j.Status != "done" {
		t.Fatalf("job: %+v", j)
	}
	n, err := k.ReadLeaf(j.Path)
	if err != nil || n == nil {
		t.Fatalf("leaf %s: %v", j.Path, err)
	}
	if want := []string{"go-lang", "golang", "tab-sep", "edge-case"}; !slices.Equal(n.Tags, want) {
		t.Errorf("tags %q, want %q", n.Tags, want)
	}
	if n.Title != "Channels carry values" {
		t.Errorf("title %q, want the one derived from the body", n.Title)
	}
	if want := []string{"how do goroutines talk"}; !slices.Equal(n.Phrasings, want) {
		t.Errorf("phrasings %q, want %q", n.Phrasings, want)
	}
	if !strings.Contains(logs.String(), long[:64]) {
		t.Errorf("the dropped tag is not logged:\n%s", logs)
	}
	clean(t, k)
}

// TestModelTagsAreNotTheRequests: a request's own tags win over the
// model's and are kept as given (within the request's limits).
func TestModelTagsAreNotTheRequests(t *testing.T) {
	k := newRepo(t, 0)
	_, p := modelServer(t, `{"folder":"go","title":"Channels","description":"","type":"map","tags":["Go Lang"]}`, nil)
	s := start(t, k, p)
	j := s.post(t, httpapi.PostRequest{Content: "Channels pass values.\n", Tags: []string{"Concurrency"}})
	if j.Status != "done" {
		t.Fatalf("job: %+v", j)
	}
	n, err := k.ReadLeaf(j.Path)
	if err != nil || n == nil {
		t.Fatalf("leaf %s: %v", j.Path, err)
	}
	if want := []string{"Concurrency"}; !slices.Equal(n.Tags, want) {
		t.Errorf("tags %q, want %q", n.Tags, want)
	}
	clean(t, k)
}

// TestModelAskDraftHeldToARequestsLimits: a draft POST /ask returns is
// for a person to post, so its tags are held to a post's limits as a
// placement's are: the draft never carries a tag the post would refuse.
func TestModelAskDraftHeldToARequestsLimits(t *testing.T) {
	k := newRepo(t, 0)
	long := strings.Repeat("b", 500)
	_, p := modelServer(t, `{"title":"Channels","answer":"They pass values.","tags":["Go Lang","`+long+`"]}`, nil)
	s := start(t, k, p)
	d, err := s.Client.Ask(ctx, "What are channels?")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"go-lang"}; d.Title != "Channels" || !slices.Equal(d.Tags, want) {
		t.Errorf("draft %+v, want the title Channels and the tags %q", d, want)
	}
}
