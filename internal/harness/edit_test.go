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
	user := "# Agents\n\nUser text.\n"
	once := UpsertBlock(user, "kk body")
	if want := user + "\n" + BlockStart + "\nkk body\n" + BlockEnd + "\n"; once != want {
		t.Fatalf("append: %q", once)
	}
	if twice := UpsertBlock(once, "kk body"); twice != once {
		t.Fatalf("second upsert changed the text: %q", twice)
	}
	if upd := UpsertBlock(once, "new"); upd != user+"\n"+BlockStart+"\nnew\n"+BlockEnd+"\n" {
		t.Fatalf("replace: %q", upd)
	}
	if back := RemoveBlock(once); back != user {
		t.Fatalf("remove: %q", back)
	}
	if got := UpsertBlock("", "b"); got != BlockStart+"\nb\n"+BlockEnd+"\n" {
		t.Fatalf("empty: %q", got)
	}
}
