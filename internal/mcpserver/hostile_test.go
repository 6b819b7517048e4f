package mcpserver

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/op"
)

// goInternals matches what a message about a caller's JSON must not show:
// Go's type names, its decoder's wording, kk's parameter structs.
var goInternals = regexp.MustCompile(`Go (struct|value)|\b(u?int(8|16|32|64)?|float(32|64))\b|\[\]string|json: |[A-Z][a-zA-Z]*Params\b|goroutine|\.go:[0-9]`)

// TestHostileArguments sends what a confused or prompt-injected agent
// might: ids that are no ids, megabytes where an id goes, numbers Go
// cannot hold, typos in a relationship pattern, one entity named twice.
// Each call gets a VALIDATION_ERROR or NOT_FOUND whose message names the
// field, stays short, and shows none of kk's Go types; nothing is written.
func TestHostileArguments(t *testing.T) {
	k := newKB(t)
	cs := connect(t, k)
	data(t, call(t, cs, "kb_upsert", map[string]any{
		"entities": []any{
			map[string]any{"id": "REQ-1", "type": "req", "title": "Log in"},
			map[string]any{"id": "TEST-1", "type": "test", "title": "login works"},
			map[string]any{"id": "SYM-1", "type": "symbol", "title": "Login"},
		},
		"edges":      []any{map[string]any{"type": "implements", "from": "SYM-1", "to": "REQ-1"}},
		"created_by": "agent", "source": "test",
	}))
	before := treeFiles(t, k)
	huge := strings.Repeat("x", 1<<20)
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	for _, c := range []struct {
		name string
		tool string
		args any
		code string
		want string // in the message
	}{
		{"a megabyte id to read", "kk_read", map[string]any{"id": huge}, op.CodeNotFound, "more bytes"},
		{"a megabyte id to get", "query_graph", map[string]any{"operation": "get", "entityType": "atom", "id": huge}, op.CodeNotFound, "more bytes"},
		{"a megabyte edge end", "kb_upsert", map[string]any{"edges": []any{map[string]any{"type": "implements", "from": "SYM-1", "to": huge}}, "created_by": "a", "source": "s"}, op.CodeValidation, "edges[0].to: "},
		{"a megabyte id to delete", "kb_delete", map[string]any{"entities": []any{map[string]any{"id": huge, "version": 1}}, "created_by": "a", "source": "s"}, op.CodeValidation, "entities[0].id: "},
		{"a megabyte search", "kk_search", map[string]any{"query": huge}, op.CodeValidation, "more bytes"},
		{"a name with a terminal escape", "manage_graph", map[string]any{"operation": "create", "entityType": "molecule", "name": "\x1b[2J Clear", "knowledge": "k"}, op.CodeValidation, "name: holds the control character U+001B"},
		{"a title with a bell", "kb_upsert", map[string]any{"entities": []any{map[string]any{"id": "REQ-9", "type": "req", "title": "t\a"}}, "created_by": "a", "source": "s"}, op.CodeValidation, "entities[0].title: holds the control character U+0007"},
		{"a task id with an escape", "manage_changelog", map[string]any{"operation": "append", "parentType": "atom", "parentId": "map-x", "taskId": "T\x1b]0;x", "summary": "s"}, op.CodeValidation, "taskId: holds the control character U+001B"},
		{"a folder with a control character", "kb_upsert", map[string]any{"entities": []any{map[string]any{"id": "REQ-9", "type": "req", "title": "t", "folder": "a\x01b"}}, "created_by": "a", "source": "s"}, op.CodeValidation, "entities[0].folder: "},
		{"a query id with a space", "kb_query", map[string]any{"id": "REQ 1"}, op.CodeValidation, `id: "REQ 1" is not an id`},
		{"a relationship end with a space", "kb_query", map[string]any{"type": "symbol", "relationship": map[string]any{"type": "implements", "other": "REQ 1"}}, op.CodeValidation, `relationship.other: "REQ 1" is not an id`},
		{"a misspelt relationship type", "kb_query", map[string]any{"type": "req", "relationship": map[string]any{"type": "verifed_by", "missing": true}}, op.CodeValidation, `relationship.type: "verifed_by" is not an edge type`},
		{"a misspelt entity type", "kb_query", map[string]any{"type": "reqs", "relationship": map[string]any{"type": "verified_by", "missing": true}}, op.CodeValidation, `type: "reqs" is not an entity type; use one of practice, map`},
		{"one entity deleted twice, in two cases", "kb_delete", map[string]any{"entities": []any{map[string]any{"id": "TEST-1", "version": 1}, map[string]any{"id": "test-1", "version": 1}}, "created_by": "a", "source": "s"}, op.CodeValidation, "entities[1].id: test-1 differs only in case from TEST-1"},
		{"a delete id with a space", "kb_delete", map[string]any{"entities": []any{map[string]any{"id": "TEST 1", "version": 1}}, "created_by": "a", "source": "s"}, op.CodeValidation, `entities[0].id: "TEST 1" is not an id`},
		{"an edge end with a space", "kb_delete", map[string]any{"edges": []any{map[string]any{"type": "implements", "from": "SYM 1", "to": "REQ-1"}}, "created_by": "a", "source": "s"}, op.CodeValidation, `edges[0].from: "SYM 1" is not an id`},
		{"a version past 2^64", "manage_graph", raw(`{"operation":"update","entityType":"atom","id":"map-x","version":18446744073709551616,"knowledge":"x"}`), op.CodeValidation, "version: "},
		{"a limit of 1.5", "kk_read", raw(`{"id":"REQ-1","changelogLimit":1.5}`), op.CodeValidation, "changelogLimit: "},
		{"an offset past int64", "query_graph", raw(`{"operation":"search","entityType":"atom","offset":9223372036854775808}`), op.CodeValidation, "offset: "},
		{"paths as a string of broken JSON", "manage_graph", map[string]any{"operation": "create", "entityType": "atom", "name": "A", "paths": `["src/**"`, "knowledge": "k"}, op.CodeValidation, "paths: "},
		{"paths as a string of JSON with more after it", "manage_graph", map[string]any{"operation": "create", "entityType": "atom", "name": "A", "paths": `["src/**"] ["other/**"]`, "knowledge": "k"}, op.CodeValidation, "paths: "},
		{"a field of another operation", "query_graph", map[string]any{"operation": "search", "entityType": "atom", "taskFile": "tasks/T-1.md"}, op.CodeValidation, "taskFile: the search operation does not take it; search takes entityType, query"},
		{"an edge from an entity to itself", "kb_upsert", map[string]any{"edges": []any{map[string]any{"type": "depends_on", "from": "REQ-1", "to": "req-1"}}, "created_by": "a", "source": "s"}, op.CodeValidation, "edges[0].to: req-1 is the edge's source; an entity cannot have a depends_on edge to itself"},
		{"an edge of an unknown type to delete", "kb_delete", map[string]any{"edges": []any{map[string]any{"type": "blocks", "from": "SYM-1", "to": "REQ-1"}}, "created_by": "a", "source": "s"}, op.CodeValidation, `edges[0].type: "blocks" is not an edge type; use one of affects, constrained_by, consumes`},
		{"a title with a right-to-left override", "kb_upsert", map[string]any{"entities": []any{map[string]any{"id": "REQ-9", "type": "req", "title": "Approve \u202Eelbat\u202C payments"}}, "created_by": "a", "source": "s"}, op.CodeValidation, "entities[0].title: holds the bidirectional control character U+202E at character 9"},
		{"a tag with an isolate", "kb_upsert", map[string]any{"entities": []any{map[string]any{"id": "REQ-9", "type": "req", "title": "t", "tags": []any{"ok", "a\u2066b"}}}, "created_by": "a", "source": "s"}, op.CodeValidation, "entities[0].tags[1]: holds the bidirectional control character U+2066 at character 2"},
		{"a description with an embedding", "kb_upsert", map[string]any{"entities": []any{map[string]any{"id": "REQ-9", "type": "req", "title": "t", "description": "\u202Ax"}}, "created_by": "a", "source": "s"}, op.CodeValidation, "entities[0].description: holds the bidirectional control character U+202A at character 1"},
		{"a body with a bell", "kb_upsert", map[string]any{"entities": []any{map[string]any{"id": "REQ-9", "type": "req", "title": "t", "body": "one\ntwo\a"}}, "created_by": "a", "source": "s"}, op.CodeValidation, "entities[0].body: holds the control character U+0007 on line 2"},
		{"knowledge with an escape", "manage_graph", map[string]any{"operation": "create", "entityType": "molecule", "name": "M", "knowledge": "a\n\x1b[2J"}, op.CodeValidation, "knowledge: holds the control character U+001B on line 2"},
		{"a molecule name with an override", "manage_graph", map[string]any{"operation": "create", "entityType": "molecule", "name": "M\u202E"}, op.CodeValidation, "name: holds the bidirectional control character U+202E at character 2"},
		{"a folder named as a Windows device", "kb_upsert", map[string]any{"entities": []any{map[string]any{"id": "REQ-9", "type": "req", "title": "t", "folder": "specs/Nul.txt"}}, "created_by": "a", "source": "s"}, op.CodeValidation, `folder: folder "specs/Nul.txt": Nul.txt is a device name on Windows`},
		{"a folder with a space", "kb_upsert", map[string]any{"entities": []any{map[string]any{"id": "REQ-9", "type": "req", "title": "t", "folder": "my specs"}}, "created_by": "a", "source": "s"}, op.CodeValidation, `folder: folder "my specs": my specs holds a space`},
		{"paths as a string of an object", "manage_graph", map[string]any{"operation": "create", "entityType": "atom", "name": "A", "paths": `{"a":1}`, "knowledge": "k"}, op.CodeValidation, "paths: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := call(t, cs, c.tool, c.args)
			wantCode(t, env, c.code)
			e := env["error"].(map[string]any)
			msg := e["message"].(string)
			if !strings.Contains(msg, c.want) {
				t.Errorf("message %q does not contain %q", msg, c.want)
			}
			b, _ := json.Marshal(e)
			if len(b) > 2000 {
				t.Errorf("the error is %d bytes: %.300s", len(b), b)
			}
			if leak := goInternals.FindString(string(b)); leak != "" {
				t.Errorf("the error shows kk's Go internals (%q): %s", leak, b)
			}
		})
	}
	// JSON Schema's integer takes 1.0 and 1e1, and so does kk.
	if d := data(t, call(t, cs, "kb_query", raw(`{"type":"req","limit":1e1,"offset":0.0}`))); d["limit"] != 10.0 || d["total"] != 1.0 {
		t.Errorf("kb_query with limit 1e1: %v", d)
	}
	if after := treeFiles(t, k); !slices.Equal(before, after) {
		t.Fatalf("refused calls changed the tree:\n%v\n%v", before, after)
	}
}
