package session

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/store"
)

func TestPruneLogs(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	k := store.New(t.TempDir())
	k.Now = func() time.Time { return now }
	if err := os.MkdirAll(k.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// No _logs folder: nothing to do.
	rep, err := PruneLogs(k, PruneOptions{})
	if err != nil || len(rep.Removed) != 0 || rep.Kept != 0 || rep.RetentionDays != 30 {
		t.Fatalf("no _logs: %+v, %v", rep, err)
	}
	ages := map[string]time.Duration{
		"proposal/s1__20260101T000000Z.jsonl": 40 * 24 * time.Hour, // old
		"curator/run__1.jsonl":                30*24*time.Hour + time.Second,
		"curator/run__2.jsonl":                30*24*time.Hour - time.Second, // just inside retention
		"curator/run__1.draft.json":           90 * 24 * time.Hour,           // drafts stay
		"hook-errors-2025-01-01.log":          90 * 24 * time.Hour,           // hook errors stay
		"hook-errors-2025-01-02.jsonl":        90 * 24 * time.Hour,           // a run trace despite its name
		"bootstrap/deep/er/x.jsonl":           31 * 24 * time.Hour,
		"notes.txt":                           90 * 24 * time.Hour, // not a run trace
		"fresh.jsonl":                         time.Hour,
	}
	for rel, age := range ages {
		p := filepath.Join(k.LogsDir(), filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	// A symbolic link is never followed nor removed.
	if err := os.Symlink("fresh.jsonl", filepath.Join(k.LogsDir(), "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	wantRemoved := []string{
		".ai/kenkeep/_logs/bootstrap/deep/er/x.jsonl",
		".ai/kenkeep/_logs/curator/run__1.jsonl",
		".ai/kenkeep/_logs/hook-errors-2025-01-02.jsonl",
		".ai/kenkeep/_logs/proposal/s1__20260101T000000Z.jsonl",
	}

	rep, err = PruneLogs(k, PruneOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Removed, wantRemoved) || rep.Kept != 2 || !rep.DryRun || rep.Cutoff != "2026-01-30T12:00:00Z" {
		t.Errorf("dry run: %+v", rep)
	}
	for _, r := range wantRemoved {
		if _, err := os.Stat(filepath.Join(k.Root, r)); err != nil {
			t.Errorf("dry run removed %s", r)
		}
	}

	rep, err = PruneLogs(k, PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Removed, wantRemoved) || rep.Kept != 2 || len(rep.Failed) != 0 {
		t.Errorf("prune: %+v", rep)
	}
	for rel := range ages {
		_, err := os.Stat(filepath.Join(k.LogsDir(), filepath.FromSlash(rel)))
		gone := slices.Contains(wantRemoved, ".ai/kenkeep/_logs/"+rel)
		if gone != os.IsNotExist(err) {
			t.Errorf("%s: removed %v, want %v", rel, !gone, gone)
		}
	}
	if _, err := os.Lstat(filepath.Join(k.LogsDir(), "link.jsonl")); err != nil {
		t.Error("the symbolic link was removed")
	}

	// Twice: nothing more to remove.
	rep, err = PruneLogs(k, PruneOptions{})
	if err != nil || len(rep.Removed) != 0 || rep.Kept != 2 {
		t.Errorf("second prune: %+v, %v", rep, err)
	}

	// The retention comes from config.yaml.
	if err := os.WriteFile(k.ConfigPath(), []byte("schema_version: 1\nlogsRetentionDays: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k.Now = func() time.Time { return now.Add(2 * time.Hour) }
	rep, err = PruneLogs(k, PruneOptions{})
	if err != nil || !slices.Equal(rep.Removed, []string{".ai/kenkeep/_logs/curator/run__2.jsonl"}) || rep.Kept != 1 || rep.RetentionDays != 1 {
		t.Errorf("retention 1 day: %+v, %v", rep, err)
	}
}

func TestPruneLogsBadConfig(t *testing.T) {
	k := store.New(t.TempDir())
	if err := os.MkdirAll(filepath.Join(k.LogsDir()), 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(k.LogsDir(), "old.jsonl")
	if err := os.WriteFile(old, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(old, time.Unix(0, 0), time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.ConfigPath(), []byte("schema_version: 1\nlogsRetentionDays: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := PruneLogs(k, PruneOptions{})
	if err == nil || !strings.Contains(err.Error(), `"logsRetentionDays"`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(old); err != nil {
		t.Error("a log was removed despite the invalid config")
	}
}

func TestPruneLogsReportsFailures(t *testing.T) {
	k := store.New(t.TempDir())
	for _, rel := range []string{"locked/a.jsonl", "locked/b.jsonl", "c.jsonl"} {
		p := filepath.Join(k.LogsDir(), filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, time.Unix(0, 0), time.Unix(0, 0)); err != nil {
			t.Fatal(err)
		}
	}
	removeLog = func(p string) error {
		if filepath.Base(filepath.Dir(p)) == "locked" {
			return &os.PathError{Op: "remove", Path: p, Err: os.ErrPermission}
		}
		return os.Remove(p)
	}
	defer func() { removeLog = os.Remove }()
	rep, err := PruneLogs(k, PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Failed) != 2 || rep.Failed[0].Path != ".ai/kenkeep/_logs/locked/a.jsonl" || !strings.Contains(rep.Failed[0].Error, "permission denied") ||
		!slices.Equal(rep.Removed, []string{".ai/kenkeep/_logs/c.jsonl"}) {
		t.Errorf("report: %+v", rep)
	}
}
