package freshness

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

func leaf(t *testing.T, path, id string, derived []string, body string) *node.Node {
	t.Helper()
	src := "---\ntype: practice\ntitle: T\ndescription: D\ntags: []\nkk_schema_version: 3\nkk_id: " + id +
		"\nkk_derived_from: [" + strings.Join(derived, ", ") + "]\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\n---\n" + body
	n, err := node.Parse(path, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestEvaluate(t *testing.T) {
	const np = ".ai/kenkeep/nodes/"
	recency := map[string]int{
		np + "http/practice-retry.md": 5, np + "practice-top.md": 2, np + "http/practice-new.md": 0, np + "db/practice-db.md": 3,
		"src/http/retry.go": 1, "src/http/client.go": 9, "README.md": 0, "docs/guide.md": 4, "src/db/x.go": 0,
		".ai/kenkeep/config.yaml": 0, "go.mod": 0, "src/gone.go": 0,
	}
	tracked := map[string]bool{}
	for p := range recency {
		if p != "src/gone.go" {
			tracked[p] = true
		}
	}
	tracked["src/untouched.go"] = true
	look := func(p string) (int, bool) { r, ok := recency[p]; return r, ok }
	leaves := []*node.Node{
		// Changed since: a derived_from entry without a folder part, a link
		// with an anchor, a root-anchored inline code path. Not: a URL, a
		// file changed before the node, the KB's own files, a bare name in
		// backticks, an untracked (deleted) file, a path never changed.
		leaf(t, "http/practice-retry.md", "practice-retry", []string{"README.md", "https://example.com/x"},
			"See [the client](src/http/client.go) and [retry](../../../../src/http/retry.go#L10).\n"+
				"Also `/src/db/x.go`, `go.mod`, `src/gone.go`, `src/untouched.go` and [config](../../config.yaml).\n"),
		// Only older sources: not flagged.
		leaf(t, "practice-top.md", "practice-top", []string{"docs/guide.md"}, "Body with [self](practice-top.md).\n"),
		// Never committed: not considered.
		leaf(t, "http/practice-draft.md", "practice-draft", []string{"README.md"}, ""),
		// Changed in the same commit as its source: not flagged.
		leaf(t, "http/practice-new.md", "practice-new", []string{"README.md"}, ""),
		// A folder-relative link that climbs to the source.
		leaf(t, "db/practice-db.md", "practice-db", nil, "[x](../../../../src/db/x.go) and [y](./../../../../src/db/x.go)\n"),
	}
	rep := Evaluate(leaves, tracked, look)
	got, _ := json.Marshal(rep)
	want := `{"available":true,"commits":0,"considered_nodes":4,"flagged_count":2,"flagged":[` +
		`{"id":"practice-db","path":"db/practice-db.md","branch":"db","changed_paths":["src/db/x.go"]},` +
		`{"id":"practice-retry","path":"http/practice-retry.md","branch":"http","changed_paths":["README.md","src/db/x.go","src/http/retry.go"]}],` +
		`"per_branch":[{"branch":"db","flagged":1},{"branch":"http","flagged":1}]}`
	if string(got) != want {
		t.Errorf("report\n%s\nwant\n%s", got, want)
	}
}

func TestBodyReferences(t *testing.T) {
	body := []byte("[a](x/y.md \"title\") [b](<sp/z.md>) `code/span` ``\n[c]( spaced/w.md )")
	got := BodyReferences(body)
	want := []string{"x/y.md", "sp/z.md", "spaced/w.md", "code/span"}
	if !slices.Equal(got, want) {
		t.Errorf("BodyReferences = %q, want %q", got, want)
	}
	if got := Branch("a/b/c.md"); got != "a" {
		t.Errorf("Branch = %q", got)
	}
	if got := Branch("c.md"); got != RootBranch {
		t.Errorf("Branch = %q", got)
	}
}

// repo makes a git repository with an initialized knowledge base.
func repo(t *testing.T) *store.KB {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "kk", "GIT_AUTHOR_EMAIL": "kk@example.invalid",
		"GIT_COMMITTER_NAME": "kk", "GIT_COMMITTER_EMAIL": "kk@example.invalid"} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	if _, err := gitx.Run(context.Background(), dir, "init", "-q"); err != nil {
		t.Fatal(err)
	}
	k := store.New(dir)
	if _, err := txn.Init(context.Background(), k, store.InitOptions{Version: "test", Now: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	return k
}

func commitAll(t *testing.T, k *store.KB, files map[string]string, msg string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(k.Root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if _, err := gitx.Run(ctx, k.Root, "add", "-A"); err != nil {
		t.Fatal(err)
	}
	if _, err := gitx.Run(ctx, k.Root, "commit", "-qm", msg); err != nil {
		t.Fatal(err)
	}
}

func TestCheck(t *testing.T) {
	ctx := context.Background()
	k := repo(t)
	if rep := Check(ctx, k, Options{}); rep.Available || rep.Reason != "the knowledge base has no nodes" {
		t.Errorf("empty KB: %+v", rep)
	}
	if _, err := curate.WriteNode(ctx, k, contracts.NodeInput{Type: "practice", Title: "Retry", Description: "d", Folder: "http",
		DerivedFrom: []string{"src/retry.go"}, Body: "Uses `src/client.go`.\n"}, curate.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if rep := Check(ctx, k, Options{}); rep.Available || rep.Reason != "the repository has no commits yet" {
		t.Errorf("no commits: %+v", rep)
	}
	commitAll(t, k, map[string]string{"src/retry.go": "1", "src/client.go": "1"}, "one")
	rep := Check(ctx, k, Options{})
	if !rep.Available || rep.ConsideredNodes != 1 || rep.FlaggedCount != 0 || rep.Commits != 1 {
		t.Errorf("fresh: %+v", rep)
	}
	commitAll(t, k, map[string]string{"src/client.go": "2"}, "two")
	commitAll(t, k, map[string]string{"other.go": "3"}, "three")
	rep = Check(ctx, k, Options{})
	if rep.FlaggedCount != 1 || !slices.Equal(rep.Flagged[0].ChangedPaths, []string{"src/client.go"}) || rep.Flagged[0].Branch != "http" {
		t.Errorf("stale: %+v", rep)
	}
	// With the node's own commit outside the window there is nothing to
	// compare with.
	rep = Check(ctx, k, Options{MaxCommits: 2})
	if rep.ConsideredNodes != 0 || rep.FlaggedCount != 0 || rep.Commits != 2 {
		t.Errorf("max 2 commits: %+v", rep)
	}
	// Updating the node makes it fresh again.
	if _, err := curate.WriteNode(ctx, k, contracts.NodeInput{Type: "practice", Title: "Retry", Description: "d2", Folder: "http",
		DerivedFrom: []string{"src/retry.go"}, Body: "Uses `src/client.go`.\n"}, curate.WriteOptions{Mode: curate.Update}); err != nil {
		t.Fatal(err)
	}
	commitAll(t, k, nil, "refresh")
	if rep := Check(ctx, k, Options{}); rep.FlaggedCount != 0 || rep.ConsideredNodes != 1 {
		t.Errorf("refreshed: %+v", rep)
	}
	// A leaf kk cannot read is skipped; the others are checked as ever.
	if err := os.WriteFile(k.NodePath("broken.md"), []byte("no front matter"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep := Check(ctx, k, Options{}); !rep.Available || rep.ConsideredNodes != 1 {
		t.Errorf("invalid leaf: %+v", rep)
	}
}

func TestCheckOutsideGit(t *testing.T) {
	k := store.New(t.TempDir())
	rep := Check(context.Background(), k, Options{})
	if rep.Available || !strings.Contains(rep.Reason, "not inside a git work tree") || rep.Flagged == nil || rep.PerBranch == nil {
		t.Errorf("outside git: %+v", rep)
	}
}

// The scanner in BodyReferences must find what these expressions find.
var (
	oracleLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)`)
	oracleCode = regexp.MustCompile("`([^`\n]+)`")
)

func oracleRefs(body []byte) []string {
	var refs []string
	for _, m := range oracleLink.FindAllSubmatch(body, -1) {
		refs = append(refs, string(m[1]))
	}
	for _, m := range oracleCode.FindAllSubmatch(body, -1) {
		refs = append(refs, string(m[1]))
	}
	return refs
}

func TestBodyReferencesMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("ab/.]()<> `\n\t-")
	for range 20000 {
		body := make([]byte, rng.IntN(40))
		for i := range body {
			body[i] = alphabet[rng.IntN(len(alphabet))]
		}
		if got, want := BodyReferences(body), oracleRefs(body); !slices.Equal(got, want) {
			t.Fatalf("body %q: got %q, want %q", body, got, want)
		}
	}
}

// In a shallow clone (CI's usual checkout) git shows the oldest commit it
// holds as adding every file, which made every node look reviewed after
// every change: "0 of N flagged" whatever the history. Only the nodes
// changed in the clone's commits are considered now, and the report says
// the clone is shallow.
func TestCheckShallowClone(t *testing.T) {
	ctx := context.Background()
	k := repo(t)
	if _, err := curate.WriteNode(ctx, k, contracts.NodeInput{Type: "practice", Title: "Retry", Description: "d", Folder: "http",
		DerivedFrom: []string{"src/retry.go"}, Body: "Uses `src/client.go`.\n"}, curate.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	commitAll(t, k, map[string]string{"src/retry.go": "1", "src/client.go": "1"}, "one")
	commitAll(t, k, map[string]string{"src/client.go": "2"}, "two")
	commitAll(t, k, map[string]string{"other.go": "3"}, "three")
	if rep := Check(ctx, k, Options{}); rep.Shallow || rep.FlaggedCount != 1 {
		t.Fatalf("whole history: %+v", rep)
	}
	for _, depth := range []int{1, 2} {
		dir := filepath.Join(t.TempDir(), "clone")
		if out, err := exec.Command("git", "clone", "-q", "--depth", strconv.Itoa(depth), "file://"+k.Root, dir).CombinedOutput(); err != nil {
			t.Fatalf("git clone: %v\n%s", err, out)
		}
		rep := Check(ctx, store.New(dir), Options{})
		if !rep.Available || !rep.Shallow || rep.Commits != depth || rep.ConsideredNodes != 0 || rep.FlaggedCount != 0 {
			t.Errorf("depth %d: %+v", depth, rep)
		}
	}
	// A node rewritten within the clone's commits is checked against the
	// changes after it (the oldest commit held, whose changes git cannot
	// tell, aside).
	if _, err := curate.WriteNode(ctx, k, contracts.NodeInput{Type: "practice", Title: "Retry", Description: "d2", Folder: "http",
		DerivedFrom: []string{"src/retry.go"}, Body: "Uses `src/client.go`.\n"}, curate.WriteOptions{Mode: curate.Update}); err != nil {
		t.Fatal(err)
	}
	commitAll(t, k, nil, "four")
	commitAll(t, k, map[string]string{"src/client.go": "5"}, "five")
	dir := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", "--depth", "3", "file://"+k.Root, dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	rep := Check(ctx, store.New(dir), Options{})
	if !rep.Shallow || rep.ConsideredNodes != 1 || rep.FlaggedCount != 1 || !slices.Equal(rep.Flagged[0].ChangedPaths, []string{"src/client.go"}) {
		t.Errorf("node changed within the clone: %+v", rep)
	}
}

// A freshness record that does not parse (cut short, edited by hand) is
// an error naming the file, which session-start logs.
func TestLastRecordedNamesAnUnreadableRecord(t *testing.T) {
	k := store.New(t.TempDir())
	if err := os.MkdirAll(k.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(recordPath(k), []byte(`{"checked_at":`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LastRecorded(k); err == nil || !strings.Contains(err.Error(), "freshness.json") {
		t.Fatalf("LastRecorded of a record cut short: %v", err)
	}
}
