package index

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/store"
)

// FileName is the database file inside a branch's folder.
const FileName = "index.db"

// BranchesDir is the folder holding one folder per branch.
func BranchesDir(k *store.KB) string { return filepath.Join(k.StateDir(), "branches") }

// Path returns the index file of a branch.
func Path(k *store.KB, branch string) string {
	return filepath.Join(BranchesDir(k), EncodeBranch(branch), FileName)
}

// maxFolder is the longest folder name EncodeBranch gives: what file
// systems take (255 bytes), so every name that fitted keeps its folder.
// git allows each part of a branch name (between its slashes) as long,
// and the encoding joins the parts and writes each byte outside ASCII as
// three.
const maxFolder = 255

// shortMark separates a shortened folder name's prefix from its hash; the
// encoding never writes it (it would be %7E).
const shortMark = "~"

// EncodeBranch turns a branch name into a folder name: ASCII letters,
// digits, '-', '_' and '.' (except a leading '.') are kept, every other
// byte becomes %XX. DecodeBranch reverses it. A name whose encoding is
// longer than maxFolder gets the encoding's beginning, shortMark and a
// hash of the whole name, which DecodeBranch does not reverse.
func EncodeBranch(branch string) string {
	enc := encodeBranch(branch)
	if len(enc) <= maxFolder {
		return enc
	}
	sum := sha256.Sum256([]byte(branch))
	tail := shortMark + hex.EncodeToString(sum[:12])
	cut := maxFolder - len(tail)
	for cut > 0 && (enc[cut-1] == '%' || cut > 1 && enc[cut-2] == '%') {
		cut-- // not inside a %XX
	}
	return enc[:cut] + tail
}

func encodeBranch(branch string) string {
	var b strings.Builder
	for i := 0; i < len(branch); i++ {
		c := branch[i]
		keep := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' && i > 0
		if keep {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// shortened reports whether folder is a name EncodeBranch shortened, and
// returns the beginning of the branch name it keeps.
func shortened(folder string) (string, bool) {
	prefix, hash, ok := strings.Cut(folder, shortMark)
	if !ok || len(hash) != 24 || strings.Trim(hash, "0123456789abcdef") != "" {
		return "", false
	}
	name, ok := decodeBranch(prefix)
	return name, ok || prefix == ""
}

// DecodeBranch reverses EncodeBranch; ok is false for a name EncodeBranch
// cannot have produced, or that it shortened.
func DecodeBranch(folder string) (string, bool) {
	name, ok := decodeBranch(folder)
	if !ok || name == "" || EncodeBranch(name) != folder {
		return "", false
	}
	return name, true
}

func decodeBranch(folder string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(folder); i++ {
		c := folder[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(folder) {
			return "", false
		}
		var v byte
		for _, h := range folder[i+1 : i+3] {
			switch {
			case h >= '0' && h <= '9':
				v = v<<4 | byte(h-'0')
			case h >= 'A' && h <= 'F':
				v = v<<4 | byte(h-'A'+10)
			default:
				return "", false
			}
		}
		b.WriteByte(v)
		i += 2
	}
	return b.String(), true
}

// DetachedHEAD names the index of a detached HEAD (a rebase, a bisect, a
// checkout of a commit): one index whatever the commit, which git allows
// no branch to be named. Named after the commit, as it once was, a
// detached HEAD that moves (kk serve committing on it) made an index per
// commit.
const DetachedHEAD = "HEAD"

// CurrentBranch returns the branch whose index commands use: the checked
// out branch of the KB's repository, DetachedHEAD when HEAD is detached,
// or the default branch when the KB is not in a git work tree.
func CurrentBranch(ctx context.Context, k *store.KB) (string, error) {
	return CurrentBranchWith(ctx, k, k.LoadConfig)
}

// CurrentBranchWith is CurrentBranch for a caller that reads k's config
// itself: config is called when the branch depends on it.
func CurrentBranchWith(ctx context.Context, k *store.KB, config func() (store.Config, error)) (string, error) {
	if b, ok := gitx.HeadBranch(k.Root); ok {
		return b, nil
	}
	if gitx.NoRepository(k.Root) {
		cfg, err := config()
		if err != nil {
			return "", err
		}
		return cmp.Or(cfg.DefaultBranch, "main"), nil
	}
	if !gitx.InWorkTree(ctx, k.Root) {
		cfg, err := config()
		if err != nil {
			return "", err
		}
		return gitx.DefaultBranch(ctx, k.Root, cfg.DefaultBranch), nil
	}
	out, err := gitx.Read(ctx, k.Root, "symbolic-ref", "--short", "-q", "HEAD")
	if name := strings.TrimSpace(string(out)); err == nil && name != "" {
		return name, nil
	}
	if _, err := gitx.Read(ctx, k.Root, "rev-parse", "--verify", "-q", "HEAD"); err != nil {
		return "", fmt.Errorf("finding the current branch: %w", err)
	}
	return DetachedHEAD, nil
}

// DefaultBranch returns config defaultBranch, else the branch origin/HEAD
// names, else "main".
func DefaultBranch(ctx context.Context, k *store.KB) (string, error) {
	cfg, err := k.LoadConfig()
	if err != nil {
		return "", err
	}
	return gitx.DefaultBranch(ctx, k.Root, cfg.DefaultBranch), nil
}

// Open opens a branch's index and syncs it with the tree and with the
// extractors config.yaml asks for (extract.FromConfig). When the branch
// has no index yet, the default branch's index (when there is one) is
// copied first, so that the sync only handles what differs; after that the
// two evolve independently.
func Open(ctx context.Context, k *store.KB, branch string) (*DB, Stats, error) {
	if branch == "" {
		return nil, Stats{}, errors.New("opening the index: empty branch name")
	}
	cfg, err := k.LoadConfig()
	if err != nil {
		return nil, Stats{}, err
	}
	path := Path(k, branch)
	ex := ExtractionWith(k, cfg)
	db, err := openBranch(ctx, k, branch, path, func() (store.Config, error) { return cfg, nil })
	if err != nil {
		return nil, Stats{}, err
	}
	db.kb = k
	if err := db.useConfiguredEmbedder(cfg); err != nil {
		_ = db.Close()
		return nil, Stats{}, err
	}
	st, err := db.SyncWith(ctx, k.NodesDir(), ex)
	if err != nil {
		_ = db.Close()
		return nil, st, err
	}
	return db, st, nil
}

// seedFromDefault copies the default branch's index (when there is one)
// to path, the missing index of branch.
func seedFromDefault(ctx context.Context, k *store.KB, branch, path string, config func() (store.Config, error)) error {
	cfg, err := config()
	if err != nil {
		return err
	}
	def := gitx.DefaultBranch(ctx, k.Root, cfg.DefaultBranch)
	if def == branch {
		return nil
	}
	return copyIndex(ctx, Path(k, def), path)
}

// Sync opens the branch's index (copying the default branch's on first
// use), syncs it and closes it.
func Sync(ctx context.Context, k *store.KB, branch string) (Stats, error) {
	// A sync is asked for to keep the index: one that cannot be kept is a
	// failure, not a success that wrote nothing (see openBranch).
	if err := writableIndex(Path(k, branch)); err != nil {
		return Stats{}, fmt.Errorf("syncing the index of branch %s: %w", branch, err)
	}
	db, st, err := Open(ctx, k, branch)
	if err != nil {
		return st, err
	}
	return st, db.Close()
}

// SyncEmbeddings computes the vectors of every node of the branch's index
// whose text or model changed (see RefreshEmbeddings), when config.yaml
// names an embedding provider; configured reports whether it does. The
// index is not synced first.
func SyncEmbeddings(ctx context.Context, k *store.KB, branch string) (done int, configured bool, err error) {
	e, minSim, err := EmbedderFor(k)
	if err != nil || e == nil {
		return 0, false, err
	}
	db, err := openFile(ctx, Path(k, branch), branch)
	if err != nil {
		return 0, true, err
	}
	defer func() { _ = db.Close() }()
	db.SetEmbedder(e, minSim)
	done, _, err = db.RefreshEmbeddings(ctx, 0)
	return done, true, err
}

// copyIndex writes a consistent snapshot of the index at from (if it
// exists) to to. The snapshot goes to a temporary file that is then linked
// into place, so a concurrent first use of the same branch never sees a
// partial copy and never replaces an index already in use.
func copyIndex(ctx context.Context, from, to string) error {
	if _, err := os.Stat(from); err != nil {
		return nil // nothing to copy: the sync builds the index from scratch
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return fmt.Errorf("creating the index folder: %w", err)
	}
	src, err := openFile(ctx, from, "")
	if err != nil {
		return err
	}
	defer func() { _ = src.Close() }()
	tmp := fmt.Sprintf("%s.copy-%d", to, os.Getpid())
	_ = os.Remove(tmp)
	defer func() { _ = os.Remove(tmp) }()
	if _, err := src.w.ExecContext(ctx, `VACUUM INTO ?`, tmp); err != nil {
		return fmt.Errorf("copying index %s: %w", from, err)
	}
	if err := os.Link(tmp, to); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("copying index %s: %w", from, err)
	}
	return nil
}

// GCResult lists the branch indexes GC removed and kept.
type GCResult struct {
	Removed []string `json:"removed"`
	Kept    []string `json:"kept"`
}

// GC deletes the index of every branch that no longer exists locally. The
// current branch (even unborn or detached) and the default branch are
// always kept; outside a git work tree only they are. Folders whose names kk cannot have written are left alone.
func GC(ctx context.Context, k *store.KB) (*GCResult, error) {
	res := &GCResult{Removed: []string{}, Kept: []string{}}
	entries, err := os.ReadDir(BranchesDir(k))
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing branch indexes: %w", err)
	}
	// Outside a git work tree there are no branches to compare with: only
	// the current (default) branch's index is kept.
	var branches []string
	if gitx.InWorkTree(ctx, k.Root) {
		if branches, err = gitx.LocalBranches(ctx, k.Root); err != nil {
			return nil, err
		}
	}
	keep := map[string]bool{}
	for _, b := range branches {
		keep[b] = true
	}
	cur, err := CurrentBranch(ctx, k)
	if err != nil {
		return nil, err
	}
	def, err := DefaultBranch(ctx, k)
	if err != nil {
		return nil, err
	}
	keep[cur], keep[def] = true, true
	kept := map[string]string{} // folder: branch
	for b := range keep {
		kept[EncodeBranch(b)] = b
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if b, ok := kept[e.Name()]; ok {
			res.Kept = append(res.Kept, b)
			continue
		}
		name, ok := DecodeBranch(e.Name())
		if !ok {
			// A shortened name is that of a branch whose name began so.
			prefix, short := shortened(e.Name())
			if !short {
				continue
			}
			name = prefix + "…"
		}
		if err := os.RemoveAll(filepath.Join(BranchesDir(k), e.Name())); err != nil {
			return res, fmt.Errorf("removing the index of branch %s: %w", name, err)
		}
		res.Removed = append(res.Removed, name)
	}
	slices.Sort(res.Removed)
	slices.Sort(res.Kept)
	return res, nil
}

// Compact rebuilds the database file without free pages (VACUUM) and
// truncates its write-ahead log. It returns the file size before and after.
func (db *DB) Compact(ctx context.Context) (before, after int64, err error) {
	before = fileSize(db.Path)
	if _, err := db.w.ExecContext(ctx, `VACUUM`); err != nil {
		return before, before, fmt.Errorf("compacting index %s: %w", db.Path, err)
	}
	if _, err := db.w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return before, before, fmt.Errorf("compacting index %s: %w", db.Path, err)
	}
	return before, fileSize(db.Path), nil
}

// Compact vacuums the index of a branch (when it exists).
func Compact(ctx context.Context, k *store.KB, branch string) (before, after int64, err error) {
	path := Path(k, branch)
	if _, err := os.Stat(path); err != nil {
		return 0, 0, fmt.Errorf("branch %s has no index (run a sync first)", branch)
	}
	db, err := openFile(ctx, path, branch)
	if err != nil {
		return 0, 0, err
	}
	before, after, err = db.Compact(ctx)
	return before, after, errors.Join(err, db.Close())
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
