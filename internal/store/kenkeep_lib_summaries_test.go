package store

import (
	"maps"
	"strings"
	"testing"
)

// Ported from kenkeep v1.17 tests/lib/folder-summaries.test.ts: the folder
// summary registry round-trips through deterministic bytes, with its keys
// sorted, and writing back what was read changes nothing.
func TestKenkeepLibSummariesRoundTrip(t *testing.T) {
	in := Summaries{"workflow": "Workflow practices.", "storage/cache": "Cache internals"}
	first, err := RenderSummaries(in)
	if err != nil {
		t.Fatal(err)
	}
	wantFM := "---\nschema_version: 1\nsummaries:\n  storage/cache: Cache internals\n  workflow: Workflow practices.\n---\n"
	if !strings.HasPrefix(string(first), wantFM) {
		t.Errorf("rendered\n%s\nwant front matter\n%s", first, wantFM)
	}
	// The whole file is kenkeep's bytes (writeFolderSummaries: its heading
	// included), so that neither tool rewrites the other's file.
	if want := wantFM + "# kenkeep Folder Summaries\n\n- `storage/cache`: Cache internals\n- `workflow`: Workflow practices.\n"; string(first) != want {
		t.Errorf("rendered\n%s\nwant kenkeep's\n%s", first, want)
	}
	if empty, _ := RenderSummaries(Summaries{}); string(empty) != "---\nschema_version: 1\nsummaries: {}\n---\n# kenkeep Folder Summaries\n\n_No folder summaries recorded._\n" {
		t.Errorf("rendered no summaries as\n%s", empty)
	}
	back, err := ParseSummaries("FOLDER_SUMMARIES.md", first)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(back, in) {
		t.Errorf("parsed back %v, want %v", back, in)
	}
	again, err := RenderSummaries(back)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(first) {
		t.Errorf("second render differs:\n%s\nfirst:\n%s", again, first)
	}
	// Setting a summary to the value it has gives the same bytes.
	back["workflow"] = "Workflow practices."
	if same, _ := RenderSummaries(back); string(same) != string(first) {
		t.Errorf("setting an unchanged summary changed the bytes")
	}
	// Keys are normalized ('.'/'/' is the root, a trailing '/' goes) and a
	// key that leaves nodes/ is refused, naming it.
	src := "---\nschema_version: 1\nsummaries:\n  storage/: S\n  .: Root\n---\n"
	got, err := ParseSummaries("F.md", []byte(src))
	if err != nil || got["storage"] != "S" || got[""] != "Root" {
		t.Errorf("normalized keys: %v, %v", got, err)
	}
	if _, err := ParseSummaries("F.md", []byte("---\nschema_version: 1\nsummaries:\n  ../../evil: x\n---\n")); err == nil || !strings.Contains(err.Error(), "../../evil") {
		t.Errorf("escaping key: %v, want an error naming it", err)
	}
}
