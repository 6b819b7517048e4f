package harness

import (
	"fmt"
	"github.com/kk-project/kk/internal/llmconfig"
	"slices"
	"strings"
)

// Model is a model setting for a harness run (llmconfig.Model: the
// knowledge store reads it from config.yaml without depending on the
// harness adapters).
type Model = llmconfig.Model

// EffortLevels are the reasoning efforts a model setting may name, the
// union of what the harnesses take.
var EffortLevels = llmconfig.EffortLevels

// ModelFlags are how a harness's headless command line takes a model
// setting, as data. Each is an argument list in which "%s" stands for the
// value; nil means the harness has no such flag, and a setting that asks
// for it is reported as not honoured (kk doctor, the launchers, the
// drain's log) and otherwise left out.
type ModelFlags struct {
	Name   []string
	Effort []string
	// Efforts are the levels Effort takes; nil takes any level.
	Efforts []string
	Agent   []string
}

// ModelArgs returns the arguments that put m on the harness's command
// line, and one sentence for each part of m the harness cannot honour. A
// setting for another harness gives no arguments.
func (s Spec) ModelArgs(m Model) (args []string, ignored []string) {
	if m.IsZero() {
		return nil, nil
	}
	if m.Harness != "" && m.Harness != s.ID {
		return nil, []string{fmt.Sprintf("it is for %s, so %s runs with its own default model", m.Harness, s.Name)}
	}
	fill := func(flag []string, v string) {
		for _, a := range flag {
			args = append(args, strings.ReplaceAll(a, "%s", v))
		}
	}
	f := s.Model
	if m.Name != "" {
		if f.Name == nil {
			ignored = append(ignored, fmt.Sprintf("%s has no flag to choose the model, so model %q is not used", s.Name, m.Name))
		} else {
			fill(f.Name, m.Name)
		}
	}
	if m.Effort != "" {
		switch {
		case f.Effort == nil:
			ignored = append(ignored, fmt.Sprintf("%s has no reasoning-effort flag, so effort %q is not used", s.Name, m.Effort))
		case f.Efforts != nil && !slices.Contains(f.Efforts, m.Effort):
			ignored = append(ignored, fmt.Sprintf("%s takes effort %s, not %q, so it runs at its default effort", s.Name, strings.Join(f.Efforts, ", "), m.Effort))
		default:
			fill(f.Effort, m.Effort)
		}
	}
	if m.Agent != "" {
		if f.Agent == nil {
			ignored = append(ignored, fmt.Sprintf("%s has no agent flag, so agent %q is not used", s.Name, m.Agent))
		} else {
			fill(f.Agent, m.Agent)
		}
	}
	return args, ignored
}

// ModelProblems reports, one line each, what of the model setting named
// setting (proposalModel, …) the harness cannot honour: for kk doctor and
// the launchers. A setting for another harness is no problem: it was
// scoped so on purpose.
func (s Spec) ModelProblems(setting string, m Model) []string {
	if m.Harness != "" && m.Harness != s.ID {
		return nil
	}
	_, ignored := s.ModelArgs(m)
	out := make([]string, len(ignored))
	for i, why := range ignored {
		out[i] = setting + ": " + why
	}
	return out
}
