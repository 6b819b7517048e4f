package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/templates"
)

// Prompt sources.
const (
	PromptShipped  = "shipped"  // the copy embedded in kk
	PromptOverride = "override" // .ai/kenkeep/.config/prompts/<name>.md
)

// ErrUnknownPrompt is returned for a prompt name kk does not ship.
var ErrUnknownPrompt = errors.New("unknown prompt")

// Prompt is one prompt as the skills and hooks get it.
type Prompt struct {
	Name    string `json:"name"`
	Source  string `json:"source"`         // PromptShipped or PromptOverride
	Path    string `json:"path,omitempty"` // the override, relative to the repository root
	Content string `json:"content,omitempty"`
}

// PromptNames returns the names of the shipped prompts, sorted.
func PromptNames() []string {
	entries, _ := fs.ReadDir(templates.Prompts, "prompts")
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".md"); ok && !e.IsDir() {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// LoadPrompt returns the prompt called name (".md" optional): the
// repository's override when k has one, else the shipped copy. k may be
// nil (no knowledge base): the shipped copy then.
func LoadPrompt(k *store.KB, name string) (*Prompt, error) {
	name = strings.TrimSuffix(name, ".md")
	if !slices.Contains(PromptNames(), name) {
		return nil, fmt.Errorf("%w %q; kk ships %s", ErrUnknownPrompt, name, strings.Join(PromptNames(), ", "))
	}
	p := &Prompt{Name: name, Source: PromptShipped}
	if k != nil {
		file := filepath.Join(k.PromptsDir(), name+".md")
		data, err := k.ReadFile(file)
		_, unreadable := errors.AsType[*store.UnreadableError](err)
		switch {
		case err == nil:
			p.Source, p.Path, p.Content = PromptOverride, k.Rel(file), string(data)
			return p, nil
		case unreadable:
			return nil, err
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("reading the prompt override %s: %w", k.Rel(file), err)
		}
	}
	data, err := fs.ReadFile(templates.Prompts, path.Join("prompts", name+".md"))
	if err != nil {
		return nil, err
	}
	p.Content = string(data)
	return p, nil
}

// ListPrompts returns every shipped prompt with where it comes from (no
// content), and the files in the override folder that override nothing.
func ListPrompts(k *store.KB) (prompts []Prompt, stray []string, err error) {
	for _, name := range PromptNames() {
		p, err := LoadPrompt(k, name)
		if err != nil {
			return nil, nil, err
		}
		p.Content = ""
		prompts = append(prompts, *p)
	}
	if k == nil {
		return prompts, nil, nil
	}
	entries, err := os.ReadDir(k.PromptsDir())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("reading %s: %w", k.Rel(k.PromptsDir()), err)
	}
	for _, e := range entries {
		n, ok := strings.CutSuffix(e.Name(), ".md")
		if e.IsDir() || !ok || !slices.Contains(PromptNames(), n) {
			stray = append(stray, k.Rel(filepath.Join(k.PromptsDir(), e.Name())))
		}
	}
	return prompts, stray, nil
}
