package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/store"
)

// A KB read many times (a long-running process) sees every change made
// between two reads by anything but kk: a same-size edit inside the racy
// window, an edit of an old file, a new leaf, a removed one; and what it
// reads is what a fresh KB value (reading the cache file) reads.
func TestTreeMemoSeesEditsBetweenReads(t *testing.T) {
	k := optest.NewKB(t)
	for _, title := range []string{"Alpha", "Beta", "Gamma"} {
		in := contracts.NodeInput{Type: "practice", Title: title, Description: "d", Body: "b\n"}
		if _, err := curate.WriteNode(context.Background(), k, in, curate.WriteOptions{Mode: curate.Create}); err != nil {
			t.Fatal(err)
		}
	}
	read := func(k *store.KB) map[string]string {
		t.Helper()
		tr, err := k.ReadTree(store.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, n := range tr.Leaves {
			out[n.Path] = n.Title + "|" + tr.Hash(n.Path)
		}
		return out
	}
	same := func(step string) {
		t.Helper()
		got, want := read(k), read(store.New(k.Root))
		if len(got) != len(want) {
			t.Fatalf("%s: memo read %v, fresh read %v", step, got, want)
		}
		for p, v := range want {
			if got[p] != v {
				t.Fatalf("%s: %s: memo read %q, fresh read %q", step, p, got[p], v)
			}
		}
	}
	same("first read")
	edit := func(name, from, to string) {
		t.Helper()
		p := filepath.Join(k.NodesDir(), name)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Replace(string(data), from, to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Same size, just written: racily clean.
	edit("practice-alpha.md", "title: Alpha", "title: Alphb")
	same("same-size edit")
	if got := read(k)["practice-alpha.md"]; !strings.HasPrefix(got, "Alphb|") {
		t.Fatalf("same-size edit not seen: %q", got)
	}
	// An old file, trusted by the memo, edited with another size.
	old := time.Now().Add(-time.Hour)
	beta := filepath.Join(k.NodesDir(), "practice-beta.md")
	if err := os.Chtimes(beta, old, old); err != nil {
		t.Fatal(err)
	}
	same("aged")
	edit("practice-beta.md", "title: Beta", "title: Betamax")
	same("edit of an old file")
	// Same size and an mtime set back to the old one: still re-read, the
	// mtime is not the one the memo recorded.
	edit("practice-beta.md", "title: Betamax", "title: Betamix")
	if err := os.Chtimes(beta, old.Add(time.Second), old.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	same("same-size edit of an old file")
	if got := read(k)["practice-beta.md"]; !strings.HasPrefix(got, "Betamix|") {
		t.Fatalf("edit not seen: %q", got)
	}
	if err := os.Remove(filepath.Join(k.NodesDir(), "practice-gamma.md")); err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile(beta)
	if err := os.MkdirAll(filepath.Join(k.NodesDir(), "net"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(k.NodesDir(), "net", "practice-delta.md"), []byte(strings.Replace(strings.ReplaceAll(string(src), "practice-beta", "practice-delta"), "Betamix", "Delta", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	same("leaf added and removed")
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	same("after Close")
}
