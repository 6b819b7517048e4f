package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
)

func TestBinaryCheck(t *testing.T) {
	ctx := context.Background()
	b := harness.BinaryCheck{Harness: "fake", Binary: "fake-cli", Product: "Fake CLI", InstallHint: "npm i fake", Timeout: 5 * time.Second}
	dir := harnesstest.InstallFake(t, "fake-cli", "#!/bin/sh\nprintf '%s' \"$KK_INTERNAL\" > \"$(dirname \"$0\")/guard\"\necho 'fake 2.0'\n")
	c := b.Check(ctx)
	if c.Name != "fake binary" || c.Level != harness.LevelOK || c.Message != filepath.Join(dir, "fake-cli")+" (fake 2.0)" {
		t.Errorf("ok: %+v", c)
	}
	if got := string(harnesstest.ReadFile(t, filepath.Join(dir, "guard"))); got != "1" {
		t.Errorf("--version ran with KK_INTERNAL=%q", got)
	}

	bad := harnesstest.InstallFake(t, "fake-cli", "#!/bin/sh\nexit 1\n")
	c = b.Check(ctx)
	p := filepath.Join(bad, "fake-cli")
	if c.Level != harness.LevelWarn || c.Message != p+" --version failed: exit status 1" || c.Fix != "check that "+p+" is a working Fake CLI install" {
		t.Errorf("failing: %+v", c)
	}

	t.Setenv("PATH", t.TempDir())
	c = b.Check(ctx)
	if c.Level != harness.LevelWarn || !strings.HasPrefix(c.Message, "fake-cli is not on PATH") || c.Fix != "npm i fake" {
		t.Errorf("missing: %+v", c)
	}
}

func TestPathCheck(t *testing.T) {
	dir := harnesstest.InstallFake(t, "fake-cli", "#!/bin/sh\n")
	if c := harness.PathCheck("fake-cli", "Fake CLI", "hint"); c.Name != "binary" || c.Level != harness.LevelOK || c.Message != "fake-cli found at "+filepath.Join(dir, "fake-cli") {
		t.Errorf("found: %+v", c)
	}
	t.Setenv("PATH", t.TempDir())
	if c := harness.PathCheck("fake-cli", "Fake CLI", "hint"); c.Level != harness.LevelWarn || !strings.HasSuffix(c.Message, "launchers cannot start Fake CLI") || c.Fix != "hint" {
		t.Errorf("missing: %+v", c)
	}
}

func TestCommandCheck(t *testing.T) {
	root := t.TempDir()
	harnesstest.WriteFile(t, filepath.Join(root, "bin", "kk"), []byte("#!/bin/sh\n"))
	if err := os.Chmod(filepath.Join(root, "bin", "kk"), 0o755); err != nil {
		t.Fatal(err)
	}
	if c := harness.CommandCheck(root, nil, "Fake", "fake"); c.Name != "kk command" || c.Level != harness.LevelOK || c.Message != "no kk hook entries to check" {
		t.Errorf("none: %+v", c)
	}
	c := harness.CommandCheck(root, []string{"./bin/kk"}, "Fake", "fake")
	if c.Level != harness.LevelOK || c.Message != "the hooks run ./bin/kk ("+filepath.Join(root, "bin", "kk")+")" {
		t.Errorf("found: %+v", c)
	}
	c = harness.CommandCheck(root, []string{"./bin/kk", "./gone/kk"}, "Fake", "fake")
	if c.Level != harness.LevelWarn || c.Message != "the hooks run ./gone/kk, which cannot be found from here: every kk hook would fail in Fake" ||
		!strings.Contains(c.Fix, "--harnesses fake --kk-command") {
		t.Errorf("missing: %+v", c)
	}
}

func TestReadForCheck(t *testing.T) {
	root := t.TempDir()
	c := harness.Check{Name: "x"}
	if data, ok := harness.ReadForCheck(&c, root, "a/b.json", harness.LevelWarn, "b is missing", "reinstall"); ok || data != nil ||
		c.Level != harness.LevelWarn || c.Message != "b is missing" || c.Fix != "reinstall" {
		t.Errorf("missing: %+v", c)
	}
	harnesstest.WriteFile(t, filepath.Join(root, "a", "b.json"), []byte("{}"))
	c = harness.Check{Name: "x"}
	if data, ok := harness.ReadForCheck(&c, root, "a/b.json", harness.LevelWarn, "b is missing", "reinstall"); !ok || string(data) != "{}" || c.Level != "" {
		t.Errorf("present: %q %+v", data, c)
	}
	c = harness.Check{Name: "x"}
	if _, ok := harness.ReadForCheck(&c, root, "a", harness.LevelWarn, "a is missing", "reinstall"); ok ||
		c.Level != harness.LevelError || !strings.HasPrefix(c.Message, "a cannot be read: ") || c.Fix != "check the file's permissions" {
		t.Errorf("unreadable: %+v", c)
	}
}

func TestFixes(t *testing.T) {
	if got := harness.InstallFix("fake"); got != "run `kk init --harnesses fake`" {
		t.Errorf("InstallFix = %s", got)
	}
	if got := harness.UpgradeFix("fake"); got != "run `kk init --upgrade --harnesses fake`" {
		t.Errorf("UpgradeFix = %s", got)
	}
}
