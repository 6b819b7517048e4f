package harness

import (
	"os"
	"path/filepath"
	"testing"
)

func TestObjectKeepsOrderAndUnknownKeys(t *testing.T) {
	o, err := ParseObject([]byte(`{"z": 1, "hooks": {"Stop": []}, "a": [1, {"b": 2}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Set("hooks", map[string]any{"Stop": []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	if err := o.Set("new", true); err != nil {
		t.Fatal(err)
	}
	out, _ := o.MarshalJSON()
	if want := `{"z":1,"hooks":{"Stop":["x"]},"a":[1,{"b":2}],"new":true}`; string(out) != want {
		t.Fatalf("got %s", out)
	}
	o.Delete("z")
	if o.Keys()[0] != "hooks" {
		t.Fatalf("keys %v", o.Keys())
	}
}

func TestEditJSONFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s", "settings.json")
	set := func(o *Object) error { return o.Set("kk", 1) }
	if a, err := EditJSONFile(dir, p, set, true); err != nil || a != "created" {
		t.Fatalf("create: %q %v", a, err)
	}
	if a, err := EditJSONFile(dir, p, set, true); err != nil || a != "" {
		t.Fatalf("second edit changed the file: %q %v", a, err)
	}
	if err := os.WriteFile(p, []byte("{\n    \"user\": true,\n    \"kk\": 1\n}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if a, err := EditJSONFile(dir, p, set, true); err != nil || a != "" {
		t.Fatalf("layout-only difference rewrote the file: %q %v", a, err)
	}
	del := func(o *Object) error { o.Delete("kk"); return nil }
	if a, err := EditJSONFile(dir, p, del, true); err != nil || a != "updated" {
		t.Fatalf("delete: %q %v", a, err)
	}
	data, _ := os.ReadFile(p)
	if string(data) != "{\n  \"user\": true\n}\n" {
		t.Fatalf("user key lost: %q", data)
	}
	if err := os.WriteFile(p, []byte("[1]"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := EditJSONFile(dir, p, set, true); err == nil {
		t.Fatal("a non-object file was edited")
	}
}

func TestBlocks(t *testing.T) {
	upsert := func(text, body string) string {
		t.Helper()
		out, err := UpsertBlock(text, body)
		if err != nil {
			t.Fatalf("upsert %q: %v", text, err)
		}
		return out
	}
	user := "# Agents\n\nUser text.\n"
	once := upsert(user, "kk body")
	if want := user + "\n" + BlockStart + "\nkk body\n" + BlockEnd + "\n"; once != want {
		t.Fatalf("append: %q", once)
	}
	if twice := upsert(once, "kk body"); twice != once {
		t.Fatalf("second upsert changed the text: %q", twice)
	}
	if upd := upsert(once, "new"); upd != user+"\n"+BlockStart+"\nnew\n"+BlockEnd+"\n" {
		t.Fatalf("replace: %q", upd)
	}
	if back, err := RemoveBlock(once); err != nil || back != user {
		t.Fatalf("remove: %q %v", back, err)
	}
	if got := upsert("", "b"); got != BlockStart+"\nb\n"+BlockEnd+"\n" {
		t.Fatalf("empty: %q", got)
	}
}

// TestBlockMarkersAreLines: ported from kenkeep's
// tests/lib/managed-block.test.ts. Markers named in a sentence are the
// user's text (matching them as substrings replaced the words between
// them with the block); a layout that is not one start line then one end
// line is refused and the text left as it is (an end line before a start
// line made the second write cut from that start to the end of the block
// appended after it, taking the user's text between).
func TestBlockMarkersAreLines(t *testing.T) {
	const head, middle, tail = "user head\n", "user notes between markers\n", "user tail that must survive\n"
	prose := head + "Docs: the block sits between `" + BlockStart + "` and `" + BlockEnd + "` lines.\n" + tail
	once, err := UpsertBlock(prose, "kk body")
	if err != nil || once != prose+"\n"+BlockStart+"\nkk body\n"+BlockEnd+"\n" {
		t.Fatalf("inline markers: %q %v", once, err)
	}
	if back, err := RemoveBlock(once); err != nil || back != prose {
		t.Fatalf("remove after inline markers: %q %v", back, err)
	}
	// A block kk wrote, between user text, is replaced in place.
	framed := head + BlockStart + "\nstale\n" + BlockEnd + "\n" + tail
	if got, err := UpsertBlock(framed, "kk body"); err != nil || got != head+BlockStart+"\nkk body\n"+BlockEnd+"\n"+tail {
		t.Fatalf("in place: %q %v", got, err)
	}
	for name, text := range map[string]string{
		"orphaned start": head + BlockStart + "\nstale\n" + tail,
		"orphaned end":   head + "stale\n" + BlockEnd + "\n" + tail,
		"two blocks":     head + BlockStart + "\nold\n" + BlockEnd + "\n" + middle + BlockStart + "\nolder\n" + BlockEnd + "\n" + tail,
		"end then start": head + BlockEnd + "\n" + middle + BlockStart + "\n" + tail,
	} {
		if got, err := UpsertBlock(text, "kk body"); err == nil || got != text {
			t.Errorf("%s: upsert gave %q, %v; want the text unchanged and an error", name, got, err)
		}
		if got, err := RemoveBlock(text); err == nil || got != text {
			t.Errorf("%s: remove gave %q, %v; want the text unchanged and an error", name, got, err)
		}
	}
}
