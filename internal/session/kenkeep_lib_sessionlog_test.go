package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Ported from kenkeep v1.17 tests/lib/session-log.test.ts. The rendered log
// (front matter kenkeep's schema accepts, the ## Transcript body) is
// TestCaptureWritesAndKeeps, byte for byte.

const kenkeepSampleV4 = "4c59be08-badd-42cd-981c-ff3b80cf091a"

func TestKenkeepLibSessionLogFileName(t *testing.T) {
	at, _ := time.Parse(time.RFC3339, "2026-05-11T12:34:00.000Z")
	if got := FileName(at, kenkeepSampleV4); got != "20260511-1234-"+kenkeepSampleV4+".md" {
		t.Errorf("FileName = %q", got)
	}
}

func TestKenkeepLibSessionLogFind(t *testing.T) {
	dir := t.TempDir()
	target := "20260511-1234-" + kenkeepSampleV4 + ".md"
	for _, name := range []string{target, "20260511-1235-aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee.md"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if name, ok, err := Find(dir, kenkeepSampleV4); err != nil || !ok || name != target {
		t.Errorf("Find = %q %v %v, want %q", name, ok, err, target)
	}
	// Only the whole id matches, not a tail of it.
	if name, ok, err := Find(dir, "eeee"); err != nil || ok {
		t.Errorf("Find(tail) = %q %v %v, want none", name, ok, err)
	}
	if name, ok, err := Find(filepath.Join(dir, "missing"), kenkeepSampleV4); err != nil || ok {
		t.Errorf("Find in a missing folder = %q %v %v, want none and no error", name, ok, err)
	}
}

func TestKenkeepLibSessionIDMustBeV4(t *testing.T) {
	if got, err := CheckID(strings.ToUpper(kenkeepSampleV4)); err != nil || got != kenkeepSampleV4 {
		t.Errorf("CheckID(upper case) = %q %v, want it lowercased", got, err)
	}
	for _, bad := range []string{"", "not-a-uuid", "01891234-5678-7abc-8def-0123456789ab"} {
		if _, err := CheckID(bad); err == nil || !strings.Contains(err.Error(), "not a UUID v4") {
			t.Errorf("CheckID(%q) = %v, want 'not a UUID v4'", bad, err)
		}
	}
}
