package indexfiles_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// kenkeepNodes is kenkeep's own knowledge base at v1.17.0 (shared fixture);
// testdata/kenkeep-kb holds its FOLDER_SUMMARIES.md and the sha256 of each
// file kenkeep generated from them (ENTRY.md, GRAPH.md, every index.md), as
// committed in kenkeep's repository at the same commit.
const kenkeepNodes = "../../../shared/fixtures/kenkeep-kb/nodes"

// kk's rebuild of kenkeep's knowledge base writes kenkeep's bytes: a
// repository moving between the two tools sees no diff in the generated
// files. kenkeep writes a folder's index.md without a final newline (the
// root's, with front matter, has one); kk wrote one, so every folder index
// of a kenkeep repository changed on the first kk rebuild.
func TestRebuildOfKenkeepsKnowledgeBaseGivesKenkeepsBytes(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".ai", "kenkeep")
	if err := os.CopyFS(filepath.Join(dir, "nodes"), os.DirFS(kenkeepNodes)); err != nil {
		t.Fatal(err)
	}
	summaries, err := os.ReadFile("testdata/kenkeep-kb/FOLDER_SUMMARIES.md")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "FOLDER_SUMMARIES.md"), summaries, 0o644); err != nil {
		t.Fatal(err)
	}
	k := store.New(root)
	defer func() { _ = k.Close() }()
	if _, err := txn.Rebuild(context.Background(), k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		t.Fatal(err)
	}
	sums, err := os.Open("testdata/kenkeep-kb/generated.sha256")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sums.Close() }()
	sc := bufio.NewScanner(sums)
	n := 0
	for sc.Scan() {
		want, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("bad line %q in generated.sha256", sc.Text())
		}
		n++
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if sum := sha256.Sum256(got); hex.EncodeToString(sum[:]) != want {
			var hint string
			if s := sha256.Sum256(bytes.TrimSuffix(got, []byte("\n"))); hex.EncodeToString(s[:]) == want {
				hint = " (kenkeep's has no final newline)"
			} else if s := sha256.Sum256(append(got, '\n')); hex.EncodeToString(s[:]) == want {
				hint = " (kenkeep's ends with a newline)"
			}
			t.Errorf("%s differs from kenkeep's%s", name, hint)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 16 {
		t.Fatalf("generated.sha256 lists %d files, want 16 (ENTRY.md, GRAPH.md, 14 index.md)", n)
	}
}
