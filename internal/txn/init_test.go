package txn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// kk init creates FOLDER_SUMMARIES.md in its transaction, with the index
// files: a write that fails takes the summaries back with everything else
// of the changeset, and a committed init records the file in the audit
// log. A second init leaves a user's summaries as they are.
func TestInitWritesTheSummariesInItsTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := store.New(filepath.Join(t.TempDir(), "proj"))
	if err := os.MkdirAll(k.Root, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := store.InitOptions{Version: "test", Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Command: "test"}
	full := txn.WithFaults(ctx, txn.Faults{Write: func(rel string) error {
		if rel == "ENTRY.md" {
			return errors.New("disk full (test)")
		}
		return nil
	}})
	if _, err := txn.Init(full, k, opts); err == nil {
		t.Fatal("init succeeded with a failing write")
	}
	for _, name := range []string{"FOLDER_SUMMARIES.md", "ENTRY.md", "GRAPH.md"} {
		if _, err := os.Stat(filepath.Join(k.Dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after a failed init: %v; want it absent (undone with the changeset)", name, err)
		}
	}

	res, err := txn.Init(ctx, k, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Created, ".ai/kenkeep/FOLDER_SUMMARIES.md") || !slices.Contains(res.Created, ".ai/kenkeep/ENTRY.md") {
		t.Errorf("created %q; want FOLDER_SUMMARIES.md and ENTRY.md among them", res.Created)
	}
	branch, err := index.CurrentBranch(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := index.ReadAudit(k, branch)
	if err != nil {
		t.Fatal(err)
	}
	recorded := false
	for _, r := range recs {
		for _, o := range r.Ops {
			recorded = recorded || (o.Op == "write" && o.Path == "FOLDER_SUMMARIES.md")
		}
	}
	if !recorded {
		t.Errorf("no audit record writes FOLDER_SUMMARIES.md: %+v", recs)
	}

	mine := []byte("---\nschema_version: 1\nsummaries:\n  \"\": mine\n---\n")
	if err := os.WriteFile(k.SummariesPath(), mine, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Init(ctx, k, opts); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(k.SummariesPath()); string(got) != string(mine) {
		t.Errorf("a second init changed the user's summaries:\n%s", got)
	}
}
