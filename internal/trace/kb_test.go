package trace

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

func kbDeleteUser(ctx context.Context, k *store.KB, raw []byte) op.Envelope {
	return kbDeleteWith(DeleteOptions{})(ctx, k, raw)
}

func kbDeleteAgent(ctx context.Context, k *store.KB, raw []byte) op.Envelope {
	return kbDeleteWith(DeleteOptions{Agent: true})(ctx, k, raw)
}

// seedTrace writes a small traceability graph: a must req with a scenario
// and a test, a should req depending on it, a symbol implementing the
// first, an ADR constraining the symbol.
func seedTrace(t *testing.T, k *store.KB) map[string]any {
	t.Helper()
	return mustOK(t, run(t, k, KBUpsertJSON, `{
		"entities": [
			{"id": "req-7", "type": "req", "title": "Users log in with a passkey", "priority": "must", "tags": ["auth", "login"], "body": "Passkeys replace passwords."},
			{"id": "req-8", "type": "req", "title": "Sessions expire after a day", "priority": "should", "tags": ["auth"]},
			{"id": "scenario-login-passkey", "type": "scenario", "title": "Log in with a passkey"},
			{"id": "test-login-e2e", "type": "test", "title": "login e2e", "owner": "qa"},
			{"id": "symbol-auth-login", "type": "symbol", "title": "auth.Login", "links": ["https://example.com/auth"]},
			{"id": "adr-3", "type": "adr", "title": "WebAuthn only", "status": "stable"}
		],
		"edges": [
			{"type": "specified_by", "from": "REQ-7", "to": "scenario-login-passkey"},
			{"type": "verified_by", "from": "req-7", "to": "TEST-login-e2e"},
			{"type": "depends_on", "from": "REQ-8", "to": "REQ-7"},
			{"type": "implements", "from": "symbol-auth-login", "to": "REQ-7", "confidence": 0.9},
			{"type": "constrained_by", "from": "Symbol-Auth-Login", "to": "ADR-3"}
		],
		"created_by": "agent:test", "source": "task T-1"}`))
}

func TestUpsertCreatesLeavesAndAudit(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	d := seedTrace(t, k)
	if ids := toStrings(d["ids"]); !slices.Equal(ids, []string{"req-7", "req-8", "scenario-login-passkey", "test-login-e2e", "symbol-auth-login", "adr-3"}) {
		t.Fatalf("ids = %v", ids)
	}
	if len(toStrings(d["created"])) != 6 || d["edges"] != float64(5) || !strings.HasPrefix(d["changeset"].(string), "cs-") {
		t.Fatalf("result = %v", d)
	}
	src, err := os.ReadFile(k.NodePath("requirements/req-7.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"type: req\n", "kk_id: req-7\n", "status: draft\n", "kk_priority: must\n", "kk_version: 1\n",
		"- created_at: '2026-03-04T05:06:07Z'\n", "created_by: 'agent:test'", "to: scenario-login-passkey", "sources:\n  - task T-1\n", "Passkeys replace passwords."} {
		if !strings.Contains(string(src), want) {
			t.Errorf("req-7.md lacks %q:\n%s", want, src)
		}
	}
	recs, err := index.ReadAudit(k, "main")
	if err != nil {
		t.Fatal(err)
	}
	// The first record is kk init's (it created FOLDER_SUMMARIES.md).
	if len(recs) != 2 || recs[1].Actor != "agent:test" || recs[1].Source != "task T-1" || recs[1].Changeset != d["changeset"] || len(recs[1].Ops) != 11 {
		t.Fatalf("audit = %+v", recs)
	}
	// The same changeset again changes nothing but still leaves a record.
	before := treeHash(t, k)
	d2 := seedTrace(t, k)
	if len(toStrings(d2["unchanged"])) != 6 || d2["edges"] != float64(0) {
		t.Fatalf("second run = %v", d2)
	}
	if treeHash(t, k) != before {
		t.Fatal("a repeated changeset changed the tree")
	}
	// An update raises the version and keeps the other fields.
	d3 := mustOK(t, run(t, k, KBUpsertJSON, `{"entities":[{"id":"req-7","type":"req","status":"stable","version":1}],"created_by":"me","source":"review"}`))
	if !slices.Equal(toStrings(d3["updated"]), []string{"req-7"}) {
		t.Fatalf("update = %v", d3)
	}
	src, _ = os.ReadFile(k.NodePath("requirements/req-7.md"))
	for _, want := range []string{"status: stable\n", "kk_version: 2\n", "kk_priority: must\n", "  - review\n", "title: Users log in with a passkey\n"} {
		if !strings.Contains(string(src), want) {
			t.Errorf("updated req-7.md lacks %q:\n%s", want, src)
		}
	}
	if r := run(t, k, KBUpsertJSON, `{"entities":[{"id":"req-7","type":"req","status":"draft","version":1}],"created_by":"me","source":"s"}`); errCode(r) != op.CodeConflict {
		t.Fatalf("stale version: %v", r)
	} else if det := r["error"].(map[string]any)["details"].(map[string]any); det["currentVersion"] != float64(2) {
		t.Fatalf("conflict details = %v", det)
	}
	if recs, _ := index.ReadAudit(k, "main"); len(recs) != 1+3 {
		t.Fatalf("%d audit records after kk init and 3 applied changesets", len(recs))
	}
}

func TestUpsertBadInputWritesNothing(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	seedTrace(t, k)
	createMolecule(t, k, "Auth")
	before := treeHash(t, k)
	recs, _ := index.ReadAudit(k, "main")
	long := strings.Repeat("b", graph.MaxKnowledgeBytes+1)
	cases := []struct {
		name, raw, code string
	}{
		{"malformed json", `{"entities":[`, op.CodeValidation},
		{"unknown field", `{"entities":[],"bogus":1,"created_by":"a","source":"s"}`, op.CodeValidation},
		{"empty changeset", `{"created_by":"a","source":"s"}`, op.CodeValidation},
		{"no created_by", `{"entities":[{"id":"x","type":"req","title":"x"}],"source":"s"}`, op.CodeValidation},
		{"no source", `{"entities":[{"id":"x","type":"req","title":"x"}],"created_by":"a"}`, op.CodeValidation},
		{"wrong entity type", `{"entities":[{"id":"x","type":"feature","title":"x"}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"atom type", `{"entities":[{"id":"x","type":"map","title":"x"}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"no title on create", `{"entities":[{"id":"new","type":"req"}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"bad status", `{"entities":[{"id":"x","type":"req","title":"x","status":"done"}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"oversized body", `{"entities":[{"id":"x","type":"req","title":"x","body":"` + long + `"}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"long title", `{"entities":[{"id":"x","type":"req","title":"` + strings.Repeat("t", 256) + `"}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"duplicate id", `{"entities":[{"id":"req-x","type":"req","title":"x"},{"id":"req-x","type":"req","title":"y"}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"ids differing only in case", `{"entities":[{"id":"req-x","type":"req","title":"x"},{"id":"REQ-X","type":"req","title":"y"}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"id with a space", `{"entities":[{"id":"REQ 9","type":"req","title":"x"}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"non-ASCII id", `{"entities":[{"id":"café","type":"req","title":"x"}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"id without letters", `{"entities":[{"id":"--","type":"req","title":"x"}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"unknown edge type", `{"edges":[{"type":"blocks","from":"req-7","to":"req-8"}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"edge to a missing id", `{"edges":[{"type":"verified_by","from":"req-7","to":"test-nope"}],"created_by":"a","source":"s"}`, op.CodeNotFound},
		{"edge from a missing id", `{"edges":[{"type":"verified_by","from":"req-nope","to":"test-login-e2e"}],"created_by":"a","source":"s"}`, op.CodeNotFound},
		{"edge endpoint types", `{"edges":[{"type":"verified_by","from":"req-7","to":"scenario-login-passkey"}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"edge source type", `{"edges":[{"type":"implements","from":"adr-3","to":"req-7"}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"relates_to without kind", `{"edges":[{"type":"relates_to","from":"adr-3","to":"req-7"}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"confidence out of range", `{"edges":[{"type":"implements","from":"symbol-auth-login","to":"req-8","confidence":2}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"other project", `{"projectId":"elsewhere","entities":[{"id":"x","type":"req","title":"x"}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"version of a missing entity", `{"entities":[{"id":"nope","type":"req","title":"x","version":1}],"created_by":"a","source":"s"}`, op.CodeNotFound},
		{"second entity fails after a valid first", `{"entities":[{"id":"fine","type":"req","title":"fine"},{"id":"bad","type":"req","title":"x","status":"?"}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"valid entity, then an edge to nothing", `{"entities":[{"id":"fine","type":"req","title":"fine"}],"edges":[{"type":"depends_on","from":"req-fine","to":"req-ghost"}],"created_by":"a","source":"s"}`, op.CodeNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, k, KBUpsertJSON, c.raw)
			if got := errCode(r); got != c.code {
				t.Fatalf("code %q, want %q: %v", got, c.code, r)
			}
			if treeHash(t, k) != before {
				t.Fatal("the tree changed")
			}
			if now, _ := index.ReadAudit(k, "main"); len(now) != len(recs) {
				t.Fatal("a failed changeset left an audit record")
			}
		})
	}
}

func TestDelete(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	seedTrace(t, k)
	before := treeHash(t, k)
	for _, c := range []struct {
		name string
		op   func(context.Context, *store.KB, []byte) op.Envelope
		raw  string
		code string
	}{
		{"missing entity", kbDeleteUser, `{"entities":["req-nope"],"created_by":"a","source":"s"}`, op.CodeNotFound},
		{"missing edge", kbDeleteUser, `{"edges":[{"type":"verified_by","from":"req-8","to":"test-login-e2e"}],"created_by":"a","source":"s"}`, op.CodeNotFound},
		{"stale version", kbDeleteUser, `{"entities":[{"id":"test-login-e2e","version":4}],"created_by":"a","source":"s"}`, op.CodeConflict},
		{"agent without version", kbDeleteAgent, `{"entities":["test-login-e2e"],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"agent deleting a req", kbDeleteAgent, `{"entities":[{"id":"req-8","version":1}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"agent deleting an adr", kbDeleteAgent, `{"entities":[{"id":"ADR-3","version":1}],"created_by":"a","source":"s"}`, op.CodeValidation},
		{"a molecule", kbDeleteUser, `{"entities":["molecule-x"],"created_by":"a","source":"s"}`, op.CodeNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			if r := run(t, k, c.op, c.raw); errCode(r) != c.code {
				t.Fatalf("code %q, want %q: %v", errCode(r), c.code, r)
			}
			if treeHash(t, k) != before {
				t.Fatal("the tree changed")
			}
		})
	}
	// An agent deletes a test with its version: the req's verified_by edge
	// to it goes too.
	d := mustOK(t, run(t, k, kbDeleteAgent, `{"entities":[{"id":"test-login-e2e","version":1}],"created_by":"agent","source":"s"}`))
	if !slices.Equal(toStrings(d["deleted"]), []string{"test-login-e2e"}) || !slices.Equal(toStrings(d["updated"]), []string{"req-7"}) || d["edges"] != float64(1) {
		t.Fatalf("delete = %v", d)
	}
	if _, err := os.Stat(k.NodePath("tests/test-login-e2e.md")); !os.IsNotExist(err) {
		t.Fatal("the leaf is still there")
	}
	src, _ := os.ReadFile(k.NodePath("requirements/req-7.md"))
	if strings.Contains(string(src), "test-login-e2e") || !strings.Contains(string(src), "kk_version: 2") {
		t.Fatalf("req-7 still points at the deleted test, or kept its version:\n%s", src)
	}
	// A person deletes one edge and a req.
	d = mustOK(t, run(t, k, kbDeleteUser, `{"entities":["REQ-8"],"edges":[{"type":"constrained_by","from":"symbol-auth-login","to":"adr-3"}],"created_by":"me","source":"cleanup"}`))
	if d["edges"] != float64(1) || !slices.Equal(toStrings(d["deleted"]), []string{"req-8"}) {
		t.Fatalf("delete = %v", d)
	}
	recs, _ := index.ReadAudit(k, "main")
	if len(recs) != 1+3 || !slices.ContainsFunc(recs[3].Ops, func(op index.AuditOp) bool { return op.Op == "delete" && op.ID == "req-8" }) {
		t.Fatalf("audit = %+v", recs)
	}
}

func TestQuery(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	seedTrace(t, k)
	q := func(raw string) []string {
		t.Helper()
		d := mustOK(t, run(t, k, KBQueryJSON, raw))
		var ids []string
		for _, e := range d["entities"].([]any) {
			ids = append(ids, e.(map[string]any)["id"].(string))
		}
		return ids
	}
	for _, c := range []struct {
		raw  string
		want []string
	}{
		{`{"type":"req"}`, []string{"req-7", "req-8"}},
		{`{"id":"REQ-7"}`, []string{"req-7"}},
		{`{"tags":["auth","login"]}`, []string{"req-7"}},
		{`{"status":"stable"}`, []string{"adr-3"}},
		{`{"type":"req","relationship":{"type":"verified_by","missing":true}}`, []string{"req-8"}},
		{`{"type":"symbol","relationship":{"type":"implements","other":"REQ-7"}}`, []string{"symbol-auth-login"}},
		{`{"relationship":{"type":"depends_on","direction":"in"}}`, []string{"req-7"}},
		{`{"type":"req","limit":1,"offset":1}`, []string{"req-8"}},
	} {
		if got := q(c.raw); !slices.Equal(got, c.want) {
			t.Errorf("%s = %v, want %v", c.raw, got, c.want)
		}
	}
	d := mustOK(t, run(t, k, KBQueryJSON, `{"id":"req-7"}`))
	e := d["entities"].([]any)[0].(map[string]any)
	if len(e["edges"].([]any)) != 2 || len(e["incoming"].([]any)) != 2 || e["priority"] != "must" || e["path"] != "requirements/req-7.md" {
		t.Fatalf("req-7 = %v", e)
	}
	for _, raw := range []string{`{"relationship":{"type":"x","direction":"sideways"}}`, `{"limit":0}`, `{"status":"done"}`, `{"bogus":1}`} {
		if r := run(t, k, KBQueryJSON, raw); errCode(r) != op.CodeValidation {
			t.Errorf("%s: %v", raw, r)
		}
	}
}

func TestCheckRules(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	seedTrace(t, k)
	check := func(raw string) []Violation {
		t.Helper()
		d := mustOK(t, run(t, k, KBCheckJSON, raw))
		b, _ := json.Marshal(d["violations"])
		var v []Violation
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := check(`{}`); len(v) != 0 {
		t.Fatalf("a consistent graph has violations: %+v", v)
	}
	// REQ-8 becomes a must without coverage and REQ-7 depends back on it.
	mustOK(t, run(t, k, KBUpsertJSON, `{"entities":[{"id":"req-8","type":"req","priority":"must"}],
		"edges":[{"type":"depends_on","from":"req-7","to":"req-8"}],"created_by":"a","source":"s"}`))
	// Hand-written leaves: a symbol implementing a req that does not exist,
	// a dangling edge, and an edge with the wrong endpoint types.
	writeHand := func(rel, content string) {
		t.Helper()
		if err := os.WriteFile(k.NodePath(rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeHand("symbols/symbol-orphan.md", "---\nkk_schema_version: 3\ntype: symbol\ntitle: orphan\ndescription: ''\ntags: []\nkk_id: symbol-orphan\nkk_derived_from: []\nkk_relates_to: []\nkk_confidence: high\n"+
		"kk_edges:\n  - type: implements\n    to: req-99\n  - type: publishes\n    to: event-ghost\n  - type: covered_by\n    to: adr-3\n---\n")
	v := check(`{}`)
	got := map[string][]string{}
	for _, x := range v {
		got[x.Rule] = append(got[x.Rule], strings.Join(x.IDs, ","))
	}
	want := map[string][]string{
		RuleMustCoverage:      {"req-8"},
		RuleDependsOnAcyclic:  {"req-7,req-8"},
		RuleSymbolReqExists:   {"symbol-orphan,req-99"},
		RuleNoDanglingEdges:   {"symbol-orphan,event-ghost"},
		RuleEdgeEndpointTypes: {"symbol-orphan,adr-3"},
	}
	for rule, ids := range want {
		if !slices.Equal(got[rule], ids) {
			t.Errorf("%s: %v, want %v", rule, got[rule], ids)
		}
	}
	if len(v) != 5 {
		t.Errorf("%d violations: %+v", len(v), v)
	}
	if v := check(`{"rules":["depends-on-acyclic"]}`); len(v) != 1 {
		t.Errorf("one rule: %+v", v)
	}
	if r := run(t, k, KBCheckJSON, `{"rules":["nope"]}`); errCode(r) != op.CodeValidation {
		t.Errorf("unknown rule: %v", r)
	}
	// Cycles allowed by config.
	cfg, _ := os.ReadFile(k.ConfigPath())
	if err := os.WriteFile(k.ConfigPath(), append(cfg, "traceability:\n  allowDependsOnCycles: true\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if v := check(`{"rules":["depends-on-acyclic"]}`); len(v) != 0 {
		t.Errorf("cycles allowed but reported: %+v", v)
	}
}

func toStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// One kb_upsert reads config.yaml once, in its transaction under the lock:
// the project check, the branch, the index's sync and the changeset's rows
// all follow that one reading. A config.yaml broken once the files are
// replaced does not reach the commit's index update (which read it a
// second time, and failed the changeset, before).
func TestKBUpsertReadsTheConfigOnce(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	good, err := os.ReadFile(k.ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	ctx := txn.WithFaults(context.Background(), txn.Faults{At: func(point string) {
		if point == "applied" {
			if err := os.WriteFile(k.ConfigPath(), []byte("schema_version: [\n"), 0o644); err != nil {
				t.Error(err)
			}
		}
	}})
	res, err := KBUpsert(ctx, k, KBUpsertParams{ProjectID: graph.ProjectID(k), CreatedBy: "t", Source: "test",
		Entities: []KBEntityIn{{ID: "req-1", Type: "req", Title: "One reading"}}})
	if err != nil {
		t.Fatalf("kb_upsert with config.yaml broken after its reading: %v", err)
	}
	if !slices.Equal(res.Created, []string{"req-1"}) {
		t.Fatalf("created %v; want [req-1]", res.Created)
	}
	if _, err := k.LoadConfig(); err == nil {
		t.Fatal("the fault did not break config.yaml")
	}
	if err := os.WriteFile(k.ConfigPath(), good, 0o644); err != nil {
		t.Fatal(err)
	}
	q := mustOK(t, run(t, k, KBQueryJSON, `{"type":"req"}`))
	if q["total"] != float64(1) {
		t.Fatalf("kb_query after the upsert: %v", q)
	}
}

// An edge to an id that a split retired (nodes/.redirects.json) and that
// resolves to live leaves is not dangling: kk lint calls it a finding
// (redirected-edge), and kk rebalance move leaves such edges in place.
func TestCheckFollowsRedirects(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	leaf := func(id, relates string) {
		t.Helper()
		src := "---\nkk_schema_version: 3\ntype: practice\ntitle: " + id + "\ndescription: d\ntags: []\nkk_id: " + id +
			"\nkk_derived_from: []\nkk_relates_to: [" + relates + "]\nkk_confidence: high\n---\nBody.\n"
		if err := os.WriteFile(k.NodePath(id+".md"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	leaf("practice-a", "practice-old")
	leaf("practice-b", "")
	leaf("practice-c", "practice-gone")
	if err := os.WriteFile(k.RedirectsPath(), []byte("{\n  \"practice-gone\": [\"practice-nowhere\"],\n  \"practice-old\": [\"practice-b\"]\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := mustOK(t, run(t, k, KBCheckJSON, `{"rules":["no-dangling-edges"]}`))
	b, _ := json.Marshal(d["violations"])
	var v []Violation
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v) != 1 || strings.Join(v[0].IDs, ",") != "practice-c,practice-gone" {
		t.Fatalf("violations %+v, want only practice-c's edge to practice-gone (retired, no live successor)", v)
	}
}
