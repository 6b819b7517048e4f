package graph

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/store"
)

func newKB(t *testing.T) *store.KB { return optest.NewKB(t) }

func run(t *testing.T, k *store.KB, fn optest.RawOp, raw string) map[string]any {
	t.Helper()
	return optest.Run(t, k, fn, raw)
}

func mustOK(t *testing.T, r map[string]any) map[string]any { t.Helper(); return optest.MustOK(t, r) }

func errCode(r map[string]any) string { return optest.ErrCode(r) }

func createAtom(t *testing.T, k *store.KB, name string, paths []string, molecule string) map[string]any {
	t.Helper()
	p := map[string]any{"operation": "create", "entityType": "atom", "name": name, "paths": paths, "knowledge": name + " knowledge", "createdByTaskId": "T-1"}
	if molecule != "" {
		p["moleculeId"] = molecule
	}
	b, _ := json.Marshal(p)
	return mustOK(t, run(t, k, ManageGraphJSON, string(b)))
}

func createMolecule(t *testing.T, k *store.KB, name string) map[string]any {
	t.Helper()
	return mustOK(t, run(t, k, ManageGraphJSON, fmt.Sprintf(`{"operation":"create","entityType":"molecule","name":%q,"knowledge":"about %s"}`, name, name)))
}

func TestCreateGetUpdateDelete(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	mol := createMolecule(t, k, "Payment Domain")
	if mol["id"] != "molecule-payment-domain" || mol["version"] != 1.0 || mol["path"] != ".ai/kenkeep/nodes/graph/molecule-payment-domain.md" {
		t.Fatalf("molecule: %v", mol)
	}
	a := createAtom(t, k, "Webhook Handlers", []string{"src/payments/webhook-*.ts"}, "molecule-payment-domain")
	if a["id"] != "map-webhook-handlers" || a["moleculeId"] != "molecule-payment-domain" || a["lastTaskId"] != "T-1" {
		t.Fatalf("atom: %v", a)
	}
	src, err := os.ReadFile(k.NodePath("graph/map-webhook-handlers.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := `---
type: map
title: Webhook Handlers
description: Webhook Handlers knowledge
tags: []
kk_schema_version: 3
kk_id: map-webhook-handlers
kk_derived_from: []
kk_relates_to: []
kk_depends_on: []
kk_confidence: high
kk_paths:
  - src/payments/webhook-*.ts
kk_molecule: molecule-payment-domain
kk_version: 1
kk_created_at: '2026-03-04T05:06:07Z'
kk_updated_at: '2026-03-04T05:06:07Z'
kk_created_by_task: T-1
kk_last_task: T-1
---
Webhook Handlers knowledge
`
	if string(src) != want {
		t.Fatalf("leaf:\n%s\nwant:\n%s", src, want)
	}

	got := mustOK(t, run(t, k, QueryGraphJSON, `{"operation":"get","entityType":"molecule","id":"molecule-payment-domain"}`))
	atoms := got["atoms"].([]any)
	if len(atoms) != 1 || atoms[0].(map[string]any)["id"] != "map-webhook-handlers" {
		t.Fatalf("molecule atoms: %v", got)
	}

	// update: wrong version, then right version with append
	r := run(t, k, ManageGraphJSON, `{"operation":"update","entityType":"atom","id":"map-webhook-handlers","version":7,"knowledge":"x"}`)
	if errCode(r) != op.CodeConflict || r["error"].(map[string]any)["details"].(map[string]any)["currentVersion"] != 1.0 {
		t.Fatalf("conflict: %v", r)
	}
	up := mustOK(t, run(t, k, ManageGraphJSON, `{"operation":"update","entityType":"atom","id":"map-webhook-handlers","version":1,"knowledge":"idempotent","knowledgeMode":"append","lastTaskId":"T-2"}`))
	wantK := "Webhook Handlers knowledge\n\n---[2026-03-04T05:06:07Z task:T-2]---\nidempotent"
	if up["knowledge"] != wantK || up["version"] != 2.0 || up["lastTaskId"] != "T-2" {
		t.Fatalf("append: %q %v", up["knowledge"], up)
	}
	// version is required on update and delete
	for _, operation := range []string{"update", "delete"} {
		r := run(t, k, ManageGraphJSON, fmt.Sprintf(`{"operation":%q,"entityType":"atom","id":"map-webhook-handlers"}`, operation))
		if errCode(r) != op.CodeValidation {
			t.Fatalf("%s without version: %v", operation, r)
		}
	}

	// delete molecule without cascade orphans the atom
	del := mustOK(t, run(t, k, ManageGraphJSON, `{"operation":"delete","entityType":"molecule","id":"molecule-payment-domain","version":1,"lastTaskId":"T-3"}`))
	if fmt.Sprint(del["orphaned"]) != "[map-webhook-handlers]" {
		t.Fatalf("delete: %v", del)
	}
	orphan := mustOK(t, run(t, k, QueryGraphJSON, `{"operation":"get","entityType":"atom","id":"map-webhook-handlers"}`))
	if orphan["moleculeId"] != nil || orphan["version"] != 3.0 || orphan["lastTaskId"] != "T-3" {
		t.Fatalf("orphaned atom: %v", orphan)
	}
	if _, err := os.Stat(k.NodePath("graph/molecule-payment-domain.md")); !os.IsNotExist(err) {
		t.Fatalf("molecule leaf still there: %v", err)
	}
	if r := run(t, k, QueryGraphJSON, `{"operation":"get","entityType":"molecule","id":"molecule-payment-domain"}`); errCode(r) != op.CodeNotFound {
		t.Fatalf("get deleted: %v", r)
	}
	// the index knows the new leaves
	entry, err := os.ReadFile(k.EntryPath())
	if err != nil {
		t.Fatal(err)
	}
	idx, _ := os.ReadFile(k.NodePath("graph/index.md"))
	if !strings.Contains(string(entry)+string(idx), "map-webhook-handlers") {
		t.Fatalf("index does not list the atom:\n%s\n%s", entry, idx)
	}
}

func TestCascadeDelete(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	createMolecule(t, k, "Pages")
	createAtom(t, k, "Checkout", []string{"src/pages/checkout/**"}, "molecule-pages")
	createAtom(t, k, "Profile", []string{"src/pages/profile/**"}, "molecule-pages")
	createAtom(t, k, "Retry", []string{"src/shared/retry.ts"}, "")
	mustOK(t, run(t, k, ManageChangelogJSON, `{"operation":"append","parentType":"atom","parentId":"map-checkout","taskId":"T-9","summary":"moved files"}`))
	del := mustOK(t, run(t, k, ManageGraphJSON, `{"operation":"delete","entityType":"molecule","id":"molecule-pages","version":1,"cascade":true}`))
	if fmt.Sprint(del["deleted"]) != "[molecule-pages map-checkout map-profile]" {
		t.Fatalf("cascade: %v", del)
	}
	res := mustOK(t, run(t, k, QueryGraphJSON, `{"operation":"search","entityType":"atom"}`))
	if res["total"] != 1.0 {
		t.Fatalf("left: %v", res)
	}
	if r := run(t, k, ManageChangelogJSON, `{"operation":"search","parentType":"atom","parentId":"map-checkout"}`); errCode(r) != op.CodeNotFound {
		t.Fatalf("changelog of deleted atom: %v", r)
	}
}
