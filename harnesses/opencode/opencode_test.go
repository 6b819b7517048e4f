package opencode

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// testSkills stand in for the shipped skills in install tests.
var testSkills = harnesstest.TwoSkills

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	harnesstest.Golden(t, filepath.Join("testdata", "golden", name), got, *update)
}

// The doctor check levels.
const (
	levelOK   = harness.LevelOK
	levelWarn = harness.LevelWarn
	levelErr  = harness.LevelError
)

// The shared helpers, under the names the tests use.
var (
	env    = harnesstest.Env
	read   = harnesstest.ReadFile
	write  = harnesstest.WriteFile
	exists = harnesstest.Exists

	shippedSkills = harnesstest.ShippedSkills
)

func install(t *testing.T, root, command string) []harness.Change {
	t.Helper()
	return harnesstest.Install(t, New(), root, command, testSkills)
}

func uninstall(t *testing.T, root string) []harness.Change {
	t.Helper()
	return harnesstest.Uninstall(t, New(), root, testSkills)
}

func mtime(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime().UnixNano()
}
