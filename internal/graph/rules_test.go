package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/store"
)

func TestValidatePattern(t *testing.T) {
	t.Parallel()
	cases := []struct {
		pattern string
		ok      bool
	}{
		{"src/pages/checkout/**", true},
		{"src/components/checkout-*.tsx", true},
		{"src/{a,b}/*.go", true},
		{"src/shared/email-client.ts", true},
		{"", false},
		{" src/a.ts", false},
		{"/etc/passwd", false},
		{`\\server\share`, false},
		{"C:/x/*.go", false},
		{"../outside/**", false},
		{"src/../../x", false},
		{"src/[a-", false},
		{"src/{a,b", false},
		{strings.Repeat("a", MaxPatternChars), true},
		{strings.Repeat("a", MaxPatternChars+1), false},
		{"src/a\nb", false},
	}
	for _, c := range cases {
		err := ValidatePattern("paths[0]", c.pattern)
		if (err == nil) != c.ok {
			t.Errorf("ValidatePattern(%q) = %v, want ok=%v", c.pattern, err, c.ok)
		}
		if err != nil && err.Code != op.CodeValidation {
			t.Errorf("ValidatePattern(%q) code %s", c.pattern, err.Code)
		}
	}
	many := make([]string, MaxPatterns+1)
	for i := range many {
		many[i] = fmt.Sprintf("src/%d/**", i)
	}
	if _, err := ValidatePaths("paths", many[:MaxPatterns]); err != nil {
		t.Errorf("20 patterns: %v", err)
	}
	if _, err := ValidatePaths("paths", many); err == nil || err.Code != op.CodeValidation {
		t.Errorf("21 patterns: %v", err)
	}
	if _, err := ValidatePaths("paths", nil); err == nil || err.Code != op.CodeInvariant {
		t.Errorf("no patterns: %v", err)
	}
	if got, _ := ValidatePaths("paths", []string{"a/*", "b/*", "a/*"}); fmt.Sprint(got) != "[a/* b/*]" {
		t.Errorf("duplicates kept: %v", got)
	}
}

func TestFieldBounds(t *testing.T) {
	t.Parallel()
	if _, err := ValidateName("name", strings.Repeat("é", MaxNameChars)); err != nil {
		t.Errorf("255 characters: %v", err)
	}
	for _, bad := range []string{"", "   ", strings.Repeat("x", MaxNameChars+1), "two\nlines"} {
		if _, err := ValidateName("name", bad); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
	if s, err := ValidateKnowledge("knowledge", "  "+strings.Repeat("k", MaxKnowledgeBytes)+"\n\n"); err != nil || len(s) != MaxKnowledgeBytes {
		t.Errorf("32 KB after trimming: %v", err)
	}
	if _, err := ValidateKnowledge("knowledge", strings.Repeat("k", MaxKnowledgeBytes+1)); err == nil {
		t.Error("knowledge over 32 KB accepted")
	}
	if _, err := ValidateSummary("summary", "x"); err != nil {
		t.Errorf("1 byte summary: %v", err)
	}
	for _, bad := range []string{"", " \n", strings.Repeat("s", MaxSummaryBytes+1)} {
		if _, err := ValidateSummary("summary", bad); err == nil {
			t.Errorf("summary of %d bytes accepted", len(bad))
		}
	}
	if err := ValidateTaskID("taskId", "", true); err == nil {
		t.Error("empty required task id accepted")
	}
	if err := ValidateTaskID("taskId", "PROJ-12 / anything opaque", true); err != nil {
		t.Errorf("opaque task id: %v", err)
	}
}

func TestCheckEdge(t *testing.T) {
	t.Parallel()
	cases := []struct {
		edge, from, to, kind string
		ok                   bool
	}{
		{"verified_by", "req", "test", "", true},
		{"verified_by", "req", "scenario", "", false},
		{"implements", "symbol", "req", "", true},
		{"implements", "req", "symbol", "", false},
		{"affects", "adr", "molecule", "", true},
		{"affects", "adr", "map", "", true},
		{"guards", "flag", "event", "", true},
		{"relates_to", "practice", "whatever", "explains", true},
		{"relates_to", "practice", "map", "", false},
		{"blocks", "req", "req", "", false},
	}
	for _, c := range cases {
		if err := CheckEdge(c.edge, c.from, c.to, c.kind); (err == nil) != c.ok {
			t.Errorf("CheckEdge(%s %s->%s) = %v", c.edge, c.from, c.to, err)
		}
	}
}

func treeHash(t *testing.T, k *store.KB) string { return optest.TreeHash(t, k) }

func TestErrorCodes(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	createMolecule(t, k, "Pages")
	createAtom(t, k, "Checkout", []string{"src/pages/checkout/**"}, "molecule-pages")
	before := treeHash(t, k)
	long := strings.Repeat("x", MaxKnowledgeBytes+1)
	var rel []string
	for i := 0; i <= MaxRelated; i++ {
		rel = append(rel, fmt.Sprintf(`{"atomId":"map-%d","reason":"r"}`, i))
	}
	tooMany := "[" + strings.Join(rel, ",") + "]"
	cases := []struct {
		name string
		op   func(context.Context, *store.KB, []byte) op.Envelope
		raw  string
		code string
	}{
		{"malformed json", ManageGraphJSON, `{"operation":`, op.CodeValidation},
		{"unknown field", ManageGraphJSON, `{"operation":"create","entityType":"atom","bogus":1}`, op.CodeValidation},
		{"wrong entity type", ManageGraphJSON, `{"operation":"create","entityType":"feature","name":"x"}`, op.CodeValidation},
		{"other project", ManageGraphJSON, `{"operation":"create","entityType":"molecule","name":"x","projectId":"someone-else"}`, op.CodeValidation},
		{"glob with ..", ManageGraphJSON, `{"operation":"create","entityType":"atom","name":"x","paths":["../x/**"]}`, op.CodeValidation},
		{"paths as string with ..", ManageGraphJSON, `{"operation":"create","entityType":"atom","name":"x","paths":"[\"src/../../x\"]"}`, op.CodeValidation},
		{"absolute glob", ManageGraphJSON, `{"operation":"create","entityType":"atom","name":"x","paths":["/src/**"]}`, op.CodeValidation},
		{"invalid glob", ManageGraphJSON, `{"operation":"create","entityType":"atom","name":"x","paths":["src/[a-"]}`, op.CodeValidation},
		{"no paths on create", ManageGraphJSON, `{"operation":"create","entityType":"atom","name":"x"}`, op.CodeInvariant},
		{"empty paths on create", ManageGraphJSON, `{"operation":"create","entityType":"atom","name":"x","paths":[]}`, op.CodeInvariant},
		{"empty paths on update", ManageGraphJSON, `{"operation":"update","entityType":"atom","id":"map-checkout","version":1,"paths":"[]"}`, op.CodeInvariant},
		{"oversized knowledge", ManageGraphJSON, `{"operation":"create","entityType":"molecule","name":"x","knowledge":"` + long + `"}`, op.CodeValidation},
		{"empty name", ManageGraphJSON, `{"operation":"create","entityType":"molecule","name":"  "}`, op.CodeValidation},
		{"long name", ManageGraphJSON, `{"operation":"create","entityType":"molecule","name":"` + strings.Repeat("n", 256) + `"}`, op.CodeValidation},
		{"name giving an id past 128 characters", ManageGraphJSON, `{"operation":"create","entityType":"atom","name":"` + strings.Repeat("long ", 50) + `","paths":["a/*"]}`, op.CodeValidation},
		{"knowledge with a front matter of its own", ManageGraphJSON, `{"operation":"create","entityType":"atom","name":"x","paths":["a/*"],"knowledge":"---\ntitle: x\n---\ntext"}`, op.CodeValidation},
		{"update to knowledge with a front matter", ManageGraphJSON, `{"operation":"update","entityType":"atom","id":"map-checkout","version":1,"knowledge":"---\ntitle: x\n---\ntext"}`, op.CodeValidation},
		{"too many related", ManageGraphJSON, `{"operation":"create","entityType":"atom","name":"x","paths":["a/*"],"relatedAtoms":` + tooMany + `}`, op.CodeValidation},
		{"paths on a molecule", ManageGraphJSON, `{"operation":"create","entityType":"molecule","name":"x","paths":["a/*"]}`, op.CodeValidation},
		{"missing molecule", ManageGraphJSON, `{"operation":"create","entityType":"atom","name":"x","paths":["a/*"],"moleculeId":"molecule-nope"}`, op.CodeNotFound},
		{"missing related atom", ManageGraphJSON, `{"operation":"create","entityType":"atom","name":"x","paths":["a/*"],"relatedAtoms":[{"atomId":"map-nope","reason":"r"}]}`, op.CodeNotFound},
		{"update missing", ManageGraphJSON, `{"operation":"update","entityType":"atom","id":"map-nope","version":1,"name":"y"}`, op.CodeNotFound},
		{"update stale version", ManageGraphJSON, `{"operation":"update","entityType":"atom","id":"map-checkout","version":2,"name":"y"}`, op.CodeConflict},
		{"delete stale version", ManageGraphJSON, `{"operation":"delete","entityType":"molecule","id":"molecule-pages","version":3}`, op.CodeConflict},
		{"append without version check target", ManageChangelogJSON, `{"operation":"append","parentType":"molecule","parentId":"molecule-nope","taskId":"T","summary":"s"}`, op.CodeNotFound},
		{"empty summary", ManageChangelogJSON, `{"operation":"append","parentType":"atom","parentId":"map-checkout","taskId":"T","summary":" "}`, op.CodeValidation},
		{"long summary", ManageChangelogJSON, `{"operation":"append","parentType":"atom","parentId":"map-checkout","taskId":"T","summary":"` + strings.Repeat("s", MaxSummaryBytes+1) + `"}`, op.CodeValidation},
		{"append without task", ManageChangelogJSON, `{"operation":"append","parentType":"atom","parentId":"map-checkout","summary":"s"}`, op.CodeValidation},
		{"get atom that is a molecule", QueryGraphJSON, `{"operation":"get","entityType":"atom","id":"molecule-pages"}`, op.CodeNotFound},
		{"search bad limit", QueryGraphJSON, `{"operation":"search","entityType":"atom","limit":0}`, op.CodeValidation},
		{"search missing molecule", QueryGraphJSON, `{"operation":"search","entityType":"atom","moleculeId":"molecule-nope"}`, op.CodeNotFound},
		{"context without paths", QueryGraphJSON, `{"operation":"context"}`, op.CodeValidation},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, k, c.op, c.raw)
			if got := errCode(r); got != c.code {
				t.Fatalf("code %q, want %q: %v", got, c.code, r)
			}
			if msg := r["error"].(map[string]any)["message"]; msg == "" {
				t.Fatal("empty message")
			}
			if after := treeHash(t, k); after != before {
				t.Fatal("the tree changed")
			}
		})
	}
}

func TestConcurrentUpdates(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	createAtom(t, k, "Event Bus", []string{"src/bus/**"}, "")
	const n = 8
	responses := make([]op.Envelope, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := int64(1)
			text := fmt.Sprintf("writer %d", i)
			responses[i] = op.Wrap(Update(context.Background(), k, UpdateParams{EntityType: KindAtom, ID: "map-event-bus", Version: v, Knowledge: &text, LastTaskID: fmt.Sprint(i)}))
		}()
	}
	wg.Wait()
	winner := -1
	for i, r := range responses {
		switch {
		case r.Success:
			if winner >= 0 {
				t.Fatalf("two winners: %d and %d", winner, i)
			}
			winner = i
		case r.Error.Code == op.CodeConflict:
			if r.Error.Details["currentVersion"] != int64(2) {
				t.Fatalf("conflict without the current version: %+v", r.Error)
			}
		default:
			t.Fatalf("writer %d: %+v", i, r.Error)
		}
	}
	if winner < 0 {
		t.Fatal("no winner")
	}
	got := op.Wrap(Get(context.Background(), k, GetParams{EntityType: KindAtom, ID: "map-event-bus"}))
	a := got.Data.(AtomView)
	if a.Version != 2 || a.Knowledge != fmt.Sprintf("writer %d", winner) || a.LastTaskID != fmt.Sprint(winner) {
		t.Fatalf("torn or lost write: %+v (winner %d)", a, winner)
	}
}

func TestChangelog(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	createAtom(t, k, "Auth", []string{"src/auth/**"}, "")
	for i := 1; i <= 7; i++ {
		d := mustOK(t, run(t, k, ManageChangelogJSON, fmt.Sprintf(`{"operation":"append","parentType":"atom","parentId":"map-auth","taskId":"T-%d","summary":"change %d"}`, i, i)))
		if d["version"] != float64(i+1) {
			t.Fatalf("append %d: %v", i, d)
		}
	}
	pg := mustOK(t, run(t, k, ManageChangelogJSON, `{"operation":"search","parentType":"atom","parentId":"map-auth","limit":3,"offset":2}`))
	var tasks []string
	for _, e := range pg["entries"].([]any) {
		tasks = append(tasks, e.(map[string]any)["taskId"].(string))
	}
	if strings.Join(tasks, ",") != "T-5,T-4,T-3" || pg["total"] != 7.0 {
		t.Fatalf("page: %v", pg)
	}
	got := mustOK(t, run(t, k, QueryGraphJSON, `{"operation":"get","entityType":"atom","id":"map-auth"}`))
	if log := got["changelog"].([]any); len(log) != DefaultChangelogLimit || log[0].(map[string]any)["taskId"] != "T-7" {
		t.Fatalf("inline changelog: %v", got["changelog"])
	}
	got = mustOK(t, run(t, k, QueryGraphJSON, `{"operation":"get","entityType":"atom","id":"map-auth","includeChangelog":false}`))
	if _, has := got["changelog"]; has {
		t.Fatalf("changelog not excluded: %v", got)
	}
	got = mustOK(t, run(t, k, QueryGraphJSON, `{"operation":"get","entityType":"atom","id":"map-auth","changelogLimit":2}`))
	if len(got["changelog"].([]any)) != 2 {
		t.Fatalf("changelogLimit: %v", got["changelog"])
	}
	// earlier entries are never rewritten
	src, _ := os.ReadFile(k.NodePath("graph/map-auth.md"))
	if !strings.Contains(string(src), "summary: change 1\n") || strings.Count(string(src), "    task: T-") != 7 {
		t.Fatalf("stored changelog:\n%s", src)
	}
}

func TestContextOrderingAndTaskFile(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	createMolecule(t, k, "Zeta Domain")
	createMolecule(t, k, "Alpha Domain")
	createAtom(t, k, "Webhooks", []string{"src/pay/webhook-*.ts"}, "molecule-zeta-domain")
	createAtom(t, k, "Gateway", []string{"src/pay/**"}, "molecule-zeta-domain")
	createAtom(t, k, "Pages", []string{"src/pages/**"}, "molecule-alpha-domain")
	createAtom(t, k, "Retry", []string{"src/shared/retry.ts", "src/pay/retry.ts"}, "")
	// (an example in fenced code under the heading is no file of the
	// task's: docs/graph.md; it was read before)
	task := "# Task\n\n## Context Files\n\n- `src/pay/webhook-a.ts` - the handler\n- src/pages/home.tsx, src/shared/retry.ts\n- [gw](src/pay/gateway.ts)\nnot a path at all\n* https://example.com/x\nsrc/unknown/file.go\n\n```sh\nsrc/example-in-fence.go\n```\n\n## Implementation Plan\n\n- src/ignored.go\n"
	if err := os.WriteFile(filepath.Join(k.Root, "task.md"), []byte(task), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ContextFiles(task); strings.Join(got, " ") != "src/pay/webhook-a.ts src/pages/home.tsx src/shared/retry.ts src/pay/gateway.ts src/unknown/file.go" {
		t.Fatalf("ContextFiles: %q", got)
	}
	raw := `{"operation":"context","paths":"./src/pay/retry.ts, src/other.go","taskFile":"task.md","includeChangelog":false}`
	d := mustOK(t, run(t, k, QueryGraphJSON, raw))
	b, _ := json.Marshal(d)
	var res ContextResult
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range res.Molecules {
		var atoms []string
		for _, a := range m.Atoms {
			atoms = append(atoms, a.Name+fmt.Sprint(a.MatchedPaths))
		}
		names = append(names, m.Name+":"+strings.Join(atoms, ";"))
	}
	want := "Alpha Domain:Pages[src/pages/home.tsx] | Zeta Domain:Gateway[src/pay/retry.ts src/pay/webhook-a.ts src/pay/gateway.ts];Webhooks[src/pay/webhook-a.ts]"
	if got := strings.Join(names, " | "); got != want {
		t.Fatalf("molecules:\n got %s\nwant %s", got, want)
	}
	if len(res.OrphanAtoms) != 1 || fmt.Sprint(res.OrphanAtoms[0].MatchedPaths) != "[src/pay/retry.ts src/shared/retry.ts]" {
		t.Fatalf("orphans: %+v", res.OrphanAtoms)
	}
	if fmt.Sprint(res.UnmatchedPaths) != "[src/other.go src/unknown/file.go]" {
		t.Fatalf("unmatched: %v", res.UnmatchedPaths)
	}
	again := mustOK(t, run(t, k, QueryGraphJSON, raw))
	b2, _ := json.Marshal(again)
	if string(b) != string(b2) {
		t.Fatal("context output is not deterministic")
	}
}

func TestSearch(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	createMolecule(t, k, "Pages")
	createAtom(t, k, "Checkout Page", []string{"src/pages/checkout/**"}, "molecule-pages")
	createAtom(t, k, "Profile Page", []string{"src/pages/profile/**"}, "molecule-pages")
	createAtom(t, k, "Event Bus", []string{"src/bus/**"}, "")
	ids := func(raw string) string {
		d := mustOK(t, run(t, k, QueryGraphJSON, raw))
		var out []string
		for _, a := range d["atoms"].([]any) {
			out = append(out, a.(map[string]any)["id"].(string))
		}
		return fmt.Sprint(d["total"], out)
	}
	for raw, want := range map[string]string{
		`{"operation":"search","entityType":"atom"}`:                                       "3 [map-checkout-page map-event-bus map-profile-page]",
		`{"operation":"search","entityType":"atom","query":"PAGE knowledge"}`:              "2 [map-checkout-page map-profile-page]",
		`{"operation":"search","entityType":"atom","moleculeId":"molecule-pages"}`:         "2 [map-checkout-page map-profile-page]",
		`{"operation":"search","entityType":"atom","orphansOnly":true}`:                    "1 [map-event-bus]",
		`{"operation":"search","entityType":"atom","limit":1,"offset":1}`:                  "3 [map-event-bus]",
		`{"operation":"search","entityType":"atom","limit":5,"offset":9}`:                  "3 []",
		`{"operation":"search","entityType":"atom","query":"checkout","projectId":"proj"}`: "1 [map-checkout-page]",
	} {
		if got := ids(raw); got != want {
			t.Errorf("%s: got %s, want %s", raw, got, want)
		}
	}
}

// A hand-written atom in any YAML style is read and written back unchanged
// byte for byte when nothing changed.
func TestByteStability(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	src := "---\ntype: practice\ntitle: Shared retry\ndescription: how we retry\ntags: [infra]\nkk_schema_version: 3\nkk_id: practice-shared-retry\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: medium\nkk_paths: [\"src/retry/**\", 'lib/*.go']\nkk_related:\n  - {id: map-x, reason: calls it}\nkk_changelog:\n  - at: 2026-01-01T00:00:00Z\n    task: T-1\n    summary: \"first\"\nkk_edges:\n  - {type: relates_to, to: map-x, kind: uses, created_at: '2026-01-01', created_by: me, source: manual, confidence: 0.5}\nkk_custom: keep me\n---\n\nBackoff rules.  \n\n  indented\n"
	if err := os.MkdirAll(k.NodesDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	path := k.NodePath("practice-shared-retry.md")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := Load(k)
	if err != nil {
		t.Fatal(err)
	}
	a := g.Atoms["practice-shared-retry"]
	if a == nil || fmt.Sprint(a.Paths) != "[src/retry/** lib/*.go]" || a.Version != 1 || len(a.Edges) != 1 || *a.Edges[0].Confidence != 0.5 || a.Changelog[0].Summary != "first" {
		t.Fatalf("atom: %+v", a)
	}
	n := g.Leaves[a.ID]
	if err := WriteAtom(n, a); err != nil {
		t.Fatal(err)
	}
	out, err := n.Render(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != src {
		t.Fatalf("changed on round trip:\n%s", out)
	}
	// a real write changes only what it must and keeps unknown keys
	v := int64(1)
	name := "Shared retry rules"
	if r := op.Wrap(Update(context.Background(), k, UpdateParams{EntityType: KindAtom, ID: a.ID, Version: v, Name: &name})); !r.Success {
		t.Fatalf("update: %+v", r.Error)
	}
	after, _ := os.ReadFile(path)
	for _, keep := range []string{"kk_paths: [\"src/retry/**\", 'lib/*.go']\n", "kk_custom: keep me\n", "\n\nBackoff rules.  \n", "  - {id: map-x, reason: calls it}\n"} {
		if !strings.Contains(string(after), keep) {
			t.Errorf("lost %q:\n%s", keep, after)
		}
	}
	if !strings.Contains(string(after), "title: Shared retry rules\n") || !strings.Contains(string(after), "kk_version: 2\n") {
		t.Errorf("update not written:\n%s", after)
	}
	if _, err := node.Parse("x.md", after); err != nil {
		t.Fatal(err)
	}
}

// TestKnowledgeOfKeepsQuotedMarkers: an atom's knowledge is its body
// without the generated blocks, found by whole marker lines; markers
// quoted in a sentence, and the words between them, stay.
func TestKnowledgeOfKeepsQuotedMarkers(t *testing.T) {
	body := "Use `" + node.RelatedStart + "` to open. DURABLEFACT here.\nClose with `" + node.RelatedEnd + "`.\n\n" +
		node.RelatedStart + "\n# Related\n\n- Related: [practice-y](/y.md)\n" + node.RelatedEnd + "\n\nAfter.\n"
	want := "Use `" + node.RelatedStart + "` to open. DURABLEFACT here.\nClose with `" + node.RelatedEnd + "`.\n\nAfter."
	if got := KnowledgeOf([]byte(body)); got != want {
		t.Fatalf("KnowledgeOf:\n%q\nwant\n%q", got, want)
	}
}
