package pack

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/checks"
	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// ExportOptions control Export.
type ExportOptions struct {
	// Manifest names the pack; its SchemaVersion is set to SchemaVersion.
	Manifest contracts.PackManifest
	// Out is where the pack goes: a file ending in .tar.gz or .tgz gets an
	// archive, anything else a folder.
	Out string
}

// ExportResult says what Export wrote.
type ExportResult struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Out is the folder or archive written (absolute).
	Out string `json:"out"`
	// Format is "dir" or "tar.gz".
	Format string `json:"format"`
	Leaves int    `json:"leaves"`
	// Folders counts the folders of knowledge/ that hold leaves, its top
	// included.
	Folders         int `json:"folders"`
	FolderSummaries int `json:"folder_summaries"`
	// MissingSummaries lists the folders (relative to knowledge/) that
	// have no summary.
	MissingSummaries []string `json:"missing_summaries"`
	// Redirects is set when nodes/.redirects.json was exported.
	Redirects bool `json:"redirects"`
}

// LintError is an export refused because the staged pack does not pass
// lint. Items holds the errors; files are named as in the tree.
type LintError struct {
	Items []checks.LintItem
}

func (e *LintError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the pack would not pass lint (%d error(s)); nothing was written:", len(e.Items))
	for _, it := range e.Items {
		fmt.Fprintf(&b, "\n  %s: %s [%s]", it.File, it.Message, it.Rule)
	}
	return b.String()
}

// archiveTime is the modification time of every archive entry, so that
// the same tree always gives the same archive.
var archiveTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// IsArchive reports whether out names an archive rather than a folder.
func IsArchive(out string) bool {
	return strings.HasSuffix(out, ".tar.gz") || strings.HasSuffix(out, ".tgz")
}

// packFiles are the entries of a pack folder that Export writes; other
// entries of an existing pack folder (a LICENSE, .git) are left alone.
var packFiles = []string{KnowledgeDir, SummariesFile, ReadmeFile, ManifestFile}

// Export writes the leaves of k as a pack: knowledge/ with the leaves,
// freshly generated index.md files and nodes/.redirects.json if there is
// one with entries; the summaries of the exported folders; the manifest; a README. The
// pack is put together and linted in a folder beside Out, and replaces
// Out only when it is complete, so a failed export leaves Out as it was.
// The same tree and manifest always give the same bytes.
func Export(ctx context.Context, k *store.KB, opts ExportOptions) (*ExportResult, error) {
	m := opts.Manifest
	m.SchemaVersion = SchemaVersion
	if err := ValidateManifest(m); err != nil {
		return nil, err
	}
	out, err := filepath.Abs(opts.Out)
	if err != nil {
		return nil, err
	}
	archive := IsArchive(out)
	if err := checkOut(k, out, archive); err != nil {
		return nil, err
	}
	t, err := index.ReadTree(ctx, k)
	if err == nil {
		err = t.Err() // a pack holds every leaf or none
	}
	if err != nil {
		return nil, err
	}
	if len(t.Leaves) == 0 {
		return nil, fmt.Errorf("nothing to export: %s holds no leaves", k.Rel(k.NodesDir()))
	}
	for _, n := range t.Leaves {
		if n.Format != node.SchemaVersion {
			return nil, fmt.Errorf("%w (first one: %s)", store.ErrNeedsMigration, k.Rel(k.NodePath(n.Path)))
		}
	}
	summaries, err := store.ReadSummaries(k.SummariesPath())
	if err != nil {
		return nil, err
	}

	parent := filepath.Dir(out)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(parent, ".kk-pack-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	res := &ExportResult{Name: m.Name, Version: m.Version, Out: out, Format: "dir", MissingSummaries: []string{}}
	if archive {
		res.Format = "tar.gz"
	}
	packDir, err := build(ctx, k, t, summaries, m, tmp, !archive, res)
	if err != nil {
		return nil, err
	}
	if archive {
		err = replaceArchive(packDir, out, "kenkeep-pack-"+m.Name)
	} else {
		err = replaceDir(packDir, out, tmp)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// checkOut refuses an output that would overwrite something that is not a
// pack, or that lies inside the knowledge base.
func checkOut(k *store.KB, out string, archive bool) error {
	if r, err := filepath.Rel(k.Dir, out); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return fmt.Errorf("output %s is inside the knowledge base (%s); write the pack somewhere else", out, store.DirName)
	}
	fi, err := os.Lstat(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case archive && !fi.Mode().IsRegular():
		return fmt.Errorf("output %s exists and is not a regular file", out)
	case archive:
		return nil
	case !fi.IsDir():
		return fmt.Errorf("output %s exists and is not a folder; name a folder, or a file ending in .tar.gz", out)
	}
	if _, err := os.Lstat(filepath.Join(out, ManifestFile)); err == nil {
		return nil
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("output folder %s exists, is not empty and holds no %s; kk replaces only a pack folder, so name a new or empty folder", out, ManifestFile)
	}
	return nil
}

// build puts the pack together in tmp/pack and returns that folder. The
// leaves are first laid out as a knowledge base in tmp/kb, where the index
// is generated and lint runs. durable asks for every file and folder to be
// flushed to disk, for a pack folder that is renamed into place; the files
// of an archive are only read back, and the leaves are hard-linked
// (a snapshot of the tree) where the file system allows it.
func build(ctx context.Context, k *store.KB, t *store.Tree, summaries store.Summaries, m contracts.PackManifest, tmp string, durable bool, res *ExportResult) (string, error) {
	put := func(p string, data []byte) error {
		if durable {
			return writeSynced(p, data)
		}
		return os.WriteFile(p, data, 0o644)
	}
	sk := store.New(filepath.Join(tmp, "kb"))
	if err := os.MkdirAll(sk.StateDir(), 0o755); err != nil {
		return "", err
	}
	if err := os.MkdirAll(sk.NodesDir(), 0o755); err != nil {
		return "", err
	}
	// The leaves, byte for byte.
	dirs := map[string]bool{}
	for _, n := range t.Leaves {
		for d := n.Dir(); d != "" && d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	dirList := make([]string, 0, len(dirs))
	for d := range dirs {
		dirList = append(dirList, d)
	}
	slices.Sort(dirList)
	for _, d := range dirList {
		if err := os.MkdirAll(sk.NodePath(d), 0o755); err != nil {
			return "", err
		}
	}
	errs := make([]error, len(t.Leaves))
	parallel(len(t.Leaves), func(i int) {
		rel := t.Leaves[i].Path
		if !durable && os.Link(k.NodePath(rel), sk.NodePath(rel)) == nil {
			return
		}
		data, err := os.ReadFile(k.NodePath(rel))
		if err != nil {
			errs[i] = err
			return
		}
		errs[i] = put(sk.NodePath(rel), data)
	})
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	switch data, err := os.ReadFile(k.RedirectsPath()); {
	case err == nil && emptyLedger(data):
		// kk init writes the ledger empty: a pack of the same notes
		// is the same pack whether a rename ever filled it or not
	case err == nil:
		if err := put(sk.RedirectsPath(), data); err != nil {
			return "", err
		}
		res.Redirects = true
	case !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	// The summaries of the folders that hold leaves; the pack's own folder
	// is summarised by the manifest.
	packSummaries := store.Summaries{}
	for d := range dirs {
		if s := summaries[d]; s != "" {
			packSummaries[d] = s
		}
	}
	res.FolderSummaries = len(packSummaries)
	data, err := store.RenderSummaries(packSummaries)
	if err != nil {
		return "", err
	}
	if err := put(sk.SummariesPath(), data); err != nil {
		return "", err
	}

	// Read the copy back, generate its index files, and lint it.
	st, err := sk.ReadTree(store.LoadOptions{})
	if err == nil {
		err = st.Err()
	}
	if err != nil {
		return "", fmt.Errorf("reading the staged copy of the tree: %w", err)
	}
	res.Leaves = len(st.Leaves)
	withRoot := store.Summaries{"": strings.Join(strings.Fields(m.Summary), " ")}
	for d, s := range packSummaries {
		withRoot[d] = s
	}
	gen, err := indexfiles.Generate(st, withRoot)
	if err != nil {
		return "", err
	}
	res.Folders = len(gen.Folders)
	res.MissingSummaries = append(res.MissingSummaries, gen.MissingSummaries...)
	names := make([]string, 0, len(gen.Files))
	for name := range gen.Files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := filepath.Join(sk.Dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := put(p, gen.Files[name]); err != nil {
			return "", err
		}
	}
	rep, err := checks.Lint(ctx, sk)
	if err != nil {
		return "", fmt.Errorf("linting the staged pack: %w", err)
	}
	if rep.Errors > 0 {
		var items []checks.LintItem
		for _, it := range rep.Items {
			if it.Level == checks.LintError {
				items = append(items, it)
			}
		}
		return "", &LintError{Items: items}
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}

	// Lay the pack out.
	packDir := filepath.Join(tmp, "pack")
	if err := os.Mkdir(packDir, 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(sk.NodesDir(), filepath.Join(packDir, KnowledgeDir)); err != nil {
		return "", err
	}
	if err := os.Rename(sk.SummariesPath(), filepath.Join(packDir, SummariesFile)); err != nil {
		return "", err
	}
	manifest, err := RenderManifest(m)
	if err != nil {
		return "", err
	}
	if err := put(filepath.Join(packDir, ManifestFile), manifest); err != nil {
		return "", err
	}
	if err := put(filepath.Join(packDir, ReadmeFile), renderReadme(m)); err != nil {
		return "", err
	}
	if durable {
		if err := syncDirs(packDir); err != nil {
			return "", err
		}
	}
	return packDir, nil
}

// syncDirs flushes every folder under root (root included) to disk.
func syncDirs(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return atomicfile.SyncDir(p)
	})
}

// writeSynced creates path with data and flushes it to disk, so that the
// folder it is later renamed into place with is complete.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// replaceDir moves the pack in packDir to out. A new or empty out is
// replaced by one rename. An existing pack folder keeps its other
// entries (a LICENSE, .git); each pack entry is swapped in by rename, the
// manifest last.
func replaceDir(packDir, out, tmp string) error {
	parent := filepath.Dir(out)
	fi, err := os.Lstat(out)
	if err == nil && fi.IsDir() {
		if _, err := os.Lstat(filepath.Join(out, ManifestFile)); errors.Is(err, fs.ErrNotExist) {
			// checkOut made sure it was empty.
			if err := os.Remove(out); err != nil {
				return fmt.Errorf("replacing %s: %w", out, err)
			}
		} else {
			old := filepath.Join(tmp, "old")
			if err := os.Mkdir(old, 0o755); err != nil {
				return err
			}
			for _, name := range packFiles {
				dst := filepath.Join(out, name)
				if _, err := os.Lstat(dst); err == nil {
					if err := os.Rename(dst, filepath.Join(old, name)); err != nil {
						return fmt.Errorf("replacing %s: %w", dst, err)
					}
				}
				if err := os.Rename(filepath.Join(packDir, name), dst); err != nil {
					return fmt.Errorf("replacing %s: %w", dst, err)
				}
			}
			return atomicfile.SyncDir(out)
		}
	}
	if err := os.Rename(packDir, out); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return atomicfile.SyncDir(parent)
}

// replaceArchive writes packDir as a .tar.gz (entries under top/) to a
// temporary file beside out and renames it over out.
func replaceArchive(packDir, out, top string) (err error) {
	dir := filepath.Dir(out)
	f, err := os.CreateTemp(dir, ".kk-pack-*.tar.gz")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if err = writeArchive(f, packDir, top); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), out); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return atomicfile.SyncDir(dir)
}

// writeArchive writes the folder dir as a deterministic gzip-compressed
// tar: entries in sorted order under top/, one fixed time, owner 0, modes
// 0755 and 0644, and a gzip header without name or time.
func writeArchive(w io.Writer, dir, top string) error {
	zw, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	var names []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if r == "." {
			return nil
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		name := filepath.ToSlash(r)
		if d.IsDir() {
			name += "/"
		}
		names = append(names, name)
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(names)
	if err := tw.WriteHeader(dirHeader(top + "/")); err != nil {
		return err
	}
	for _, name := range names {
		if strings.HasSuffix(name, "/") {
			if err := tw.WriteHeader(dirHeader(top + "/" + name)); err != nil {
				return err
			}
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return err
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: top + "/" + name, Mode: 0o644, Size: int64(len(data)), ModTime: archiveTime}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

func dirHeader(name string) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, ModTime: archiveTime}
}

// emptyLedger reports whether data is a redirect ledger without entries.
// One that does not parse is exported as it is, for the pack's lint to
// name.
func emptyLedger(data []byte) bool {
	r, err := store.ParseRedirects("nodes/.redirects.json", data)
	return err == nil && len(r) == 0
}
