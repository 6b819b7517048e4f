package graph

import (
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/op"
)

// A query_graph field that belongs to another operation is refused,
// naming the field, the operation and the fields it takes: ignored, it
// let a caller believe it had been applied (a taskFile given to search
// filtered nothing).
func TestQueryGraphRefusesFieldsOfOtherOperations(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	createAtom(t, k, "Checkout", []string{"src/checkout/**"}, "")
	for _, c := range []struct{ raw, field, operation, takes string }{
		{`{"operation":"search","taskFile":"tasks/T-1.md"}`, "taskFile", "search", "entityType, query, moleculeId, orphansOnly"},
		{`{"operation":"search","entityType":"atom","paths":["src/x.go"]}`, "paths", "search", "limit, offset"},
		{`{"operation":"search","entityType":"atom","id":"map-checkout"}`, "id", "search", "query"},
		{`{"operation":"get","entityType":"atom","id":"map-checkout","query":"checkout"}`, "query", "get", "entityType, id"},
		{`{"operation":"get","entityType":"atom","id":"map-checkout","limit":5}`, "limit", "get", "includeChangelog, changelogLimit"},
		{`{"operation":"get","entityType":"atom","id":"map-checkout","orphansOnly":true}`, "orphansOnly", "get", "id"},
		{`{"operation":"context","paths":["src/checkout/a.go"],"entityType":"atom"}`, "entityType", "context", "paths, taskFile"},
		{`{"operation":"context","paths":["src/checkout/a.go"],"moleculeId":"molecule-x"}`, "moleculeId", "context", "paths"},
		{`{"operation":"context","paths":["src/checkout/a.go"],"offset":1}`, "offset", "context", "taskFile"},
	} {
		r := run(t, k, QueryGraphJSON, c.raw)
		if errCode(r) != op.CodeValidation {
			t.Errorf("%s: code %q, want %s: %v", c.raw, errCode(r), op.CodeValidation, r)
			continue
		}
		e := r["error"].(map[string]any)
		msg := e["message"].(string)
		if !strings.HasPrefix(msg, c.field+": ") || !strings.Contains(msg, c.operation) || !strings.Contains(msg, c.takes) {
			t.Errorf("%s: message %q does not name the field %s, the operation %s and what it takes (%s)", c.raw, msg, c.field, c.operation, c.takes)
		}
		if d := e["details"].(map[string]any); d["field"] != c.field {
			t.Errorf("%s: details %v", c.raw, d)
		}
	}
	// What each operation takes still works, projectId and the changelog
	// options included.
	for _, raw := range []string{
		`{"operation":"get","entityType":"atom","id":"map-checkout","includeChangelog":true,"changelogLimit":2,"projectId":"` + ProjectID(k) + `"}`,
		`{"operation":"search","entityType":"atom","query":"checkout","moleculeId":"","orphansOnly":true,"limit":5,"offset":0,"includeChangelog":false,"changelogLimit":1}`,
		`{"operation":"context","paths":["src/checkout/a.go"],"includeChangelog":true,"changelogLimit":3}`,
	} {
		mustOK(t, run(t, k, QueryGraphJSON, raw))
	}
}

// So does manage_graph: delete takes no field of create or update, and
// create no lastTaskId (createdByTaskId is create's).
func TestManageGraphRefusesFieldsOfOtherOperations(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	a := createAtom(t, k, "Checkout", []string{"src/checkout/**"}, "")
	before := treeHash(t, k)
	for _, c := range []struct{ raw, field string }{
		{`{"operation":"create","entityType":"molecule","name":"M","lastTaskId":"T-2"}`, "lastTaskId"},
		{`{"operation":"delete","entityType":"atom","id":"map-checkout","version":1,"name":"Renamed"}`, "name"},
		{`{"operation":"delete","entityType":"atom","id":"map-checkout","version":1,"knowledge":"k"}`, "knowledge"},
		{`{"operation":"delete","entityType":"atom","id":"map-checkout","version":1,"paths":["a/**"]}`, "paths"},
		{`{"operation":"delete","entityType":"atom","id":"map-checkout","version":1,"moleculeId":null}`, "moleculeId"},
		{`{"operation":"delete","entityType":"atom","id":"map-checkout","version":1,"createdByTaskId":"T"}`, "createdByTaskId"},
	} {
		r := run(t, k, ManageGraphJSON, c.raw)
		if errCode(r) != op.CodeValidation {
			t.Errorf("%s: code %q, want %s: %v", c.raw, errCode(r), op.CodeValidation, r)
			continue
		}
		if msg := r["error"].(map[string]any)["message"].(string); !strings.HasPrefix(msg, c.field+": ") {
			t.Errorf("%s: message %q does not name %s", c.raw, msg, c.field)
		}
	}
	if treeHash(t, k) != before {
		t.Fatal("the tree changed")
	}
	if a["version"] != float64(1) {
		t.Fatalf("atom = %v", a)
	}
}
