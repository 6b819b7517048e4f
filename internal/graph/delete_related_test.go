package graph

import (
	"fmt"
	"strings"
	"testing"
)

// TestDeleteDropsRelatedEntries: an atom or molecule that others name in
// their related list leaves no dangling entry when it is deleted (each
// entity "names an atom that exists"): the entries pointing at it go, the
// leaves that held them get a new version, and the answer lists them in
// unlinked, as kb_delete removes the edges pointing at what it deletes.
func TestDeleteDropsRelatedEntries(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	createMolecule(t, k, "Pay")
	createMolecule(t, k, "Ship")
	createAtom(t, k, "Gone", []string{"src/gone/**"}, "molecule-pay")
	createAtom(t, k, "Keep", []string{"src/keep/**"}, "")
	mustOK(t, run(t, k, ManageGraphJSON, `{"operation":"update","entityType":"atom","id":"map-keep","version":1,"relatedAtoms":[{"atomId":"map-gone","reason":"calls it"}]}`))
	mustOK(t, run(t, k, ManageGraphJSON, `{"operation":"update","entityType":"molecule","id":"molecule-ship","version":1,"relatedMolecules":[{"moleculeId":"molecule-pay","reason":"pays"}]}`))

	d := mustOK(t, run(t, k, ManageGraphJSON, `{"operation":"delete","entityType":"atom","id":"map-gone","version":1}`))
	if fmt.Sprint(d["unlinked"]) != "[map-keep]" {
		t.Fatalf("delete of an atom another relates to: %v", d)
	}
	keep := mustOK(t, run(t, k, QueryGraphJSON, `{"operation":"get","entityType":"atom","id":"map-keep"}`))
	if rel := keep["relatedAtoms"].([]any); len(rel) != 0 || keep["version"] != 3.0 {
		t.Fatalf("map-keep after the delete: related %v, version %v", rel, keep["version"])
	}

	d = mustOK(t, run(t, k, ManageGraphJSON, `{"operation":"delete","entityType":"molecule","id":"molecule-pay","version":1}`))
	if fmt.Sprint(d["unlinked"]) != "[molecule-ship]" {
		t.Fatalf("delete of a molecule another relates to: %v", d)
	}
	ship := mustOK(t, run(t, k, QueryGraphJSON, `{"operation":"get","entityType":"molecule","id":"molecule-ship"}`))
	if rel := ship["relatedMolecules"].([]any); len(rel) != 0 {
		t.Fatalf("molecule-ship after the delete: %v", rel)
	}
	chk := run(t, k, QueryGraphJSON, `{"operation":"search","entityType":"atom"}`)
	if b := fmt.Sprint(chk); strings.Contains(b, "map-gone") {
		t.Fatalf("map-gone is still named: %s", b)
	}
}
