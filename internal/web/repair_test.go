package web

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/index"
)

// A search that fails on a damaged branch index is handed to
// Options.Repair (kk serve's: the index removed, to be built again from
// the tree) and, when it repaired something, run once more: the page's
// search answers instead of 500 until another route of the server met
// the damage. Found by the red team (kk serve's /api/find and /find
// answered 500 on an index.db with overwritten pages).
func TestSearchRunsAgainAfterARepair(t *testing.T) {
	k := fixture(t)
	ctx := context.Background()
	branch, err := index.CurrentBranch(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	var repaired []error
	h := New(k, Options{Repair: func(err error) bool {
		repaired = append(repaired, err)
		path := index.Path(k, branch)
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				t.Error(rerr)
			}
		}
		return true
	}})
	if res, body := get(t, h, "GET", "/api/find?q=wrap+errors"); res.StatusCode != 200 || !strings.Contains(body, "practice-wrap-errors") {
		t.Fatalf("before the damage: %d %s", res.StatusCode, body)
	}
	path := index.Path(k, branch)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA wal_checkpoint(FULL)"); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) <= 8192 {
		t.Fatalf("the index holds %d bytes: nothing past its first pages to damage", len(data))
	}
	copy(data[4096:], bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, (len(data)-4096)/4))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/api/find?q=wrap+errors", "/find?q=wrap+errors"} {
		if res, body := get(t, h, "GET", target); res.StatusCode != 200 || !strings.Contains(body, "practice-wrap-errors") {
			t.Errorf("%s after the damage: %d %.300s", target, res.StatusCode, body)
		}
	}
	// The index's open meets the damage first when it reads the damaged
	// pages itself (its schema's), and builds the index again on its
	// own, asking no repair; otherwise the search meets it and asks one.
	// Which one, the pages the damage fell on decide (the test failed 2
	// runs in 5 asking exactly one): the search answers either way, and a
	// repair asked is asked once, for the damage.
	if len(repaired) > 1 || len(repaired) == 1 && !strings.Contains(repaired[0].Error(), "malformed") {
		t.Errorf("repairs asked: %v", repaired)
	}
}
