package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/trace"
)

// hostile is text a leaf may hold that must never reach the page as
// markup.
const hostile = `<script>alert("kk")</script>`

// hostileBody is a leaf body that tries every way markdown has to put
// markup or a dangerous link into a page.
const hostileBody = "Wrap every error with the operation.\n\n" +
	hostile + "\n\n" +
	"<script>window.kkPwned=1</script>\n\n" +
	"<img src=x onerror=alert(1)>\n\n" +
	"Inline <b onclick=alert(2)>html</b> and <iframe src=https://evil.example></iframe>.\n\n" +
	"- [js](javascript:alert(3))\n" +
	"- [js entity](&#106;avascript:alert(4))\n" +
	"- [data](data:text/html;base64,PHNjcmlwdD4=)\n" +
	"- [vb](vbscript:msgbox)\n" +
	"- [mail](mailto:a@example.com)\n" +
	"- [proto](//evil.example/x)\n" +
	"- [abs](/etc/passwd)\n" +
	"- [out](../../../../etc/passwd.md)\n" +
	"- [web](https://example.com/docs?a=1&b=2)\n" +
	"- [sibling](other.md#usage)\n" +
	"- [folder](../index.md)\n" +
	"- [frag](#top)\n" +
	"- <javascript:alert(5)>\n" +
	"- <https://example.org/auto>\n" +
	"- www.example.net\n" +
	"- ![pic](https://example.com/pic.png)\n" +
	"- ![local](pic.png)\n\n" +
	"| a | b |\n| - | - |\n| 1 | 2 |\n\n" +
	"```go\nfmt.Println(\"<script>\")\n```\n"

// otherBody is a leaf body in markdown whose search snippet holds
// emphasis, a code span and a link around the matched words.
const otherBody = "Use **backoff** with `retry.Do`, and see [the backoff helper](practice-wrap-errors.md) first.\n"

// fixture is a knowledge base with a leaf of each kind the pages show:
// a practice with a hostile title and body in folder go/, traceability
// entities with edges (one with a hostile title), a molecule with an atom
// and a changelog, and an orphan atom.
func fixture(t testing.TB) *store.KB {
	t.Helper()
	ctx := context.Background()
	k := optest.NewKB(t)
	if err := os.WriteFile(k.SummariesPath(), []byte("---\nschema_version: 1\nsummaries:\n  go: \"<i>Go</i> conventions & friends\"\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(curate.WriteNode(ctx, k, contracts.NodeInput{Type: "practice", Slug: "wrap-errors", Title: hostile + " Wrap errors",
		Description: "Wrap errors " + hostile, Tags: []string{"go", "errors"}, Folder: "go", Body: hostileBody}, curate.WriteOptions{Command: "test"}))
	must(curate.WriteNode(ctx, k, contracts.NodeInput{Type: "practice", Slug: "other", Title: "Other practice",
		Description: "Another leaf", Folder: "go", Body: otherBody}, curate.WriteOptions{Command: "test"}))
	must(trace.KBUpsert(ctx, k, trace.KBUpsertParams{CreatedBy: "test", Source: "T-1",
		Entities: []trace.KBEntityIn{
			{ID: "req-login", Type: "req", Title: "Users can log in " + hostile, Priority: new("must")},
			{ID: "scenario-login", Type: "scenario", Title: "Log in with a password"},
			{ID: "test-login", Type: "test", Title: "TestLogin"},
			{ID: "req-logout", Type: "req", Title: "Users can log out"},
		},
		Edges: []trace.KBEdgeIn{
			{Type: "specified_by", From: "req-login", To: "scenario-login"},
			{Type: "verified_by", From: "req-login", To: "test-login"},
			{Type: "depends_on", From: "req-logout", To: "req-login"},
		}}))
	must(graph.Create(ctx, k, graph.CreateParams{EntityType: "molecule", Name: new("Identity"),
		Knowledge: new("Who may do what."), CreatedByTaskID: "T-2"}))
	must(graph.Create(ctx, k, graph.CreateParams{EntityType: "atom", Name: new("Token rotation"),
		Paths: graph.JSONArray[string]{Set: true, Items: []string{"src/auth/**"}}, MoleculeID: graph.NullableID{Set: true, Value: "molecule-identity"},
		Knowledge: new("Refresh tokens rotate hourly."), CreatedByTaskID: "T-2"}))
	must(graph.Create(ctx, k, graph.CreateParams{EntityType: "atom", Name: new("Build scripts"),
		Paths: graph.JSONArray[string]{Set: true, Items: []string{"scripts/*.sh"}}, Knowledge: new("Scripts run from the root."), CreatedByTaskID: "T-2"}))
	must(graph.AppendChangelog(ctx, k, graph.AppendChangelogParams{ParentType: "atom", ParentID: "map-token-rotation",
		TaskID: "T-3", Summary: "Shortened the rotation " + hostile}))
	return k
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// get sends a request to h and returns the response and its body.
func get(t testing.TB, h http.Handler, method, target string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	res := w.Result()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// noMarkup fails when a page carries markup or a link target from the
// hostile text: an element that must not be there, an event handler
// attribute in a tag, a link to a refused target. (The hostile text may
// show, escaped, as text.)
func noMarkup(t testing.TB, where, body string) {
	t.Helper()
	low := strings.ToLower(body)
	for _, bad := range []string{"<script>", "<img", "<iframe", "<b ", `href="javascript`, `href="&#106;`,
		`href="vbscript`, `href="data:`, `href="mailto`, `href="//`, `href="/etc`, `href="../`} {
		if strings.Contains(low, bad) {
			t.Errorf("%s carries %q", where, bad)
		}
	}
	if m := eventAttr.FindString(low); m != "" {
		t.Errorf("%s carries an event handler: %q", where, m)
	}
}

var eventAttr = regexp.MustCompile(`<[a-z][^<>]*\son[a-z]+\s*=`)
