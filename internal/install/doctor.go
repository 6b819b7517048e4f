package install

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/checks"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/store"
)

// Doctor checks kk's installation in the repository's harnesses: each
// harness recorded in installed-version (or only the one named), through
// its adapter's own checks (installed, up to date, binary on PATH, hooks
// trusted, platform limits), then kk's block in AGENTS.md. Check names are
// "<harness>/<check>". No harness installed gives no checks. A missing or unreadable installed-version gives no
// checks here: the knowledge base checks report it.
func Doctor(ctx context.Context, k *store.KB, reg *harness.Registry, only string) []checks.DoctorCheck {
	inst, err := k.ReadInstalled()
	if err != nil {
		return nil
	}
	var out []checks.DoctorCheck
	ids := inst.Harnesses
	if only != "" {
		if !slices.Contains(inst.Harnesses, only) {
			return []checks.DoctorCheck{{
				Name:    only + "/installed",
				Level:   checks.DoctorWarn,
				Message: fmt.Sprintf("kk is not installed into %s in this repository (installed: %s)", only, listOrNone(inst.Harnesses)),
				Fix:     fmt.Sprintf("run `kk init --harnesses %s`", only),
			}}
		}
		ids = []string{only}
	}
	if len(ids) == 0 {
		return nil // a knowledge base used without coding agents
	}
	for _, id := range ids {
		a, err := reg.Get(id)
		if err != nil {
			out = append(out, checks.DoctorCheck{
				Name:    id + "/installed",
				Level:   checks.DoctorWarn,
				Message: fmt.Sprintf("%s lists harness %q, which this kk does not know", k.Rel(k.InstalledPath()), id),
				Fix:     "use the kk that installed it, or remove it from the harnesses list in " + k.Rel(k.InstalledPath()),
			})
			continue
		}
		for _, c := range a.Doctor(ctx, k.Root) {
			// "claude binary" under claude reads "claude/binary".
			name := strings.TrimPrefix(c.Name, id+" ")
			out = append(out, checks.DoctorCheck{Name: id + "/" + name, Level: c.Level, Message: c.Message, Fix: c.Fix})
		}
		if c, ok := checkMCP(ctx, k, id, a, commandFor("", inst)); ok {
			out = append(out, c)
		}
		if c, ok := checkModels(k, id, a); ok {
			out = append(out, c)
		}
	}
	return append(out, checkAgentsBlock(k))
}

// checkModels reports how the model settings of config.yaml reach the
// harness's command line, and what of them it cannot honour (an effort
// for a harness without an effort flag). No setting that applies to the
// harness gives no check; an unreadable config.yaml is the knowledge
// base checks' to report.
func checkModels(k *store.KB, id string, a harness.Adapter) (checks.DoctorCheck, bool) {
	cfg, err := k.LoadConfig()
	if err != nil {
		return checks.DoctorCheck{}, false
	}
	s := a.Spec()
	var problems, used []string
	for _, nm := range cfg.ModelSettings() {
		m := nm.Setting.HarnessModel()
		if m.IsZero() || (m.Harness != "" && m.Harness != id) {
			continue
		}
		problems = append(problems, s.ModelProblems(nm.Key, m)...)
		if args, _ := s.ModelArgs(m); len(args) > 0 {
			used = append(used, nm.Key+" → "+strings.Join(args, " "))
		}
	}
	c := checks.DoctorCheck{Name: id + "/model"}
	switch {
	case len(problems) > 0:
		c.Level, c.Message = checks.DoctorWarn, strings.Join(problems, "; ")
		c.Fix = "drop what " + a.Name() + " cannot take from the setting, or scope the setting to another harness with harness: <id>"
	case len(used) > 0:
		c.Level, c.Message = checks.DoctorOK, strings.Join(used, "; ")
	default:
		return c, false
	}
	return c, true
}

func checkAgentsBlock(k *store.KB) checks.DoctorCheck {
	c := checks.DoctorCheck{Name: "agents-block"}
	file := k.Rel(k.AgentsPath())
	fix := "run `kk init --upgrade`, which rewrites kk's block and keeps the rest of the file"
	data, err := k.ReadFile(k.AgentsPath())
	_, unreadable := errors.AsType[*store.UnreadableError](err)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.Level, c.Message, c.Fix = checks.DoctorWarn, file+" is missing, so agents that read it are not told about the knowledge base", fix
		return c
	case unreadable:
		c.Level, c.Message, c.Fix = checks.DoctorError, err.Error(), "replace it with an ordinary file, then run `kk init --upgrade`"
		return c
	case err != nil:
		c.Level, c.Message, c.Fix = checks.DoctorError, fmt.Sprintf("%s cannot be read: %v", file, err), "check the file's permissions"
		return c
	}
	body, ok, berr := blockBody(agentsMarkers, string(data))
	_, oldOK, oldErr := blockBody(oldAgentsMarkers, string(data))
	switch {
	case berr != nil:
		c.Level, c.Message, c.Fix = checks.DoctorWarn, fmt.Sprintf("%s has %v, so kk cannot tell which lines are its block", file, berr), "keep one "+agentsMarkers.Start+" line and one "+agentsMarkers.End+" line after it around kk's block, then run `kk init --upgrade`"
	case oldErr != nil:
		c.Level, c.Message, c.Fix = checks.DoctorWarn, fmt.Sprintf("%s has %v, so kk cannot tell which lines are its block", file, oldErr), "keep one "+oldAgentsMarkers.Start+" line and one "+oldAgentsMarkers.End+" line after it around kk's block, then run `kk init --upgrade`"
	case oldOK:
		c.Level, c.Message, c.Fix = checks.DoctorWarn, file+": kk's block has the markers older kk wrote ("+oldAgentsMarkers.Start+"), where kk and kenkeep write "+agentsMarkers.Start, fix
	case !ok:
		c.Level, c.Message, c.Fix = checks.DoctorWarn, file+" has no kk block, so agents that read it are not told about the knowledge base", fix
	case body != strings.TrimRight(AgentsBlock(), "\n"):
		c.Level, c.Message, c.Fix = checks.DoctorWarn, file+": kk's block differs from what this kk writes", fix
	default:
		c.Level, c.Message = checks.DoctorOK, file+" points agents at the knowledge base"
	}
	return c
}

// blockBody returns the lines between the marker lines of m (Find's
// block), and Find's error for a layout it refuses.
func blockBody(m harness.Markers, text string) (string, bool, error) {
	lo, hi, ok, err := m.Find(text)
	if err != nil || !ok {
		return "", false, err
	}
	block := text[lo:hi]
	first := strings.IndexByte(block, '\n')
	last := strings.LastIndexByte(block, '\n')
	if first < 0 || last <= first {
		return "", true, nil
	}
	return strings.Trim(block[first+1:last], "\n"), true, nil
}

func listOrNone(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}
