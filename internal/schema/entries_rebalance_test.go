package schema

import (
	"slices"
	"testing"
)

// TestRebalanceAndPlacePlans checks that each rebalance operation is held
// to its own shape (a failure names the pointer inside the operation it
// concerns) and that place plans are checked too.
func TestRebalanceAndPlacePlans(t *testing.T) {
	t.Parallel()
	tests := []struct {
		schema, doc string
		want        []string // nil: valid
	}{
		{"rebalance-plan", `{"operations": [
			{"operation": "split-folder", "branch": "cli", "groups": [{"subfolder": "a", "summary": "", "ids": ["practice-x"]}]},
			{"operation": "merge", "branch": "solo", "into": ""},
			{"operation": "create-branch", "folder": "ops", "summary": "s", "ids": ["map-y"]},
			{"operation": "split-leaf", "leafId": "practice-x", "folder": ".", "summary": "", "children": [
				{"title": "One", "summary": "", "body": ""}, {"title": "Two", "summary": "", "body": "", "tags": ["t"], "relates_to": ["map-y"]}]}]}`, nil},
		{"rebalance-plan", `{"operations": []}`, nil},
		{"rebalance-plan", `{}`, []string{"/operations: is required"}},
		{"rebalance-plan", `{"operations": [
			{"operation": "merge", "branch": "solo", "ids": ["x"]},
			{"operation": "split-folder", "branch": "", "groups": []},
			{"operation": "create-branch", "folder": "ops", "summary": "s", "ids": []},
			{"operation": "split-leaf", "leafId": "x", "folder": "f", "summary": "", "children": [{"title": " ", "summary": "", "body": "", "depends_on": []}]},
			{"operation": "rename"}]}`, []string{
			"/operations/0/ids: is not allowed here (unknown property)",
			"/operations/0/into: is required",
			"/operations/1/branch: minLength: got 0, want 1",
			"/operations/1/groups: minItems: got 0, want 1",
			"/operations/2/ids: minItems: got 0, want 1",
			"/operations/3/children: minItems: got 1, want 2",
			"/operations/3/children/0/depends_on: is not allowed here (unknown property)",
			"/operations/3/children/0/title: ' ' does not match pattern '\\\\S'",
			"/operations/4/operation: value must be one of 'split-folder', 'merge', 'create-branch', 'split-leaf'",
		}},
		{"place-plan", `{"placements": [{"id": "practice-a", "targetFolder": ""}], "folders": [{"folder": "", "summary": "root"}]}`, nil},
		{"place-plan", `{"placements": [{"id": "", "targetFolder": "x", "extra": 1}], "folders": [{"folder": "x", "summary": " "}]}`, []string{
			"/folders/0/summary: ' ' does not match pattern '\\\\S'",
			"/placements/0/extra: is not allowed here (unknown property)",
			"/placements/0/id: minLength: got 0, want 1",
		}},
	}
	for i, tt := range tests {
		doc, err := ParseDocument([]byte(tt.doc))
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if got := failures(t, Validate(tt.schema, doc)); !slices.Equal(got, tt.want) {
			t.Errorf("%d (%s):\n got  %q\n want %q", i, tt.schema, got, tt.want)
		}
	}
}
