// Package install puts kk into a repository's coding-agent harnesses and
// takes it out again: it calls each harness adapter's Install or
// Uninstall, keeps kk's block in AGENTS.md, and records the installed
// harnesses in .ai/kenkeep/.state/installed-version. The CLI commands
// kk init --harnesses, kk uninstall and kk doctor are thin faces over it.
package install

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
	"github.com/kk-project/kk/templates"
)

// DefaultCommand is how hook commands invoke kk unless told otherwise: by
// name, from PATH, so a fresh clone of the repository needs only kk.
const DefaultCommand = "kk"

// Options control Install and Uninstall.
type Options struct {
	// Command is how the hooks invoke kk. Empty means the command recorded
	// by an earlier install, else DefaultCommand. An Install whose command
	// differs from the recorded one reinstalls every recorded harness.
	Command string
	// Upgrade also reinstalls every harness already recorded as installed,
	// refreshing everything kk owns in them.
	Upgrade bool
	Now     time.Time
	// LockCommand is the command line recorded in the writer lock.
	LockCommand string
}

// Result is what an Install or Uninstall did.
type Result struct {
	// Changes are the files created, updated or removed, relative to the
	// repository root, in the order they were made.
	Changes []harness.Change `json:"changes"`
	// Harnesses are the harnesses recorded as installed afterwards, sorted.
	Harnesses []string `json:"harnesses"`
	// Command is how the installed hooks invoke kk.
	Command string `json:"kk_command"`
	// Warnings are problems that did not stop the run.
	Warnings []string `json:"warnings"`
}

// Skills returns the embedded skill templates: skill name → SKILL.md.
func Skills() (map[string][]byte, error) {
	out := map[string][]byte{}
	entries, err := fs.ReadDir(templates.Skills, "skills")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		data, err := fs.ReadFile(templates.Skills, path.Join("skills", e.Name(), "SKILL.md"))
		if err != nil {
			return nil, fmt.Errorf("embedded skill %s: %w", e.Name(), err)
		}
		out[e.Name()] = data
	}
	return out, nil
}

// Prompts returns the embedded prompts: file name → content.
func Prompts() (map[string][]byte, error) {
	out := map[string][]byte{}
	entries, err := fs.ReadDir(templates.Prompts, "prompts")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := fs.ReadFile(templates.Prompts, path.Join("prompts", e.Name()))
		if err != nil {
			return nil, err
		}
		out[e.Name()] = data
	}
	return out, nil
}

// AgentsBlock is the text kk keeps between its markers in AGENTS.md, read
// by every agent that reads AGENTS.md (Codex, Cursor, OpenCode, Copilot,
// Gemini).
func AgentsBlock() string {
	return `## Project knowledge base (kk)

This repository keeps reviewed project knowledge as markdown under ` + "`.ai/kenkeep/`" + `, managed by kk.

- Read [.ai/kenkeep/ENTRY.md](.ai/kenkeep/ENTRY.md) first: it lists the knowledge folders and the nodes at the root.
- To go deeper, open the ` + "`index.md`" + ` of the folder whose summary matches your task, then the nodes it lists.
  Nodes are markdown files named by their id; ` + "`kk node show <id>`" + ` prints one.
- kk primitives do every write to ` + "`.ai/kenkeep/`" + ` (` + "`kk node write`" + `, the ` + "`/kk-add`" + `, ` + "`/kk-curate`" + ` and ` + "`/kk-bootstrap`" + ` skills).
  Do not edit nodes, ` + "`index.md`" + `, ` + "`ENTRY.md`" + ` or ` + "`GRAPH.md`" + ` by hand: kk generates the indexes.
`
}

// Install installs kk into the named harnesses of the repository of k (and,
// with Upgrade, into every harness already recorded), writes the AGENTS.md
// block and records the harness list. Running it twice changes nothing.
// An adapter that fails (a harness's file kk cannot read) is named in
// the error, and the others are installed all the same: each harness's
// files are its own. What was installed is recorded, so that kk
// uninstall can take it out.
func Install(ctx context.Context, k *store.KB, reg *harness.Registry, named []harness.Adapter, opts Options) (*Result, error) {
	inst, err := readInstalled(k)
	if err != nil {
		return nil, err
	}
	res := &Result{Changes: []harness.Change{}, Warnings: []string{}}
	targets := map[string]harness.Adapter{}
	for _, a := range named {
		targets[a.ID()] = a
	}
	res.Command = commandFor(opts.Command, inst)
	// A new hook command applies to every installed harness: their hooks
	// are rewritten with it, as an upgrade would.
	if opts.Upgrade || res.Command != commandFor("", inst) {
		for _, id := range inst.Harnesses {
			if _, ok := targets[id]; ok {
				continue
			}
			a, err := reg.Get(id)
			if err != nil {
				res.Warnings = append(res.Warnings, fmt.Sprintf("%s lists harness %q, which this kk does not know; it was left alone", k.Rel(k.InstalledPath()), id))
				continue
			}
			targets[id] = a
		}
	}
	skills, prompts, err := shipped()
	if err != nil {
		return nil, err
	}
	installed := slices.Clone(inst.Harnesses)
	err = txn.Locked(ctx, k, opts.LockCommand, 0, func() error {
		var failed error
		for _, id := range sortedKeys(targets) {
			a := targets[id]
			changes, err := a.Install(ctx, harness.InstallOptions{Root: k.Root, Command: res.Command, Skills: skills, Prompts: prompts, Now: opts.Now})
			res.Changes = append(res.Changes, changes...)
			if err != nil {
				failed = errors.Join(failed, fmt.Errorf("installing kk into %s: %w", a.Name(), err))
				continue
			}
			mcpChanges, err := registerMCP(a, k.Root, res.Command)
			res.Changes = append(res.Changes, mcpChanges...)
			if err != nil {
				failed = errors.Join(failed, fmt.Errorf("installing kk into %s: %w", a.Name(), err))
				continue
			}
			if !slices.Contains(installed, id) {
				installed = append(installed, id)
			}
		}
		if len(installed) > 0 {
			c, err := upsertAgentsBlock(k)
			if err != nil {
				return errors.Join(failed, err)
			}
			res.addChange(c)
		}
		c, err := record(k, installed, res.Command)
		if err != nil {
			return errors.Join(failed, err)
		}
		res.addChange(c)
		return failed
	})
	res.Harnesses = sortedCompact(installed)
	return res, err
}

// Uninstall removes kk from the named harnesses: each adapter takes out
// exactly what its Install added, the harnesses are struck from the
// installed list, and the AGENTS.md block goes when no harness remains.
func Uninstall(ctx context.Context, k *store.KB, named []harness.Adapter, opts Options) (*Result, error) {
	inst, err := readInstalled(k)
	if err != nil {
		return nil, err
	}
	res := &Result{Changes: []harness.Change{}, Warnings: []string{}}
	res.Command = commandFor(opts.Command, inst)
	skills, prompts, err := shipped()
	if err != nil {
		return nil, err
	}
	byID := map[string]harness.Adapter{}
	for _, a := range named {
		byID[a.ID()] = a
	}
	remaining := slices.Clone(inst.Harnesses)
	err = txn.Locked(ctx, k, opts.LockCommand, 0, func() error {
		var failed error
		for _, id := range sortedKeys(byID) {
			a := byID[id]
			mcpChanges, err := unregisterMCP(a, k.Root)
			res.Changes = append(res.Changes, mcpChanges...)
			if err != nil {
				failed = errors.Join(failed, fmt.Errorf("removing kk from %s: %w", a.Name(), err))
				continue
			}
			changes, err := a.Uninstall(ctx, harness.InstallOptions{Root: k.Root, Command: res.Command, Skills: skills, Prompts: prompts, Now: opts.Now})
			res.Changes = append(res.Changes, changes...)
			if err != nil {
				failed = errors.Join(failed, fmt.Errorf("removing kk from %s: %w", a.Name(), err))
				continue
			}
			remaining = slices.DeleteFunc(remaining, func(s string) bool { return s == id })
		}
		command := res.Command
		if len(remaining) == 0 {
			c, err := removeAgentsBlock(k)
			if err != nil {
				return errors.Join(failed, err)
			}
			res.addChange(c)
			command = DefaultCommand
		}
		c, err := record(k, remaining, command)
		if err != nil {
			return errors.Join(failed, err)
		}
		res.addChange(c)
		return failed
	})
	res.Harnesses = sortedCompact(remaining)
	return res, err
}

func readInstalled(k *store.KB) (*store.Installed, error) {
	inst, err := k.ReadInstalled()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s: %s is missing; run `kk init` first", store.ErrNotFound, k.Root, k.Rel(k.InstalledPath()))
	}
	return inst, err
}

func commandFor(flag string, inst *store.Installed) string {
	switch {
	case flag != "":
		return flag
	case inst.KKCommand != "":
		return inst.KKCommand
	}
	return DefaultCommand
}

func (r *Result) addChange(c *harness.Change) {
	if c != nil {
		r.Changes = append(r.Changes, *c)
	}
}

func record(k *store.KB, ids []string, command string) (*harness.Change, error) {
	changed, err := k.SetInstalledHarnesses(ids, command)
	if err != nil || !changed {
		return nil, err
	}
	return &harness.Change{Path: k.Rel(k.InstalledPath()), Action: "updated"}, nil
}

// agentsMarkers are the marker lines around kk's block in AGENTS.md:
// kenkeep's, so that kenkeep and kk find and replace each other's block
// and a repository either set up has one.
var agentsMarkers = harness.Markers{Start: "<!-- >>> kenkeep:kk-index >>> -->", End: "<!-- <<< kenkeep:kk-index <<< -->"}

// oldAgentsMarkers are the marker lines kk wrote around its AGENTS.md
// block before it wrote kenkeep's (harness.KKMarkers): such a block is
// still found, replaced in place and removed.
var oldAgentsMarkers = harness.KKMarkers

// agentsText returns text with kk's block set to body (with remove, taken
// out): the block between agentsMarkers is replaced in place, else one
// between oldAgentsMarkers is (kk before it wrote kenkeep's markers), else
// the block is appended; a block of the old markers beside one of the new
// is removed, so the file is left with one. Either layout Find refuses is
// an error naming its markers, and text is not changed.
func agentsText(text, body string, remove bool) (string, error) {
	_, _, hasNew, err := agentsMarkers.Find(text)
	if err != nil {
		return text, &layoutError{agentsMarkers, err}
	}
	lo, hi, hasOld, err := oldAgentsMarkers.Find(text)
	if err != nil {
		return text, &layoutError{oldAgentsMarkers, err}
	}
	out := text
	switch {
	case remove:
		out, _ = agentsMarkers.Remove(out)
	case hasNew || !hasOld:
		out, _ = agentsMarkers.Upsert(out, body)
	default:
		// The old block becomes the new one where it stands.
		return text[:lo] + agentsMarkers.Block(body) + text[hi:], nil
	}
	if hasOld {
		out, _ = oldAgentsMarkers.Remove(out)
	}
	return out, nil
}

// layoutError is a layout of markers Find refuses, with the markers.
type layoutError struct {
	m   harness.Markers
	err error
}

func (e *layoutError) Error() string { return e.err.Error() }

// agentsError is err of agentsText as the error of a write to file.
func agentsError(file string, err error) error {
	if le, ok := errors.AsType[*layoutError](err); ok {
		return le.m.Error(file, le.err)
	}
	return err
}

// upsertAgentsBlock writes kk's block into AGENTS.md, creating the file
// when there is none and keeping the user's text outside the block.
func upsertAgentsBlock(k *store.KB) (*harness.Change, error) {
	p, err := atomicfile.Follow(k.Root, k.AgentsPath())
	if err != nil {
		return nil, err
	}
	old, err := k.ReadFile(p)
	if _, bad := errors.AsType[*store.UnreadableError](err); bad {
		return nil, err
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading %s: %w", k.Rel(p), err)
	}
	exists := err == nil
	text, err := agentsText(string(old), AgentsBlock(), false)
	if err != nil {
		return nil, agentsError(k.Rel(p), err)
	}
	if exists && text == string(old) {
		return nil, nil
	}
	if err := atomicfile.Write(p, []byte(text), 0o644); err != nil {
		return nil, err
	}
	if exists {
		return &harness.Change{Path: k.Rel(p), Action: "updated"}, nil
	}
	return &harness.Change{Path: k.Rel(p), Action: "created"}, nil
}

// removeAgentsBlock takes kk's block out of AGENTS.md, and the file with it
// when nothing else is left (kk created it).
func removeAgentsBlock(k *store.KB) (*harness.Change, error) {
	p, err := atomicfile.Follow(k.Root, k.AgentsPath())
	if err != nil {
		return nil, err
	}
	linked := p != k.AgentsPath() // AGENTS.md linked to CLAUDE.md: the link and its file stay
	old, err := k.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if _, bad := errors.AsType[*store.UnreadableError](err); bad {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", k.Rel(p), err)
	}
	text, err := agentsText(string(old), "", true)
	if err != nil {
		return nil, agentsError(k.Rel(p), err)
	}
	if text == string(old) {
		return nil, nil
	}
	if strings.TrimSpace(text) == "" && !linked {
		if err := os.Remove(p); err != nil {
			return nil, err
		}
		return &harness.Change{Path: k.Rel(p), Action: "removed"}, nil
	}
	if err := atomicfile.Write(p, []byte(text), 0o644); err != nil {
		return nil, err
	}
	return &harness.Change{Path: k.Rel(p), Action: "updated"}, nil
}

func sortedKeys(m map[string]harness.Adapter) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func sortedCompact(ids []string) []string {
	out := append([]string{}, ids...)
	slices.Sort(out)
	return slices.Compact(out)
}

// shipped returns the skill and prompt templates kk installs.
func shipped() (skills, prompts map[string][]byte, err error) {
	if skills, err = Skills(); err != nil {
		return nil, nil, err
	}
	if prompts, err = Prompts(); err != nil {
		return nil, nil, err
	}
	return skills, prompts, nil
}
