package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
)

func TestNamesSortedAndComplete(t *testing.T) {
	t.Parallel()
	got := Names()
	if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Fatalf("Names() = %v: not sorted or not unique", got)
	}
	// The core's schemas are always there; other areas register more.
	for _, want := range []string{"config", "folder-summaries", "installed-version", "node", "node-input"} {
		if !slices.Contains(got, want) {
			t.Errorf("Names() lacks %q", want)
		}
	}
	for _, e := range Entries() {
		if e.Title == "" || e.Description == "" || strings.Contains(e.Description, "\n") {
			t.Errorf("%s: every entry needs a title and a one-line description", e.Name)
		}
	}
}

func TestJSONShape(t *testing.T) {
	t.Parallel()
	for _, e := range Entries() {
		t.Run(e.Name, func(t *testing.T) {
			data, err := JSON(e.Name)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasSuffix(data, []byte("}\n")) || !bytes.HasPrefix(data, []byte("{\n  \"$schema\": ")) {
				t.Errorf("schema is not 2-space indented JSON with a trailing newline:\n%s", data)
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			if m["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
				t.Errorf("$schema = %v", m["$schema"])
			}
			if m["$id"] != "https://kk.invalid/schemas/"+e.Name+".json" {
				t.Errorf("$id = %v", m["$id"])
			}
			if m["title"] != e.Title || m["description"] != e.Description {
				t.Errorf("title/description = %v / %v", m["title"], m["description"])
			}
			if e.Type.Kind() == reflect.Struct && m["type"] != "object" {
				t.Errorf("top-level type = %v, want object", m["type"])
			}
			if _, ok := m["$defs"]; ok {
				t.Errorf("schema has $defs; schemas are written inline")
			}
			if bytes.Contains(data, []byte(`\u003c`)) || bytes.Contains(data, []byte(`\u0026`)) {
				t.Errorf("schema escapes HTML characters")
			}
			again, _ := JSON(e.Name)
			if !bytes.Equal(data, again) {
				t.Errorf("two calls gave different bytes")
			}
		})
	}
}

func TestJSONKeywordOrder(t *testing.T) {
	t.Parallel()
	data, err := JSON("node")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	last := -1
	for _, k := range []string{`"$schema"`, `"$id"`, `"title"`, `"description"`, `"type": "object"`, `"required"`, `"properties"`, `"additionalProperties": true`} {
		i := strings.Index(s, k)
		if i <= last {
			t.Fatalf("keyword %s out of order in:\n%s", k, s)
		}
		last = i
	}
	// Properties keep the Go field order.
	if strings.Index(s, `"kk_schema_version": {`) > strings.Index(s, `"kk_id": {`) {
		t.Errorf("properties are not in field order")
	}
}

func TestUnknownName(t *testing.T) {
	t.Parallel()
	for _, call := range []func() error{
		func() error { _, err := JSON("nodes"); return err },
		func() error { return Validate("nodes", map[string]any{}) },
	} {
		err := call()
		var unk *UnknownError
		if !errors.As(err, &unk) {
			t.Fatalf("err = %v, want *UnknownError", err)
		}
		if msg := err.Error(); !strings.Contains(msg, `"nodes"`) || !strings.Contains(msg, strings.Join(Names(), ", ")) {
			t.Errorf("message %q does not name the schema and the known ones", msg)
		}
	}
}

func failures(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v (%T), want *ValidationError", err, err)
	}
	var out []string
	for _, f := range ve.Failures {
		out = append(out, f.String())
	}
	return out
}

const validLeaf = `---
type: practice
title: Use atomic writes
description: Every file kk writes is replaced atomically.
tags: [io]
status: stable
stale_after: 2027-01-31
generated:
  by: kk
  at: 2026-11-21T10:00:00Z
kk_schema_version: 3
kk_id: practice-use-atomic-writes
kk_derived_from: []
kk_relates_to: [map-atomicfile]
kk_confidence: high
x_custom: kept
---
# Use atomic writes
`

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		schema string
		doc    string
		want   []string // nil: valid
	}{
		{"node", validLeaf, nil},
		{"node", strings.Replace(validLeaf, "kk_id: practice-use-atomic-writes\n", "", 1), []string{"/kk_id: is required"}},
		{"node", `{"type":"Practice","title":" ","description":"d","tags":["a",5],"kk_schema_version":2,"kk_id":"practice_x","kk_derived_from":[],"kk_relates_to":"x","kk_confidence":"sure","status":"old","stale_after":"2026-13-45"}`, []string{
			"/kk_confidence: value must be one of 'low', 'medium', 'high'",
			"/kk_id: 'practice_x' does not match pattern '^[a-z][a-z0-9_-]*-[a-z0-9]+(-[a-z0-9]+)*$'",
			"/kk_relates_to: got string, want array",
			"/kk_schema_version: value must be 3",
			`/stale_after: '2026-13-45' is not valid date: parsing time "2026-13-45": month out of range`,
			"/status: value must be one of 'draft', 'stable', 'deprecated'",
			"/tags/1: got number, want string",
			`/title: ' ' does not match pattern '\\S'`,
			"/type: 'Practice' does not match pattern '^[a-z][a-z0-9_-]*$'",
		}},
		{"node", "[]", []string{"(root): got array, want object"}},
		{"node-input", `{"type":"practice","title":"T","description":"d","body":"b","relates_to":["map-x"]}`, nil},
		{"node-input", `{"type":"practice","title":"","body":"b","confidence":"certain","colour":"red"}`, []string{
			"/colour: is not allowed here (unknown property)",
			"/confidence: value must be one of 'low', 'medium', 'high'",
			"/description: is required",
			"/title: minLength: got 0, want 1",
		}},
		{"config", "schema_version: 1\ncurationThreshold: 5\nnotifications:\n  enabled: true\n  backends: {}\n", nil},
		{"config", "schema_version: 2\ncurationThreshold: 0\nnotifications: {enabled: true, sound: on}\ncurationthreshold: 3\n", []string{
			"/curationThreshold: minimum: got 0, want 1",
			"/curationthreshold: is not allowed here (unknown property)",
			"/notifications/sound: is not allowed here (unknown property)",
			"/schema_version: value must be 1",
		}},
		{"folder-summaries", "---\nschema_version: 1\nsummaries:\n  '': the root\n  api/v1: version one\n---\n# Folder Summaries\n", nil},
		{"folder-summaries", "---\nschema_version: 1\nsummaries:\n  api: [a, b]\n---\n", []string{"/summaries/api: got array, want string"}},
		{"installed-version", `{"schema_version":1,"package":"kk","version":"1.0.0","installed_at":"2026-11-21T10:00:00Z","harnesses":[]}`, nil},
		{"installed-version", `{"schema_version":1,"package":"kk","version":"1.0.0","harnesses":null}`, []string{
			"/harnesses: got null, want array",
			"/installed_at: is required",
		}},
	}
	for _, tt := range tests {
		doc, err := ParseDocument([]byte(tt.doc))
		if err != nil {
			t.Fatalf("%s: ParseDocument(%q): %v", tt.schema, tt.doc, err)
		}
		got := failures(t, Validate(tt.schema, doc))
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: Validate(%q)\n got: %q\nwant: %q", tt.schema, tt.doc, got, tt.want)
		}
	}
}

func TestValidationErrorMessage(t *testing.T) {
	t.Parallel()
	err := Validate("config", map[string]any{"curationThreshold": 0})
	want := "does not match schema config:\n  /curationThreshold: minimum: got 0, want 1\n  /schema_version: is required"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}

func TestFailureOrder(t *testing.T) {
	t.Parallel()
	items := []any{}
	for i := range 12 {
		if i == 2 || i == 10 {
			items = append(items, i)
		} else {
			items = append(items, "t")
		}
	}
	err := Validate("node", map[string]any{"tags": items})
	got := failures(t, err)
	i2 := slices.Index(got, "/tags/2: got number, want string")
	i10 := slices.Index(got, "/tags/10: got number, want string")
	if i2 < 0 || i10 < 0 || i2 > i10 {
		t.Errorf("array indexes are not ordered as numbers: %q", got)
	}
}

func TestPointerEscaping(t *testing.T) {
	t.Parallel()
	err := Validate("config", map[string]any{"schema_version": 1, "a/b~c": true})
	got := failures(t, err)
	if !slices.Equal(got, []string{"/a~1b~0c: is not allowed here (unknown property)"}) {
		t.Errorf("got %q", got)
	}
}

func TestValidateGoValue(t *testing.T) {
	t.Parallel()
	in := contracts.NodeInput{Type: "practice", Title: "T", Description: "d", Body: "b", Tags: []string{"x"}}
	if err := Validate("node-input", in); err != nil {
		t.Fatalf("a contracts.NodeInput value should validate: %v", err)
	}
	if err := Validate("node-input", map[string]any{"type": "practice", "title": "T", "description": "d", "body": "b", "tags": []string{"x"}, "n": 3}); err == nil {
		t.Fatal("unknown property n accepted")
	}
	if err := Validate("node", func() {}); err == nil || !strings.Contains(err.Error(), "cannot be represented as JSON") {
		t.Fatalf("err = %v", err)
	}
}

// Every registered schema compiles, and the empty object fails it only
// through its own rules.
func TestAllSchemasCompile(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		err := Validate(name, map[string]any{})
		if errors.Is(err, ErrInvalidSchema) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestValidateConcurrently(t *testing.T) {
	t.Parallel()
	done := make(chan error)
	for range 8 {
		go func() {
			var err error
			for _, name := range Names() {
				if e := Validate(name, map[string]any{}); errors.Is(e, ErrInvalidSchema) {
					err = e
				}
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// A leaf's YAML date survives into validation as the string it was.
func TestValidateLeafWithYAMLDate(t *testing.T) {
	t.Parallel()
	doc, err := ParseDocument([]byte(validLeaf))
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.(map[string]any)["stale_after"]; got != "2027-01-31" {
		t.Fatalf("stale_after = %#v", got)
	}
	if err := Validate("node", doc); err != nil {
		t.Fatal(err)
	}
}
