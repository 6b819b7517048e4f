package schema

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the committed schemas under schemas/ from the Go types")

// schemasDir is the repository's schemas/ folder.
const schemasDir = "../../schemas"

const refreshCmd = "go test ./internal/schema -run TestSchemasUpToDate -update"

// TestSchemasUpToDate pins the committed schemas/<name>.json to what the
// Go types generate.
func TestSchemasUpToDate(t *testing.T) {
	t.Parallel()
	if *update {
		if err := os.MkdirAll(schemasDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range Names() {
		want, err := JSON(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		path := filepath.Join(schemasDir, name+".json")
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("schemas/%s.json: %v; generate it with: %s", name, err, refreshCmd)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("schemas/%s.json differs from what the Go types generate, first at line %d:\n  committed: %s\n  generated: %s\nrefresh it with: %s",
				name, firstDiffLine(got, want), lineAt(got, firstDiffLine(got, want)), lineAt(want, firstDiffLine(got, want)), refreshCmd)
		}
	}
}

// TestNoOrphanSchemas checks that every committed schema has a registry
// entry, so a renamed or removed entry does not leave a stale file.
func TestNoOrphanSchemas(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(schemasDir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no committed schemas in schemas/; generate them with: %s", refreshCmd)
	}
	names := Names()
	for _, f := range files {
		base := filepath.Base(f)
		name, ok := strings.CutSuffix(base, ".json")
		if !ok || !slices.Contains(names, name) {
			t.Errorf("schemas/%s has no registry entry in internal/schema; delete it or register %q", base, name)
		}
	}
}

// TestStructTagsParse catches jsonschema tags that the reflector would
// silently cut short: an unescaped comma inside a description or pattern
// starts a new (ignored) tag part. Escape such commas as \,.
func TestStructTagsParse(t *testing.T) {
	t.Parallel()
	bare := []string{"", "required", "nullable", "-", "uniqueItems"}
	seen := map[reflect.Type]bool{}
	var walk func(where string, typ reflect.Type)
	walk = func(where string, typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			tag := f.Tag.Get("jsonschema")
			for _, part := range splitTag(tag) {
				if !strings.Contains(part, "=") && !slices.Contains(bare, part) {
					t.Errorf("%s: field %s.%s: jsonschema tag part %q is not a keyword; escape commas inside values as \\,", where, typ.Name(), f.Name, part)
				}
			}
			walk(where, f.Type)
		}
	}
	for _, e := range Entries() {
		walk(e.Name, e.Type)
	}
}

// splitTag splits a jsonschema tag on commas not preceded by a backslash.
func splitTag(tag string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(tag); i++ {
		if tag[i] == ',' && (i == 0 || tag[i-1] != '\\') {
			parts = append(parts, tag[start:i])
			start = i + 1
		}
	}
	return append(parts, tag[start:])
}

func firstDiffLine(a, b []byte) int {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}

func lineAt(b []byte, n int) string {
	lines := strings.Split(string(b), "\n")
	if n-1 < len(lines) {
		return strings.TrimSpace(lines[n-1])
	}
	return "(end of file)"
}

func TestSplitTag(t *testing.T) {
	t.Parallel()
	got := splitTag(`minLength=1,description=a\, b,enum=x`)
	want := []string{"minLength=1", `description=a\, b`, "enum=x"}
	if !slices.Equal(got, want) {
		t.Fatalf("splitTag = %q, want %q", got, want)
	}
}
