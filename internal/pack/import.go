package pack

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/migrate"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
	"github.com/kk-project/kk/internal/workpool"
)

// ImportOptions control Import.
type ImportOptions struct {
	// Source is a pack folder or a .tar.gz of one, as the user gave it.
	Source string
	// Dir is the folder a relative Source is found from; "" means the
	// working directory.
	Dir string
	// As names the folder under nodes/ the leaves go to; "" means the
	// manifest's name.
	As string
	// Migrate allows a schema version 2 pack, converted on the way in.
	Migrate bool
	// Command is recorded in the writer lock.
	Command string
	// Limits bound the source; nil means DefaultLimits.
	Limits *Limits
}

// SkippedLeaf is a pack leaf left out because its id is taken in the
// tree: by a leaf ("exists"), or by the redirect ledger, which says the
// id was retired and stands for its successors ("retired").
type SkippedLeaf struct {
	ID     string `json:"id"`
	Path   string `json:"path"` // in the pack, relative to its top
	Reason string `json:"reason"`
	// Existing is what holds the id, relative to the repository root: the
	// tree's leaf, or nodes/.redirects.json.
	Existing string `json:"existing"`
}

// ImportResult says what Import did. Paths are relative to the repository
// root.
type ImportResult struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Folder is where the leaves went: .ai/kenkeep/nodes/<name>.
	Folder string `json:"folder"`
	// Migrated is set when v2 leaves were converted to v3 on the way in.
	Migrated bool `json:"migrated"`
	// Imported counts the leaves written.
	Imported int           `json:"imported"`
	Skipped  []SkippedLeaf `json:"skipped"`
	// Relinked lists leaves of the tree whose Related section now links to
	// a leaf the pack brought.
	Relinked []string `json:"relinked"`
	// FolderSummaries counts the folder summaries set, the pack folder's
	// own included.
	FolderSummaries int `json:"folder_summaries"`
	// UnknownEdges lists edge targets of imported leaves that are in
	// neither the pack nor the tree.
	UnknownEdges []string `json:"unknown_edges"`
	// Collisions are converted v2 leaves whose body already had a Related
	// or Citations heading of its own (see kk migrate okf-v3).
	Collisions   []migrate.Collision `json:"collisions"`
	IndexChanged []string            `json:"index_changed"`
	// MissingSummaries lists the pack's folders (relative to its
	// knowledge/, the root aside) that its registry gives no summary: a
	// warning, as kenkeep warns.
	MissingSummaries []string `json:"missing_summaries"`
	// Renamed lists the pack's folders (relative to its knowledge/) whose
	// leaves went to another name, one kk creates (node.MakeableFolder).
	Renamed []Renamed `json:"renamed"`
}

// Renamed is a folder of the pack (From) whose leaves are in To, both
// relative to the pack's folder under nodes/.
type Renamed struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// DestExistsError is an import into a folder that already exists.
type DestExistsError struct {
	Folder string // relative to the repository root
}

func (e *DestExistsError) Error() string {
	return fmt.Sprintf("%s already exists; import the pack into another folder with --as <name>, or remove that folder first", e.Folder)
}

// writeConcurrency is how many leaves are written at once.
const writeConcurrency = 8

// stagedPack is a pack unpacked into a private folder and laid out as a
// knowledge base, so that the kb package can read (and migrate) it.
type stagedPack struct {
	manifest *contracts.PackManifest
	kb       *store.KB
	label    func(rel string) string // names a file of the pack in messages
}

// Import grafts the leaves of a pack into nodes/<name>/ of k and
// regenerates the index. The source is unpacked and checked in a private
// folder under .ai/kenkeep/.state/ first; then, under the writer lock,
// every leaf is read, validated and rendered before the first file of the
// tree is written. Leaves whose id the tree already has are skipped; a
// failed write undoes the import.
func Import(ctx context.Context, k *store.KB, opts ImportOptions) (*ImportResult, error) {
	if opts.As != "" && !ValidName(opts.As) {
		return nil, fmt.Errorf("folder name %q: use lowercase letters, digits and -, starting with a letter or digit", opts.As)
	}
	src := opts.Source
	if opts.Dir != "" && !filepath.IsAbs(src) {
		src = filepath.Join(opts.Dir, src)
	}
	kind, err := classify(src, opts.Source)
	if err != nil {
		return nil, err
	}
	limits := DefaultLimits
	if opts.Limits != nil {
		limits = *opts.Limits
	}
	tmp, err := txn.MkdirStaging(k, "pack-import")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()

	sp, err := stage(kind, src, opts.Source, tmp, limits)
	if err != nil {
		return nil, err
	}
	m := sp.manifest
	dest := opts.As
	if dest == "" {
		dest = m.Name
	}
	res := &ImportResult{Name: m.Name, Version: m.Version, Folder: k.Rel(k.NodePath(dest)),
		Skipped: []SkippedLeaf{}, Relinked: []string{}, UnknownEdges: []string{}, Collisions: []migrate.Collision{}, IndexChanged: []string{}, Renamed: []Renamed{}}
	if m.SchemaVersion == 2 && !opts.Migrate {
		return nil, fmt.Errorf("pack %s is at schema version 2 (kenkeep's v2 leaves); import it with --migrate, which converts its leaves to version 3 on the way in", m.Name)
	}
	if _, err := os.Lstat(k.NodePath(dest)); err == nil {
		return nil, &DestExistsError{Folder: res.Folder}
	}
	if m.SchemaVersion == 2 {
		mr, err := migrate.MigrateCopy(ctx, sp.kb)
		if err != nil {
			return nil, fmt.Errorf("converting pack %s to schema version 3: %w", m.Name, err)
		}
		res.Migrated = mr.Converted > 0
		for _, c := range mr.Collisions {
			rel := strings.TrimPrefix(c.Path, store.DirName+"/nodes/")
			res.Collisions = append(res.Collisions, migrate.Collision{ID: c.ID, Path: k.Rel(k.NodePath(dest + "/" + rel)), Headings: c.Headings})
		}
	}
	leaves, summaries, err := readStaged(sp)
	if err != nil {
		return nil, err
	}
	done, err := txn.Update(ctx, k, txn.Meta{Source: "cli", Command: opts.Command}, func(tx *txn.Tx) error {
		return graft(tx, sp, dest, leaves, summaries, res)
	})
	if err != nil {
		return nil, fmt.Errorf("importing pack %s: %w; nothing was imported", m.Name, err)
	}
	for _, op := range done.Ops {
		if op.Op == "update" {
			res.Relinked = append(res.Relinked, k.Rel(k.NodePath(op.Path)))
		}
	}
	if done.Index != nil {
		res.IndexChanged = done.Index.Changed
	}
	return res, nil
}

// stage copies the pack at src into tmp and lays it out as a knowledge
// base at tmp/kb: knowledge/ becomes nodes/ and
// knowledge.FOLDER_SUMMARIES.md becomes FOLDER_SUMMARIES.md. src is the
// source's path; given is how the user named it, for messages.
func stage(kind sourceKind, src, given, tmp string, limits Limits) (*stagedPack, error) {
	raw := filepath.Join(tmp, "src")
	if err := os.Mkdir(raw, 0o755); err != nil {
		return nil, err
	}
	s := &stager{source: given, dst: raw, limits: limits, seen: map[string]bool{}}
	var top string
	var label func(rel string) string
	switch kind {
	case sourceArchive:
		if err := s.extractArchive(src); err != nil {
			return nil, err
		}
		var err error
		if top, err = locate(raw, given); err != nil {
			return nil, err
		}
		label = func(rel string) string { return given + ": " + path.Join(top, rel) }
	case sourceDir:
		var err error
		if top, err = locate(src, given); err != nil {
			return nil, err
		}
		label = func(rel string) string { return filepath.Join(given, filepath.FromSlash(path.Join(top, rel))) }
		for _, name := range []string{ManifestFile, KnowledgeDir, SummariesFile} {
			rel := path.Join(top, name)
			if _, err := os.Lstat(filepath.Join(src, filepath.FromSlash(rel))); errors.Is(err, fs.ErrNotExist) && name != ManifestFile {
				continue
			}
			if err := s.copyEntry(src, rel); err != nil {
				return nil, err
			}
		}
	}
	packDir := filepath.Join(raw, filepath.FromSlash(top))
	data, err := os.ReadFile(filepath.Join(packDir, ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label(ManifestFile), err)
	}
	m, err := ParseManifest(label(ManifestFile), data)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(filepath.Join(packDir, KnowledgeDir)); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s: the pack has no %s/ folder (its leaves)", label(""), KnowledgeDir)
	}
	sk := store.New(filepath.Join(tmp, "kb"))
	if err := os.MkdirAll(sk.StateDir(), 0o755); err != nil {
		return nil, err
	}
	if err := os.Rename(filepath.Join(packDir, KnowledgeDir), sk.NodesDir()); err != nil {
		return nil, err
	}
	switch fi, err := os.Lstat(filepath.Join(packDir, SummariesFile)); {
	case err == nil && !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s: is not a regular file", label(SummariesFile))
	case err == nil:
		if err := os.Rename(filepath.Join(packDir, SummariesFile), sk.SummariesPath()); err != nil {
			return nil, err
		}
	}
	return &stagedPack{manifest: m, kb: sk, label: label}, nil
}

// readStaged reads and validates every leaf of a staged (and, for a v2
// pack, converted) pack, and its folder summaries. Each leaf comes back
// parsed with its body, ready to render.
func readStaged(sp *stagedPack) ([]*node.Node, store.Summaries, error) {
	where := sp.label(KnowledgeDir)
	t, err := sp.kb.ReadTree(store.LoadOptions{})
	if err == nil {
		err = t.Err() // a pack is imported whole or not at all
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", where, err)
	}
	if len(t.Leaves) == 0 {
		return nil, nil, fmt.Errorf("%s: the pack has no leaves", where)
	}
	leaves := make([]*node.Node, 0, len(t.Leaves))
	var problems []error
	for _, l := range t.Leaves {
		if l.Format != node.SchemaVersion {
			problems = append(problems, &node.Error{Path: l.Path, Msg: fmt.Sprintf("is a kenkeep v2 leaf, but the manifest declares schema_version %d; a v2 pack declares schema_version: 2 and imports with --migrate", sp.manifest.SchemaVersion)})
			continue
		}
		n, err := sp.kb.ReadLeaf(l.Path)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		if err := n.Validate(); err != nil {
			problems = append(problems, err)
			continue
		}
		leaves = append(leaves, n)
	}
	if len(problems) > 0 {
		return nil, nil, fmt.Errorf("%s: %w", where, &store.TreeError{Problems: problems})
	}
	summaries, err := store.ReadSummaries(sp.kb.SummariesPath())
	if err != nil {
		// The message names the staged copy; name the pack's file instead.
		msg := strings.TrimPrefix(err.Error(), sp.kb.SummariesPath()+": ")
		return nil, nil, fmt.Errorf("%s: %s", sp.label(SummariesFile), msg)
	}
	return leaves, summaries, nil
}

// graft stages the pack's leaves in the transaction, under dest, with
// their links resolved against the tree; the leaves of the tree that link
// to an incoming id (and had no target until now) are staged too, for
// their Related sections to get the real paths; and the pack's folder
// summaries.
func graft(tx *txn.Tx, sp *stagedPack, dest string, leaves []*node.Node, packSummaries store.Summaries, res *ImportResult) error {
	k := tx.KB()
	if _, err := k.LoadConfig(); err != nil {
		return err
	}
	t, err := tx.Tree()
	if err != nil {
		return err
	}
	if err := store.RequireV3(t); err != nil {
		return err
	}
	switch fi, err := os.Lstat(k.NodesDir()); {
	case err == nil && !fi.IsDir():
		return fmt.Errorf("%s is not a folder", k.Rel(k.NodesDir()))
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if _, err := os.Lstat(k.NodePath(dest)); err == nil {
		return &DestExistsError{Folder: res.Folder}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	summaries, err := store.ReadSummaries(k.SummariesPath())
	if err != nil {
		return err
	}
	redirects, err := tx.Redirects()
	if err != nil {
		return err
	}

	res.MissingSummaries = []string{}
	seen := map[string]bool{}
	for _, n := range leaves {
		for d := n.Dir(); d != "" && !seen[d]; d = store.DirOf(d) {
			seen[d] = true
			if packSummaries[d] == "" {
				res.MissingSummaries = append(res.MissingSummaries, d)
			}
		}
	}
	store.SortLocale(res.MissingSummaries)

	// Which leaves go in, and where.
	incoming := map[string]bool{} // by store.IDKey
	var staged []*node.Node
	for _, n := range leaves {
		skip := SkippedLeaf{ID: n.ID, Path: path.Join(KnowledgeDir, n.Path)}
		if existing, ok := t.ByID(n.ID); ok {
			skip.Reason, skip.Existing = "exists", k.Rel(k.NodePath(existing.Path))
		} else if _, retired := redirects[n.ID]; retired {
			skip.Reason, skip.Existing = "retired", k.Rel(k.RedirectsPath())
		}
		if skip.Reason != "" {
			res.Skipped = append(res.Skipped, skip)
			continue
		}
		incoming[store.IDKey(n.ID)] = true
		staged = append(staged, n)
	}
	if len(staged) == 0 {
		return fmt.Errorf("nothing to import: the id of each of the pack's %d leaves is already taken in the tree", len(leaves))
	}
	folders := map[string]bool{}
	renamed := map[string]string{}
	var problems []error
	for _, n := range staged {
		rel := n.Path
		// A pack made with kenkeep may hold a folder kk does not create
		// (a space, a Windows device name): its leaves go to the nearest
		// name kk does, since no one can choose one in the import.
		if dir := n.Dir(); dir != "" {
			if to := node.MakeableFolder(dir); to != dir {
				renamed[dir] = to
				rel = to + "/" + path.Base(rel)
			}
		}
		n.Path = dest + "/" + rel
		if err := n.Validate(); err != nil {
			problems = append(problems, err)
			continue
		}
		tx.Put(n)
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			folders[d] = true
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %w", sp.label(KnowledgeDir), &store.TreeError{Problems: problems})
	}
	res.Imported = len(staged)
	res.Renamed = []Renamed{}
	for _, from := range slices.Sorted(maps.Keys(renamed)) {
		res.Renamed = append(res.Renamed, Renamed{From: from, To: renamed[from]})
	}
	unknown := map[string]bool{}
	for _, n := range staged {
		for _, e := range append(slices.Clone(n.RelatesTo), n.DependsOn...) {
			if _, ok := tx.Resolve(e); !ok {
				unknown[e] = true
			}
		}
	}

	// Leaves of the tree that link to an incoming id had no target until
	// now; their Related sections get the real paths (the transaction
	// leaves those whose bytes do not change).
	for _, c := range t.Leaves {
		links := slices.ContainsFunc(c.RelatesTo, func(id string) bool { return incoming[store.IDKey(id)] }) ||
			slices.ContainsFunc(c.DependsOn, func(id string) bool { return incoming[store.IDKey(id)] })
		if !links {
			continue
		}
		n, err := tx.LeafAt(c.Path)
		if err != nil {
			return err
		}
		tx.Put(n)
	}

	// Folder summaries: the pack's, under the new folder, replace whatever
	// the tree had recorded there.
	for key := range summaries {
		if key == dest || strings.HasPrefix(key, dest+"/") {
			delete(summaries, key)
		}
	}
	for key, s := range packSummaries {
		if key = node.MakeableFolder(key); folders[key] {
			summaries[dest+"/"+key] = s
			res.FolderSummaries++
		}
	}
	summaries[dest] = strings.Join(strings.Fields(sp.manifest.Summary), " ")
	res.FolderSummaries++
	summaryData, err := store.RenderSummaries(summaries)
	if err != nil {
		return err
	}
	tx.WriteFile("FOLDER_SUMMARIES.md", summaryData)
	for e := range unknown {
		res.UnknownEdges = append(res.UnknownEdges, e)
	}
	slices.Sort(res.UnknownEdges)
	return nil
}

// parallel runs fn(0..n-1) on up to writeConcurrency goroutines.
func parallel(n int, fn func(i int)) { workpool.Run(writeConcurrency, n, fn) }
