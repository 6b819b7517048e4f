package claude

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/kk-project/kk/internal/harness"
)

// versionTimeout bounds `claude --version`.
var versionTimeout = 5 * time.Second

// Doctor checks that claude is on PATH, that kk's hooks in
// .claude/settings.json are there, current and not switched off, and that
// the skills match this kk build.
func (*Adapter) Doctor(ctx context.Context, root string) []harness.Check {
	return []harness.Check{
		binaryCheck(ctx),
		hooksCheck(root),
		harness.CheckManagedSkills(root, skillsDir, id),
	}
}

// binaryCheck looks for claude on PATH and asks it for its version.
func binaryCheck(ctx context.Context) harness.Check {
	return harness.BinaryCheck{
		Harness: id, Binary: binary, Product: "Claude Code", InstallHint: spec.InstallHint,
		Env: guardEnv(), Timeout: versionTimeout,
	}.Check(ctx)
}

// hooksCheck compares kk's handlers in the settings file with the ones
// this kk build installs, after making sure that neither settings file
// switches all hooks off.
func hooksCheck(root string) harness.Check {
	c, _ := hookFile.Check(root, "kk init --harnesses "+id+" --upgrade", func() (harness.Check, bool) {
		for _, f := range []string{settingsFile, localFile} {
			if hooksDisabled(filepath.Join(root, f)) {
				return harness.Check{
					Name: "claude hooks", Level: "error",
					Message: f + " sets disableAllHooks, so Claude Code runs none of kk's hooks",
					Fix:     "remove disableAllHooks from " + f,
				}, true
			}
		}
		return harness.Check{}, false
	})
	return c
}

// hooksDisabled reports whether the settings file at p sets
// disableAllHooks.
func hooksDisabled(p string) bool {
	data, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	var s struct {
		DisableAllHooks bool `json:"disableAllHooks"`
	}
	return json.Unmarshal(data, &s) == nil && s.DisableAllHooks
}
