// Package pack exports a knowledge tree as a knowledge pack and imports
// packs into a tree.
//
// A pack is a folder (or a .tar.gz of one, possibly wrapped in a single
// top folder) holding:
//
//	kenkeep-pack.yaml               the manifest (contracts.PackManifest)
//	knowledge/                      a nodes tree: leaves and generated index.md files
//	knowledge.FOLDER_SUMMARIES.md   the one-line summary of each folder (optional)
//	README.md                       for people; import ignores it
//
// Import grafts the leaves under nodes/<name>/ of the consumer's tree.
// Archives are read in-process and checked entry by entry; nothing from a
// pack is ever written outside a private folder under .ai/kenkeep/.state/
// until it has all been validated.
package pack

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/schema"
	"github.com/kk-project/kk/internal/yamlstyle"
)

// File names of a pack.
const (
	ManifestFile  = "kenkeep-pack.yaml"
	KnowledgeDir  = "knowledge"
	SummariesFile = "knowledge.FOLDER_SUMMARIES.md"
	ReadmeFile    = "README.md"
)

// ManifestSchema is the name of the manifest's schema in the registry.
const ManifestSchema = "pack-manifest"

// SchemaVersion is the leaf schema version of the packs kk writes.
const SchemaVersion = 3

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// ValidName reports whether name can name a pack (and its folder under
// nodes/).
func ValidName(name string) bool { return namePattern.MatchString(name) }

// ManifestError is a manifest that does not match the pack-manifest
// schema, or cannot be read.
type ManifestError struct {
	File string // as the user knows it; "" for a manifest built from flags
	Err  error
}

func (e *ManifestError) Error() string {
	if e.File == "" {
		return fmt.Sprintf("invalid pack manifest: %v", e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

func (e *ManifestError) Unwrap() error { return e.Err }

// ValidateManifest checks m against the pack-manifest schema.
func ValidateManifest(m contracts.PackManifest) error {
	if err := schema.Validate(ManifestSchema, m); err != nil {
		return &ManifestError{Err: err}
	}
	if err := manifestText(map[string]string{"name": m.Name, "version": m.Version, "summary": m.Summary, "homepage": m.Homepage}); err != nil {
		return &ManifestError{Err: err}
	}
	return nil
}

// TextError is a manifest field holding a character no one-line field of
// kk may hold (a control character, a bidirectional control): the pack's
// index and kk pack import print these fields to a terminal.
type TextError struct{ Key, Msg string }

func (e *TextError) Error() string { return fmt.Sprintf("/%s: %s", e.Key, e.Msg) }

// manifestText checks the manifest's text fields, in a fixed order.
func manifestText(fields map[string]string) error {
	for _, key := range []string{"name", "version", "summary", "homepage"} {
		if msg := node.LineProblem(fields[key]); msg != "" {
			return &TextError{Key: key, Msg: msg}
		}
	}
	return nil
}

// ParseManifest reads and checks the text of a kenkeep-pack.yaml; file
// names it in errors.
func ParseManifest(file string, data []byte) (*contracts.PackManifest, error) {
	doc, err := schema.ParseDocument(data)
	if err != nil {
		return nil, &ManifestError{File: file, Err: err}
	}
	if err := schema.Validate(ManifestSchema, doc); err != nil {
		return nil, &ManifestError{File: file, Err: err}
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, &ManifestError{File: file, Err: errors.New("must be a mapping")}
	}
	str := func(key string) string { s, _ := m[key].(string); return s }
	out := &contracts.PackManifest{Name: str("name"), Version: str("version"), Summary: str("summary"), Homepage: str("homepage")}
	if err := manifestText(map[string]string{"name": out.Name, "version": out.Version, "summary": out.Summary, "homepage": out.Homepage}); err != nil {
		return nil, &ManifestError{File: file, Err: err}
	}
	// The schema admits only the integers 2 and 3: an int64 from YAML, a
	// json.Number from JSON.
	v := fmt.Sprint(m["schema_version"])
	n, err := strconv.Atoi(v)
	if err != nil {
		return nil, &ManifestError{File: file, Err: fmt.Errorf("/schema_version: %s is not written as a whole number", v)}
	}
	out.SchemaVersion = n
	return out, nil
}

// RenderManifest renders m as kenkeep-pack.yaml: keys sorted, homepage
// omitted when empty.
func RenderManifest(m contracts.PackManifest) ([]byte, error) {
	items := yamlstyle.Map{}
	if m.Homepage != "" {
		items = append(items, yamlstyle.MapItem{Key: "homepage", Value: m.Homepage})
	}
	items = append(items,
		yamlstyle.MapItem{Key: "name", Value: m.Name},
		yamlstyle.MapItem{Key: "schema_version", Value: m.SchemaVersion},
		yamlstyle.MapItem{Key: "summary", Value: m.Summary},
		yamlstyle.MapItem{Key: "version", Value: m.Version},
	)
	return yamlstyle.Marshal(items)
}

// renderReadme is the README.md of an exported pack.
func renderReadme(m contracts.PackManifest) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n\nVersion: %s\n", m.Name, m.Summary, m.Version)
	if m.Homepage != "" {
		fmt.Fprintf(&b, "Homepage: %s\n", m.Homepage)
	}
	fmt.Fprintf(&b, `
This is a knowledge pack: reviewed project knowledge that coding agents
read through kk (or kenkeep). knowledge/ holds one markdown leaf per
concept, in topical folders, and knowledge.FOLDER_SUMMARIES.md the
one-line summary of each folder.

## Import

In a repository set up with `+"`kk init`"+`, give kk this folder or its
.tar.gz archive:

`+"```sh"+`
kk pack import path/to/%s
`+"```"+`

The leaves land in `+"`.ai/kenkeep/nodes/%s/`"+`; `+"`--as <folder>`"+` picks
another folder. Leaves whose id the repository already has are skipped.
`, "kenkeep-pack-"+m.Name, m.Name)
	return []byte(b.String())
}
