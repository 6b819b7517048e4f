package harness

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The levels of a doctor Check.
const (
	LevelOK    = "ok"
	LevelWarn  = "warn"
	LevelError = "error"
)

// BinaryCheck is doctor's "<harness> binary" check as Claude Code's and
// Codex's adapters run it: the program on PATH, and what its --version
// says.
type BinaryCheck struct {
	Harness     string // the harness id, which names the check
	Binary      string
	Product     string // what a working install is called ("Claude Code")
	InstallHint string
	Env         []string      // --version's environment (nil: ChildEnv(os.Environ()))
	Timeout     time.Duration // bounds --version
}

// Check runs the check.
func (b BinaryCheck) Check(ctx context.Context) Check {
	c := Check{Name: b.Harness + " binary"}
	p, err := exec.LookPath(b.Binary)
	if err != nil {
		c.Level, c.Message = LevelWarn, b.Binary+" is not on PATH; the hooks, launchers and headless runs need it"
		c.Fix = b.InstallHint
		return c
	}
	version, err := Version(ctx, p, b.Env, b.Timeout, time.Second)
	if err != nil {
		c.Level, c.Message = LevelWarn, fmt.Sprintf("%s --version failed: %v", p, errors.Unwrap(err))
		c.Fix = "check that " + p + " is a working " + b.Product + " install"
		return c
	}
	c.Level, c.Message = LevelOK, fmt.Sprintf("%s (%s)", p, version)
	return c
}

// PathCheck is doctor's "binary" check as Copilot's and Gemini CLI's
// adapters run it: binary on PATH, which product's hooks and launchers
// need.
func PathCheck(binary, product, installHint string) Check {
	c := Check{Name: "binary"}
	p, err := exec.LookPath(binary)
	if err != nil {
		c.Level, c.Message, c.Fix = LevelWarn, binary+" is not on PATH: kk's hooks are installed but nothing runs them, and launchers cannot start "+product, installHint
		return c
	}
	c.Level, c.Message = LevelOK, binary+" found at "+p
	return c
}

// CommandCheck is doctor's "kk command" check: that each kk command the
// hooks of harness id run (commands, in the order to report them) can be
// found from here, on PATH or as a file under root (see ResolveCommand).
// product names the harness in the message.
func CommandCheck(root string, commands []string, product, id string) Check {
	c := Check{Name: "kk command"}
	if len(commands) == 0 {
		c.Level, c.Message = LevelOK, "no kk hook entries to check"
		return c
	}
	var found, missing []string
	for _, cmd := range commands {
		if p, err := ResolveCommand(root, cmd); err != nil {
			missing = append(missing, cmd)
		} else {
			found = append(found, fmt.Sprintf("%s (%s)", cmd, p))
		}
	}
	if len(missing) > 0 {
		c.Level = LevelWarn
		c.Message = fmt.Sprintf("the hooks run %s, which cannot be found from here: every kk hook would fail in %s", strings.Join(missing, ", "), product)
		c.Fix = "put kk on PATH, or run `kk init --upgrade --harnesses " + id + " --kk-command <path to kk>`"
		return c
	}
	c.Level, c.Message = LevelOK, "the hooks run "+strings.Join(found, ", ")
	return c
}

// ReadForCheck reads the file rel under root for the doctor check c. A
// missing file gives c the finding level, missing and fix; a file that
// cannot be read is an error pointing at its permissions. ok is false in
// both cases.
func ReadForCheck(c *Check, root, rel, level, missing, fix string) (data []byte, ok bool) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		c.Level, c.Message, c.Fix = level, missing, fix
		return nil, false
	}
	if err != nil {
		c.Level, c.Message, c.Fix = LevelError, fmt.Sprintf("%s cannot be read: %v", rel, err), "check the file's permissions"
		return nil, false
	}
	return data, true
}

// InstallFix is the fix of a finding that kk's files for harness id are
// missing.
func InstallFix(id string) string { return "run `kk init --harnesses " + id + "`" }

// UpgradeFix is the fix of a finding that kk's files for harness id are
// out of date.
func UpgradeFix(id string) string { return "run `kk init --upgrade --harnesses " + id + "`" }
