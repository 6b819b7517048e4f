package checks

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/lock"
)

func (f *lintKB) doctor(version string) *DoctorReport {
	f.t.Helper()
	r, err := Doctor(context.Background(), f.k, DoctorOptions{Version: version})
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func doctorCheck(t *testing.T, r *DoctorReport, name string) DoctorCheck {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, r.Checks)
	return DoctorCheck{}
}

// doctorLevels renders every check that is not ok as "name=level".
func doctorLevels(r *DoctorReport) []string {
	var out []string
	for _, c := range r.Checks {
		if c.Level != DoctorOK {
			out = append(out, c.Name+"="+c.Level)
		}
	}
	return out
}

func TestDoctorHealthy(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	r := f.doctor("1.0.0")
	if bad := doctorLevels(r); bad != nil {
		t.Fatalf("not ok: %v\n%+v", bad, r.Checks)
	}
	var names []string
	for _, c := range r.Checks {
		names = append(names, c.Name)
		if c.Message == "" {
			t.Errorf("%s has no message", c.Name)
		}
	}
	want := []string{"git", "installed-version", "kk-version", "gitignore", "kkignore", "config", "leaves-valid", "v2-leaves", "entry-fresh", "entry-size", "freshness", "phrasings", "semantic-search", "derived-from", "hygiene", "writer-lock", "obsolete-state", "interrupted-writes"}
	if !slices.Equal(names, want) {
		t.Fatalf("checks %v", names)
	}
	if r.OK != len(want) || r.Warnings != 0 || r.Errors != 0 {
		t.Fatalf("counts %d/%d/%d", r.OK, r.Warnings, r.Errors)
	}
}

func TestDoctorGitMissing(t *testing.T) {
	f := newLintKB(t)
	t.Setenv("PATH", t.TempDir())
	c := doctorCheck(t, f.doctor("1.0.0"), "git")
	if c.Level != DoctorWarn || c.Fix == "" {
		t.Fatalf("%+v", c)
	}
}

func TestDoctorInstalled(t *testing.T) {
	f := newLintKB(t)
	r := f.doctor("2.0.0")
	if c := doctorCheck(t, r, "kk-version"); c.Level != DoctorWarn || !strings.Contains(c.Message, "1.0.0") || !strings.Contains(c.Message, "2.0.0") {
		t.Fatalf("%+v", c)
	}
	f.write(".state/installed-version", "{not json")
	r = f.doctor("1.0.0")
	if c := doctorCheck(t, r, "installed-version"); c.Level != DoctorError || !strings.Contains(c.Message, ".ai/kenkeep/.state/installed-version") {
		t.Fatalf("%+v", c)
	}
	if slices.ContainsFunc(r.Checks, func(c DoctorCheck) bool { return c.Name == "kk-version" }) {
		t.Fatal("the version is not compared when the record cannot be read")
	}
	f.remove(".state/installed-version")
	r = f.doctor("1.0.0")
	if c := doctorCheck(t, r, "installed-version"); c.Level != DoctorError || c.Fix != "run `kk init`" {
		t.Fatalf("%+v", c)
	}
	if r.Errors != 1 {
		t.Fatalf("errors %d", r.Errors)
	}
}

func TestDoctorIgnoreFiles(t *testing.T) {
	f := newLintKB(t)
	f.write(".gitignore", "/_sessions/\n.state/*\nmine/\n")
	if err := os.WriteFile(f.k.KKIgnorePath(), []byte("# only\n\n# comments\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := f.doctor("1.0.0")
	gi := doctorCheck(t, r, "gitignore")
	if gi.Level != DoctorWarn || !slices.Equal(gi.Details, []string{"/_logs/", "/hooks/", "!.state/installed-version"}) {
		t.Fatalf("%+v", gi)
	}
	if c := doctorCheck(t, r, "kkignore"); c.Level != DoctorWarn {
		t.Fatalf("%+v", c)
	}
	f.remove(".gitignore")
	if err := os.Remove(f.k.KKIgnorePath()); err != nil {
		t.Fatal(err)
	}
	r = f.doctor("1.0.0")
	if got := doctorLevels(r); !slices.Equal(got, []string{"gitignore=warn", "kkignore=warn"}) {
		t.Fatalf("%v", got)
	}
	if r.Errors != 0 {
		t.Fatal("missing ignore files are warnings")
	}
}

func TestDoctorConfig(t *testing.T) {
	f := newLintKB(t)
	f.write("config.yaml", "schema_version: 1\ncurationThreshold: 0\n")
	c := doctorCheck(t, f.doctor("1.0.0"), "config")
	if c.Level != DoctorError || !strings.Contains(c.Message, ".ai/kenkeep/config.yaml") || !strings.Contains(c.Message, "curationThreshold") {
		t.Fatalf("%+v", c)
	}
	f.remove("config.yaml")
	if c := doctorCheck(t, f.doctor("1.0.0"), "config"); c.Level != DoctorOK || !strings.Contains(c.Message, "defaults") {
		t.Fatalf("%+v", c)
	}
}

func TestDoctorInvalidLeaves(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	f.write("nodes/topic/practice-x.md", "---\ntype: practice\ntitle: X\ndescription: x\ntags: []\nkk_schema_version: 3\nkk_id: practice-x\nkk_derived_from: []\nkk_relates_to: []\nkk_confidence: sure\n---\n")
	r := f.doctor("1.0.0")
	c := doctorCheck(t, r, "leaves-valid")
	want := []string{`.ai/kenkeep/nodes/topic/practice-x.md: field "kk_confidence": is "sure"; use one of low, medium, high`}
	if c.Level != DoctorError || !slices.Equal(c.Details, want) {
		t.Fatalf("%+v", c)
	}
	// The other checks look at the leaves kk can read.
	for _, name := range []string{"v2-leaves", "derived-from"} {
		if c := doctorCheck(t, r, name); c.Level != DoctorOK {
			t.Fatalf("%s: %+v", name, c)
		}
	}
	if c := doctorCheck(t, r, "entry-fresh"); strings.HasPrefix(c.Message, "not checked") {
		t.Fatalf("entry-fresh: %+v", c)
	}
	if r.Errors != 1 {
		t.Fatalf("errors %d", r.Errors)
	}
}

func TestDoctorV2Leaves(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	f.write("nodes/topic/map-old.md", "---\nschema_version: 2\nid: map-old\ntitle: Old\nkind: map\nsummary: s\nconfidence: high\n---\n")
	c := doctorCheck(t, f.doctor("1.0.0"), "v2-leaves")
	if c.Level != DoctorWarn || c.Fix != "run `kk migrate okf-v3`" || !strings.HasPrefix(c.Message, "1 of 3 ") {
		t.Fatalf("%+v", c)
	}
}

func TestDoctorEntry(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	f.leaf(lintLeaf{id: "practice-new"})
	r := f.doctor("1.0.0")
	if c := doctorCheck(t, r, "entry-fresh"); c.Level != DoctorWarn || !strings.Contains(c.Message, "stale") {
		t.Fatalf("%+v", c)
	}
	// 2,501 estimated tokens: over the budget.
	f.write("ENTRY.md", "---\nschema_version: 3\n---\n"+strings.Repeat("x", 4*entryTokenBudget+1))
	if c := doctorCheck(t, f.doctor("1.0.0"), "entry-size"); c.Level != DoctorWarn || !strings.Contains(c.Message, "2501 tokens") {
		t.Fatalf("%+v", c)
	}
	f.write("ENTRY.md", "---\nschema_version: 3\n---\n"+strings.Repeat("é", 4*entryTokenBudget))
	if c := doctorCheck(t, f.doctor("1.0.0"), "entry-size"); c.Level != DoctorOK {
		t.Fatalf("exactly the budget is fine: %+v", c)
	}
	f.remove("ENTRY.md")
	r = f.doctor("1.0.0")
	if got := doctorLevels(r); !slices.Equal(got, []string{"entry-fresh=warn", "entry-size=warn", "phrasings=warn"}) {
		t.Fatalf("%v", got)
	}
}

func TestDoctorDerivedFrom(t *testing.T) {
	f := newLintKB(t)
	if err := os.MkdirAll(filepath.Join(f.k.Root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.k.Root, "docs", "guide.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(f.k.Root, "docs", "guide.md")
	f.write("_sessions/20260101-0000-abc.md", "---\nproposal_status: done\n---\n")
	f.write("nodes/.redirects.json", `{"practice-retired": ["practice-a"]}`)
	f.leaf(lintLeaf{id: "practice-a", derived: []string{
		"https://example.com/page", "docs/guide.md", abs, "20260101-0000-abc.md",
		"3f1c9a2e-0000-4000-8000-000000000000:practice:2", "practice-retired", "map-b",
	}})
	f.leaf(lintLeaf{id: "map-b", derived: []string{"docs/missing.md", "practice:oops", "docs/missing.md"}})
	f.rebuild()
	c := doctorCheck(t, f.doctor("1.0.0"), "derived-from")
	want := []string{
		".ai/kenkeep/nodes/map-b.md: docs/missing.md",
		".ai/kenkeep/nodes/map-b.md: practice:oops",
		".ai/kenkeep/nodes/map-b.md: docs/missing.md",
	}
	if c.Level != DoctorWarn || !slices.Equal(c.Details, want) || c.Message != "3 of 10 kk_derived_from reference(s) do not resolve" {
		t.Fatalf("%+v", c)
	}
}

// TestDoctorHygiene: doctor warns (never fails) about the two lint findings
// kenkeep's doctor surfaced, tags with stray whitespace and blank folder
// summaries, and still does when another leaf cannot be read.
func TestDoctorHygiene(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	f.rebuild()
	if c := doctorCheck(t, f.doctor("1.0.0"), "hygiene"); c.Level != DoctorOK {
		t.Fatalf("clean tree: %+v", c)
	}
	f.leaf(lintLeaf{id: "practice-spaced", tags: []string{" hooks ", "hooks"}, rel: []string{"practice-a"}})
	f.write("FOLDER_SUMMARIES.md", "---\nschema_version: 1\nsummaries:\n  topic: ''\n---\n")
	f.write("nodes/practice-broken.md", "---\ntype: practice\ntitle: Broken\n---\nNo description.\n")
	f.rebuild()
	r := f.doctor("1.0.0")
	c := doctorCheck(t, r, "hygiene")
	want := []string{
		`empty-summary .ai/kenkeep/FOLDER_SUMMARIES.md: folder "topic" has a blank summary`,
		`tag-whitespace .ai/kenkeep/nodes/practice-spaced.md: tag " hooks " has leading, trailing or repeated whitespace`,
	}
	if c.Level != DoctorWarn || !slices.Equal(c.Details, want) || c.Fix == "" {
		t.Fatalf("%+v", c)
	}
	if got := doctorCheck(t, r, "leaves-valid"); got.Level != DoctorError {
		t.Fatalf("leaves-valid: %+v", got)
	}
	// A title holding a terminal escape (a note that came by git) is a
	// lint error, and doctor's: before, hygiene and leaves-valid were ok.
	f.write("nodes/practice-broken.md", "---\ntype: practice\ntitle: \"Hostile \\e]0;PWNED\\a\"\ndescription: d\ntags: []\nkk_schema_version: 3\nkk_id: practice-broken\nkk_derived_from: []\nkk_relates_to: []\nkk_confidence: high\n---\nBody.\n")
	f.rebuild()
	c = doctorCheck(t, f.doctor("1.0.0"), "hygiene")
	if c.Level != DoctorError || !slices.ContainsFunc(c.Details, func(d string) bool {
		return strings.HasPrefix(d, `hidden-text .ai/kenkeep/nodes/practice-broken.md: field "title" holds the control character U+001B`)
	}) {
		t.Fatalf("hidden text: %+v", c)
	}
}

func TestDoctorWriterLock(t *testing.T) {
	f := newLintKB(t)
	l, err := lock.Acquire(context.Background(), f.k.LockPath(), lock.DefaultWait, "kk node write practice x")
	if err != nil {
		t.Fatal(err)
	}
	c := doctorCheck(t, f.doctor("1.0.0"), "writer-lock")
	if c.Level != DoctorWarn || !strings.Contains(c.Message, fmt.Sprintf("pid %d", os.Getpid())) || !strings.Contains(c.Message, "kk node write practice x") {
		t.Fatalf("%+v", c)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if c := doctorCheck(t, f.doctor("1.0.0"), "writer-lock"); c.Level != DoctorOK {
		t.Fatalf("%+v", c)
	}
}

// After git clean -fdx deleted .state/lock under a writer, kk doctor
// still sees the writer lock held, through its copy under the git folder.
func TestDoctorWriterLockAfterGitClean(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	f := newLintKB(t)
	if out, err := exec.Command("git", "init", "-q", f.k.Root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	l, err := f.k.WriterLock().Acquire(context.Background(), lock.DefaultWait, "kk node write practice x")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Release() }()
	if err := os.RemoveAll(f.k.StateDir()); err != nil {
		t.Fatal(err)
	}
	c := doctorCheck(t, f.doctor("1.0.0"), "writer-lock")
	if c.Level != DoctorWarn || !strings.Contains(c.Message, fmt.Sprintf("pid %d", os.Getpid())) || !strings.Contains(c.Message, "kk node write practice x") {
		t.Fatalf("%+v", c)
	}
}

func TestDoctorWritesNothing(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	before := lintSnapshot(t, f.k.Root)
	f.doctor("9.9.9")
	if after := lintSnapshot(t, f.k.Root); !maps.Equal(before, after) {
		t.Fatalf("doctor changed the tree:\nbefore %v\nafter  %v", before, after)
	}
}

// TestDoctorInterruptedWrites reports the files a killed writer left (a
// journal, a temporary file) without touching them.
func TestDoctorInterruptedWrites(t *testing.T) {
	f := newLintKB(t)
	f.write("nodes/.practice-x.md.tmp-123", "half a leaf")
	f.write(".state/txn/cs-1.journal.tmp", "half a journal")
	r := f.doctor("1.0.0")
	c := doctorCheck(t, r, "interrupted-writes")
	if c.Level != DoctorWarn || len(c.Details) != 2 || !strings.Contains(c.Fix, "kk index rebuild") {
		t.Fatalf("check %+v", c)
	}
	if _, err := os.Stat(filepath.Join(f.k.NodesDir(), ".practice-x.md.tmp-123")); err != nil {
		t.Fatal("doctor removed a leftover")
	}
}
