package indexfiles_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// A clone with git's core.autocrlf (Git for Windows' default) checks the
// leaves and the generated files out with CRLF line endings. Generation
// reads them as their LF text: the nodes hash and every generated file
// are the LF checkout's, a check finds nothing stale, a rebuild leaves
// the CRLF files as they are (git calls a file modified once it holds
// LF there), and a write there generates what an LF checkout of the
// result accepts, and so does a CRLF one.
func TestCRLFCheckoutGeneratesTheSameFiles(t *testing.T) {
	k, err := benchtree.Generate(t.TempDir(), benchtree.Options{Nodes: 150, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lf, err := txn.Rebuild(ctx, k, txn.Meta{Command: "test"}, txn.RebuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	branches := filepath.Join(k.StateDir(), "branches")
	check := func(what string, fresh bool) {
		t.Helper()
		if fresh {
			// a clone: no branch index yet
			if err := os.RemoveAll(branches); err != nil {
				t.Fatal(err)
			}
		}
		kb := store.New(k.Root)
		defer func() { _ = kb.Close() }()
		res, err := indexfiles.Check(ctx, kb)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Changed)+len(res.Removed)+len(res.Skipped) > 0 {
			t.Fatalf("%s: check finds stale files: changed %v, removed %v, skipped %v", what, res.Changed, res.Removed, res.Skipped)
		}
	}

	checkout(t, k, true)
	crlf := files(t, k)
	for _, fresh := range []bool{false, true} {
		kb := store.New(k.Root)
		res, err := indexfiles.Check(ctx, kb)
		if err != nil {
			t.Fatal(err)
		}
		if res.NodesHash != lf.NodesHash || len(res.Changed)+len(res.Removed) > 0 {
			t.Fatalf("CRLF checkout (branch index removed: %v): nodes hash %s (LF: %s), changed %v, removed %v", fresh, res.NodesHash, lf.NodesHash, res.Changed, res.Removed)
		}
		_ = kb.Close()
		check("CRLF checkout", fresh)
	}
	res, err := txn.Rebuild(ctx, k, txn.Meta{Command: "test"}, txn.RebuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changed)+len(res.Removed) > 0 || res.NodesHash != lf.NodesHash {
		t.Fatalf("rebuild in the CRLF checkout changed %v, removed %v, nodes hash %s (LF: %s)", res.Changed, res.Removed, res.NodesHash, lf.NodesHash)
	}
	for rel, data := range files(t, k) {
		if !bytes.Equal(data, crlf[rel]) {
			t.Errorf("rebuild in the CRLF checkout rewrote %s", rel)
		}
	}
	check("CRLF checkout after a rebuild", false)
	// The rebuild recorded the CRLF files as they are: the next command
	// trusts them without generating.
	branch, err := index.CurrentBranch(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	db, err := index.OpenShared(ctx, k, branch)
	if err != nil {
		t.Fatal(err)
	}
	_, sh, err := db.SyncShape(ctx, k.NodesDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := indexfiles.Current(ctx, k, db, sh); err != nil || p == nil {
		t.Fatalf("after a rebuild in the CRLF checkout the files are not current by the branch index's record (%v)", err)
	}

	// Writes there: through the record of the CRLF files the rebuild
	// made (brought forward), and as a new command would.
	for i, title := range []string{"Written on Windows", "Written again"} {
		w := k
		if i == 1 {
			w = store.New(k.Root)
		}
		in := contracts.NodeInput{Type: "practice", Title: title, Description: "A note written in a CRLF checkout",
			Tags: []string{"cache"}, Folder: "api-0", Body: "Line one.\nLine two.\n"}
		if _, err := curate.WriteNode(ctx, w, in, curate.WriteOptions{Mode: curate.Update}); err != nil {
			t.Fatal(err)
		}
		check("CRLF checkout after a write", false)
	}
	checkout(t, k, false)
	check("LF checkout of the writes", true)
	checkout(t, k, true)
	check("CRLF checkout of the writes", true)
}

// checkout rewrites every file of the knowledge base but its state with
// CRLF line endings (crlf) or LF, as git checks a text file out with
// core.autocrlf or without.
func checkout(t *testing.T, k *store.KB, crlf bool) {
	t.Helper()
	for rel, data := range files(t, k) {
		text := strings.ReplaceAll(string(data), "\r\n", "\n")
		if crlf {
			text = strings.ReplaceAll(text, "\n", "\r\n")
		}
		if err := os.WriteFile(filepath.Join(k.Dir, rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// files reads every file of the knowledge base but its state.
func files(t *testing.T, k *store.KB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(k.Dir, func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && p == k.StateDir():
			return filepath.SkipDir
		case d.IsDir():
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(k.Dir, p)
		out[rel] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
