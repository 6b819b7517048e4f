package curate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// copyLeaf copies the leaf file at from to to (both relative to nodes/),
// replacing each old with its new in the copy, as a person starting a
// note from another does.
func copyLeaf(t *testing.T, k *store.KB, from, to string, oldNew ...string) {
	t.Helper()
	data, err := os.ReadFile(k.NodePath(from))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for i := 0; i+1 < len(oldNew); i += 2 {
		if !strings.Contains(s, oldNew[i]) {
			t.Fatalf("%s has no %q", from, oldNew[i])
		}
		s = strings.Replace(s, oldNew[i], oldNew[i+1], 1)
	}
	if err := os.MkdirAll(filepath.Dir(k.NodePath(to)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.NodePath(to), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// clean fails the test unless every leaf file is read and the index files
// are up to date.
func clean(t *testing.T, k *store.KB, leaves int) {
	t.Helper()
	tr, err := k.ReadTree(store.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Err(); err != nil || len(tr.Leaves) != leaves {
		t.Fatalf("%d leaves, want %d; %v", len(tr.Leaves), leaves, err)
	}
	res, err := indexfiles.Check(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changed)+len(res.Removed) != 0 {
		t.Fatalf("index files out of date after adoption: %+v", res)
	}
}

func filledOf(a AdoptedLeaf) map[string]node.Filled {
	m := map[string]node.Filled{}
	for _, f := range a.Filled {
		m[f.Field] = f
	}
	return m
}

// A note copied from another keeps the other's kk_id; adoption gives it
// an id of its own (its file name, else from its title), keeps its body
// and other keys, starts its kk_version again at 1, and leaves the
// original as it is.
func TestAdoptCopy(t *testing.T) {
	k := newTestKB(t)
	ctx := context.Background()
	opts := WriteOptions{Source: "test", Command: "test"}
	for _, in := range []contracts.NodeInput{
		{Type: "practice", Title: "Base", Description: "d", Folder: "p", Body: "b\n"},
		{Type: "practice", Title: "Retry policy", Description: "How we retry", Folder: "p", Body: "Retry with backoff.\n", RelatesTo: []string{"practice-base"}},
	} {
		if _, err := WriteNode(ctx, k, in, WriteOptions{Mode: Create}); err != nil {
			t.Fatal(err)
		}
	}
	in := contracts.NodeInput{Type: "practice", Title: "Retry policy", Description: "How we retry, again", Folder: "p", Body: "Retry with backoff.\n", RelatesTo: []string{"practice-base"}}
	if _, err := WriteNode(ctx, k, in, WriteOptions{Mode: Update}); err != nil {
		t.Fatal(err)
	}
	original, err := os.ReadFile(k.NodePath("p/practice-retry-policy.md"))
	if err != nil || !bytes.Contains(original, []byte("kk_version: 2\n")) {
		t.Fatalf("the original: %v\n%s", err, original)
	}
	copyLeaf(t, k, "p/practice-retry-policy.md", "p/practice-timeout-policy.md",
		"title: Retry policy", "title: Timeout policy", "kk_confidence: high\n", "kk_confidence: high\nowner: ana\n", "Retry with backoff.", "Give every call a deadline.")
	copyLeaf(t, k, "p/practice-retry-policy.md", "p/practice-retry-policy (copy).md")
	copyLeaf(t, k, "p/practice-retry-policy.md", "p/Copy 2.md")

	res, err := Adopt(ctx, k, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Left) != 0 || len(res.Adopted) != 3 {
		t.Fatalf("adopted %+v, left %+v", res.Adopted, res.Left)
	}
	got := map[string]AdoptedLeaf{}
	for _, a := range res.Adopted {
		got[a.From] = a
	}
	a := got[".ai/kenkeep/nodes/p/practice-timeout-policy.md"]
	f := filledOf(a)
	if a.ID != "practice-timeout-policy" || a.Path != a.From || f["kk_id"].Was != "practice-retry-policy" ||
		f["kk_id"].From != "file name; was practice-retry-policy, held by p/practice-retry-policy.md" ||
		f["kk_version"].Was != int64(2) || f["kk_version"].Value != int64(1) {
		t.Errorf("the copy named for its own id: %+v", a)
	}
	// Two copies with the original's title: -2 and -3, renamed.
	var ids []string
	for _, from := range []string{".ai/kenkeep/nodes/p/Copy 2.md", ".ai/kenkeep/nodes/p/practice-retry-policy (copy).md"} {
		a := got[from]
		ids = append(ids, a.ID)
		if a.Path != ".ai/kenkeep/nodes/p/"+a.ID+".md" || !strings.HasPrefix(filledOf(a)["kk_id"].From, "title; was practice-retry-policy") {
			t.Errorf("%s: %+v", from, a)
		}
		if _, err := os.Lstat(k.NodePath(strings.TrimPrefix(from, ".ai/kenkeep/nodes/"))); !os.IsNotExist(err) {
			t.Errorf("%s is still there", from)
		}
	}
	if strings.Join(ids, " ") != "practice-retry-policy-2 practice-retry-policy-3" {
		t.Errorf("ids of the copies with the original's title: %v", ids)
	}
	after, err := os.ReadFile(k.NodePath("p/practice-retry-policy.md"))
	if err != nil || !bytes.Equal(after, original) {
		t.Errorf("the original changed:\n%s", after)
	}
	leaf, err := os.ReadFile(k.NodePath("p/practice-timeout-policy.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"title: Timeout policy\n", "kk_id: practice-timeout-policy\n", "owner: ana\n", "kk_version: 1\n", "Give every call a deadline.\n", "- Related: [practice-base](/p/practice-base.md)\n"} {
		if !strings.Contains(string(leaf), w) {
			t.Errorf("the adopted copy lacks %q:\n%s", w, leaf)
		}
	}
	clean(t, k, 5)
}

// When no one file sharing an id is named for it, which is the copy
// cannot be told: adoption without paths leaves them, and adoption of one
// named treats it as the copy and reads the other again in the same
// change. The original, named, is refused.
func TestAdoptCopyAmbiguous(t *testing.T) {
	k := newTestKB(t)
	ctx := context.Background()
	opts := WriteOptions{Source: "test", Command: "test"}
	if _, err := WriteNode(ctx, k, contracts.NodeInput{Type: "practice", Title: "Deploy", Description: "d", Folder: "n", Body: "b\n"}, WriteOptions{Mode: Create}); err != nil {
		t.Fatal(err)
	}
	copyLeaf(t, k, "n/practice-deploy.md", "n/deploy-notes.md")
	copyLeaf(t, k, "n/practice-deploy.md", "n/deploy-notes-new.md", "title: Deploy", "title: Rollback")
	if err := os.Remove(k.NodePath("n/practice-deploy.md")); err != nil {
		t.Fatal(err)
	}
	kept, _ := os.ReadFile(k.NodePath("n/deploy-notes.md"))

	res, err := Adopt(ctx, k, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Adopted) != 0 || len(res.Left) != 2 || !strings.Contains(res.Left[0].Reason, "kk cannot tell which is the copy") ||
		!strings.Contains(res.Left[0].Reason, "`kk node adopt .ai/kenkeep/nodes/n/deploy-notes-new.md`") {
		t.Fatalf("without paths: %+v", res)
	}

	res, err = Adopt(ctx, k, []string{"n/deploy-notes-new.md"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Adopted) != 1 || res.Adopted[0].ID != "practice-rollback" || res.Adopted[0].Filled[0].From != "title; was practice-deploy, also used by n/deploy-notes.md" {
		t.Fatalf("named: %+v", res)
	}
	if now, _ := os.ReadFile(k.NodePath("n/deploy-notes.md")); !bytes.Equal(now, kept) {
		t.Errorf("the other file changed:\n%s", now)
	}
	clean(t, k, 2)

	// The original (named for its id) is never adopted, even named.
	copyLeaf(t, k, "n/practice-rollback.md", "n/rollback-copy.md")
	_, err = Adopt(ctx, k, []string{"n/practice-rollback.md"}, opts)
	if ae, ok := err.(*AdoptError); !ok || !strings.Contains(ae.Left[0].Reason, "it is the original of practice-rollback") ||
		!strings.Contains(ae.Left[0].Reason, "`kk node adopt .ai/kenkeep/nodes/n/rollback-copy.md`") {
		t.Fatalf("the original named: %v", err)
	}
}
