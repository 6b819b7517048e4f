package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/templates"
)

// InitOptions control Init and Scaffold.
type InitOptions struct {
	Upgrade bool      // refresh generated scaffolding of an existing KB
	Version string    // kk version recorded in installed-version
	Now     time.Time // recorded as installed_at
	Command string    // recorded in the writer lock
}

// InitResult lists what Init (or Scaffold) created or changed, relative
// to the repository root.
type InitResult struct {
	Created   []string `json:"created"`
	Updated   []string `json:"updated"`
	Warnings  []string `json:"warnings"`
	Unchanged bool     `json:"unchanged"`
}

// Scaffold creates the knowledge base's setup (folders, config.yaml,
// README, .gitignore, .kkignore, installed-version); txn.Init follows it
// with a transaction that creates FOLDER_SUMMARIES.md, knowledge like the
// leaves, and the generated index files. Existing user content (config,
// .kkignore) is never overwritten; a second run changes nothing. With
// Upgrade, generated scaffolding (README, .gitignore block, installed
// version) is refreshed.
func (k *KB) Scaffold(ctx context.Context, opts InitOptions) (*InitResult, error) {
	existed := k.Initialized()
	if opts.Upgrade && !existed {
		return nil, fmt.Errorf("%w at %s; run `kk init` without --upgrade first", ErrNotFound, k.Root)
	}
	if fi, err := os.Stat(k.Root); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("repository folder %s does not exist", k.Root)
	}
	res := &InitResult{Created: []string{}, Updated: []string{}, Warnings: []string{}}
	for _, d := range []string{k.Dir, k.NodesDir(), k.StateDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	err := k.WithLock(ctx, opts.Command, func() error {
		put := func(path string, data []byte, overwrite bool) error {
			old, err := os.ReadFile(path)
			switch {
			case err == nil && (bytes.Equal(old, data) || !overwrite):
				return nil
			case err != nil && !errors.Is(err, fs.ErrNotExist):
				return err
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			if err := atomicfile.Write(path, data, 0o644); err != nil {
				return err
			}
			if old == nil {
				res.Created = append(res.Created, k.Rel(path))
			} else {
				res.Updated = append(res.Updated, k.Rel(path))
			}
			return nil
		}
		readme, _ := fs.ReadFile(templates.KB, "kb/README.md")
		config, _ := fs.ReadFile(templates.KB, "kb/config.yaml")
		config = append(config, ProjectIDLine(filepath.Base(k.Root))...)
		kkignore, _ := fs.ReadFile(templates.KB, "kb/kkignore")
		steps := []struct {
			path      string
			data      []byte
			overwrite bool
		}{
			{filepath.Join(k.Dir, "README.md"), readme, opts.Upgrade},
			{k.ConfigPath(), config, false},
			{k.KKIgnorePath(), kkignore, false},
		}
		for _, s := range steps {
			if err := put(s.path, s.data, s.overwrite); err != nil {
				return err
			}
		}
		gi, err := mergeGitignore(k.GitignorePath())
		if err != nil {
			return err
		}
		if err := put(k.GitignorePath(), gi, true); err != nil {
			return err
		}
		if err := k.writeInstalled(opts, put); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Unchanged = len(res.Created) == 0 && len(res.Updated) == 0
	return res, nil
}

func (k *KB) writeInstalled(opts InitOptions, put func(string, []byte, bool) error) error {
	old, err := k.ReadInstalled()
	if err == nil && (!opts.Upgrade || old.Version == opts.Version) {
		return nil
	}
	in := Installed{SchemaVersion: 1, Package: "kk", Version: opts.Version, InstalledAt: opts.Now.UTC().Format(time.RFC3339), Harnesses: []string{}}
	if old != nil && old.Harnesses != nil {
		in.Harnesses = old.Harnesses
	}
	if old != nil {
		in.KKCommand = old.KKCommand
	}
	data, _ := json.MarshalIndent(in, "", "  ")
	return put(k.InstalledPath(), append(data, '\n'), true)
}

// SetInstalledHarnesses records the harnesses kk is installed into (sorted,
// without duplicates) and the command their hooks run ("kk" is recorded as
// empty) in .state/installed-version, keeping the other fields. It reports
// whether the file changed. The caller holds the writer lock; the file
// must exist (kk init writes it).
func (k *KB) SetInstalledHarnesses(ids []string, command string) (bool, error) {
	in, err := k.ReadInstalled()
	if errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("%w at %s: %s is missing; run `kk init` first", ErrNotFound, k.Root, k.Rel(k.InstalledPath()))
	}
	if err != nil {
		return false, err
	}
	list := append([]string{}, ids...)
	slices.Sort(list)
	in.Harnesses = slices.Compact(list)
	if command == "kk" {
		command = ""
	}
	in.KKCommand = command
	data, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return false, err
	}
	return atomicfile.WriteIfChanged(k.InstalledPath(), append(data, '\n'), 0o644)
}

// mergeGitignore returns .gitignore content that starts with kk's lines,
// followed by the user's own lines in their order.
func mergeGitignore(path string) ([]byte, error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var b strings.Builder
	for _, l := range GitignoreLines {
		b.WriteString(l + "\n")
	}
	own := map[string]bool{}
	for _, l := range GitignoreLines {
		own[l] = true
	}
	// Unanchored forms from older layouts also matched nodes/hooks/ and the like.
	for _, l := range []string{"_sessions/", "_logs/", "hooks/", ".state/"} {
		own[l] = true
	}
	for _, l := range strings.Split(strings.TrimRight(string(old), "\n"), "\n") {
		if strings.TrimSpace(l) == "" || own[strings.TrimSpace(l)] {
			continue
		}
		b.WriteString(l + "\n")
	}
	return []byte(b.String()), nil
}

// projectIDLine is the projectId setting init writes into a new config.yaml.
func ProjectIDLine(name string) []byte {
	v, err := yaml.Marshal(map[string]string{"projectId": name})
	if err != nil { // a string always marshals
		panic(err)
	}
	return v
}
