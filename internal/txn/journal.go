package txn

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/progress"
	"github.com/kk-project/kk/internal/store"
)

// The journal of a transaction holds the original content of every file
// the changeset touches. It is written whole and made durable before the
// first file is replaced, and removed once the changeset is recorded: that
// removal is the commit. A journal found later belongs to a writer that
// died in between, and is rolled back. A journal still being written has a
// .tmp name; it was never used, and is removed.

const journalMagic = "kk-journal 1"

// change is one file of a changeset, relative to .ai/kenkeep.
type change struct {
	Path    string `json:"path"`
	Remove  bool   `json:"remove,omitempty"`
	Existed bool   `json:"existed"`
	// Backup names, in the journal's folder, a hard link to the file as
	// it was (a large one: see linkMin), kept instead of its content.
	Backup string `json:"backup,omitempty"`
	// Generated marks a generated index file, which an undo of kept
	// originals generates again instead of putting back.
	Generated bool `json:"generated,omitempty"`
	// Sum is the sha256 (hex) of Data, for a change that writes: a
	// rollback puts a file back only while it still holds what the
	// changeset wrote (see rollback). Journals of kk before it have none.
	Sum  string `json:"sum,omitempty"`
	Data []byte `json:"-"` // the new content
	Orig []byte `json:"-"` // the content before, when Existed and not Backup
	// large is set by prepare for an existing file of linkMin bytes or
	// more, whose content was not read.
	large bool
	// origStat is the file's stat as prepare found it (an existing
	// file): a large one's original is told by its inode, size and
	// modification time (see unchangedSince).
	origStat fs.FileInfo
}

// linkMin is the size from which a changed file's original is kept as a
// hard link in the journal's folder instead of copied into the journal:
// GRAPH.md is megabytes at 10,000 leaves, and every write changes it.
// The link costs a directory entry; the file, replaced by rename, keeps
// its old content under the link until the changeset is recorded.
const linkMin = 64 << 10

// backupSuffix ends the names of the journal's hard links.
const backupSuffix = ".orig"

type journal struct {
	Changeset string   `json:"changeset"`
	Audit     string   `json:"audit"`      // the branch's audit log
	AuditSize int64    `json:"audit_size"` // its size before (-1: absent)
	Changes   []change `json:"-"`
}

// JournalDir is where the journals of running (or killed) transactions are.
func JournalDir(k *store.KB) string { return filepath.Join(k.StateDir(), "txn") }

// writeJournal writes j durably in the journal folder and returns its
// path. `git clean -fdx` (or -fdX) removes the folder whenever a person
// runs it: the write then starts over in a new one (store.InStateFolder),
// nothing of the changeset having been applied yet.
func writeJournal(ctx context.Context, k *store.KB, j *journal) (string, error) {
	dir := JournalDir(k)
	path := filepath.Join(dir, j.Changeset+".journal")
	err := store.InStateFolder(dir, func() error { return writeJournalOnce(ctx, k, dir, path, j) })
	if err != nil && k.StateNotWritable(err) {
		// The first thing a write puts under .state/: a read-only
		// checkout or mount fails here, and the person needs the fix.
		return "", fmt.Errorf("%w; %s", err, k.StateHint())
	}
	if err != nil {
		return "", err
	}
	return path, nil
}

func writeJournalOnce(ctx context.Context, k *store.KB, dir, path string, j *journal) error {
	at(ctx, "journal")
	// Large originals: a hard link each, made before the journal that
	// names it (a link without its journal is a leftover, removed).
	for i := range j.Changes {
		c := &j.Changes[i]
		if !c.large {
			continue
		}
		c.Backup, c.Orig = "", nil
		abs := filepath.Join(k.Dir, filepath.FromSlash(c.Path))
		name := fmt.Sprintf("%s.%d%s", j.Changeset, i, backupSuffix)
		if err := os.Link(abs, filepath.Join(dir, name)); err == nil {
			c.Backup = name
			continue
		}
		// No hard links here: the content goes into the journal.
		orig, err := os.ReadFile(abs)
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		c.Orig = orig
	}
	return writeJournalFile(path, j)
}

// writeJournalFile writes j to path (through a temporary file, synced,
// then renamed, its folder synced).
func writeJournalFile(path string, j *journal) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	// Written through a buffer: the original contents (GRAPH.md is
	// megabytes) go to the file without being gathered in memory first.
	b := bufio.NewWriterSize(f, 64<<10)
	head, _ := json.Marshal(j)
	b.WriteString(journalMagic + "\n")
	b.Write(head)
	b.WriteByte('\n')
	for _, c := range j.Changes {
		line, _ := json.Marshal(struct {
			change
			Size int `json:"size"`
		}{c, len(c.Orig)})
		b.Write(line)
		b.WriteByte('\n')
		b.Write(c.Orig)
		b.WriteByte('\n')
	}
	b.WriteString("end\n")
	werr := b.Flush()
	serr := f.Sync()
	if err := errors.Join(werr, serr, f.Close()); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("journal %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("journal: %w", err)
	}
	return atomicfile.SyncDir(filepath.Dir(path))
}

func readJournal(path string) (*journal, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := bufio.NewReader(bytes.NewReader(data))
	bad := func(what string) error { return fmt.Errorf("journal %s is damaged (%s)", path, what) }
	line, err := r.ReadString('\n')
	if err != nil || strings.TrimSuffix(line, "\n") != journalMagic {
		return nil, bad("no header")
	}
	line, err = r.ReadString('\n')
	if err != nil {
		return nil, bad("no record")
	}
	j := &journal{}
	if err := json.Unmarshal([]byte(line), j); err != nil {
		return nil, bad(err.Error())
	}
	for {
		line, err = r.ReadString('\n')
		if err != nil {
			return nil, bad("no end")
		}
		if line == "end\n" {
			return j, nil
		}
		var c struct {
			change
			Size int `json:"size"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil || c.Size < 0 {
			return nil, bad("entry")
		}
		c.change.Orig = make([]byte, c.Size)
		if _, err := io.ReadFull(r, c.change.Orig); err != nil {
			return nil, bad("short entry")
		}
		if nl, err := r.ReadByte(); err != nil || nl != '\n' {
			return nil, bad("entry end")
		}
		j.Changes = append(j.Changes, c.change)
	}
}

// removeJournal removes a journal, which commits its changeset (or ends
// its undo), then its hard links.
func removeJournal(path string, j *journal) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("journal: %w", err)
	}
	if err := atomicfile.SyncDir(filepath.Dir(path)); err != nil {
		// The journal's folder is gone (`git clean -fdx` or -fdX removed
		// .state while the changeset ran): the journal went with it, so
		// the changeset is committed, as removing it would have made it.
		if _, serr := os.Stat(filepath.Dir(path)); !errors.Is(serr, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if j != nil {
		for _, c := range j.Changes {
			if c.Backup != "" {
				_ = os.Remove(filepath.Join(filepath.Dir(path), c.Backup))
			}
		}
	}
	return nil
}

// keptDir holds the journals of committed changesets whose originals
// are kept (Tx.KeepOriginals), as <name>.journal; their hard links stay
// in the journal folder.
func keptDir(k *store.KB) string { return filepath.Join(JournalDir(k), "kept") }

func keptPath(k *store.KB, name string) (string, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("txn: %q cannot name kept originals", name)
	}
	return filepath.Join(keptDir(k), name+".journal"), nil
}

// keepJournal commits a changeset by moving its journal, j at jpath,
// among the kept ones (one rename), instead of removing it. When git clean
// removed the journal folder meanwhile (the changeset's files are all in
// place), the kept journal is written from j instead: the originals it
// holds can still undo the changeset (a large original, whose hard link
// went with the folder, cannot: see RestoreOriginals).
func keepJournal(k *store.KB, jpath string, j *journal, name string) error {
	dst, err := keptPath(k, name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(keptDir(k), 0o755); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := os.Rename(jpath, dst); err != nil {
		if _, serr := os.Stat(jpath); !errors.Is(serr, fs.ErrNotExist) {
			return fmt.Errorf("journal: %w", err)
		}
		return store.InStateFolder(keptDir(k), func() error { return writeJournalFile(dst, j) })
	}
	// The journal's folder is synced, as a removal would be: that is the
	// commit. (A rename is one change of the file system's journal, both
	// folders at once; a kept journal lost to a power cut only makes the
	// next start unable to undo the job, which is then run again.)
	return atomicfile.SyncDir(filepath.Dir(jpath))
}

// HasOriginals reports whether originals are kept under name.
func HasOriginals(k *store.KB, name string) bool {
	p, err := keptPath(k, name)
	if err != nil {
		return false
	}
	_, err = os.Stat(p)
	return err == nil
}

// KeptOriginals lists the names originals are kept under.
func KeptOriginals(k *store.KB) []string {
	ents, _ := os.ReadDir(keptDir(k))
	var names []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".journal"); ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// DropOriginals forgets the originals kept under name (the step they
// were kept for succeeded): the kept journal goes, then its hard links.
// Dropping what is not kept does nothing.
func DropOriginals(k *store.KB, name string) error {
	p, err := keptPath(k, name)
	if err != nil {
		return err
	}
	j, err := readJournal(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		// A damaged kept journal is of no use to anyone: it goes.
		j = nil
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("journal: %w", err)
	}
	if j != nil {
		for _, c := range j.Changes {
			if c.Backup != "" {
				_ = os.Remove(filepath.Join(JournalDir(k), c.Backup))
			}
		}
	}
	return nil
}

// keptChangesets returns the changesets of the kept journals, whose hard
// links in the journal folder are not leftovers.
func keptChangesets(k *store.KB) map[string]bool {
	out := map[string]bool{}
	for _, name := range KeptOriginals(k) {
		f, err := os.Open(filepath.Join(keptDir(k), name+".journal"))
		if err != nil {
			continue
		}
		r := bufio.NewReader(f)
		if line, err := r.ReadString('\n'); err == nil && strings.TrimSuffix(line, "\n") == journalMagic {
			var j journal
			if line, err := r.ReadString('\n'); err == nil && json.Unmarshal([]byte(line), &j) == nil {
				out[j.Changeset] = true
			}
		}
		_ = f.Close()
	}
	return out
}

// keptBackup reports whether name, a hard link in the journal folder,
// belongs to a kept journal.
func keptBackup(kept map[string]bool, name string) bool {
	cs, _, ok := strings.Cut(name, ".")
	return ok && kept[cs]
}

// writeConcurrency is how many files apply replaces at once: their fsyncs
// overlap, which matters for changesets of many files (a migration, a
// cold rebuild).
const writeConcurrency = 8

// apply makes the changes: every write first (several at once), then every
// removal, pruning the folders a removal empties.
func apply(ctx context.Context, k *store.KB, changes []change) error {
	var writes []change
	for _, c := range changes {
		if !c.Remove {
			writes = append(writes, c)
		}
	}
	fault := faultsOf(ctx).Write
	task := progress.Start(ctx, "writing files", len(writes))
	defer task.Done()
	errs := make([]error, len(writes))
	store.ParallelN(writeConcurrency, len(writes), func(i int) {
		defer task.Add(1)
		abs := filepath.Join(k.Dir, filepath.FromSlash(writes[i].Path))
		if fault != nil {
			if errs[i] = fault(writes[i].Path); errs[i] != nil {
				return
			}
		}
		if errs[i] = unchangedSince(k, abs, writes[i]); errs[i] != nil {
			return
		}
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			errs[i] = err
			return
		}
		errs[i] = atomicfile.Write(abs, writes[i].Data, 0o644)
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, c := range changes {
		if !c.Remove {
			continue
		}
		at(ctx, "remove")
		abs := filepath.Join(k.Dir, filepath.FromSlash(c.Path))
		if err := unchangedSince(k, abs, c); err != nil {
			return err
		}
		if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		pruneEmpty(k, c.Path)
	}
	return nil
}

// ErrChangedMeanwhile is the cause (errors.Is) of a changeset that fails
// because a file it was about to replace or remove changed after the
// transaction read it: another program than kk (a person's editor, a
// script) wrote it meanwhile, for the writer lock binds only kk.
var ErrChangedMeanwhile = errors.New("changed while kk was writing")

// unchangedSince checks, just before apply replaces or removes the file at
// abs, that it still is what the transaction read under the writer lock
// and journaled: its original bytes (or, a large one, still the inode the
// journal's hard link keeps), or no file, for one the changeset creates.
// A person's write that landed since would otherwise be overwritten with
// the changeset's bytes, and lost: the changeset fails instead, its
// rollback leaves the person's file as they wrote it, and the command can
// be run again. What is left is the moment between this check and the
// rename, which only a lock other programs honour could close.
func unchangedSince(k *store.KB, abs string, c change) error {
	changed := func() error {
		return fmt.Errorf("%s %w (another program wrote it after kk read it); nothing was written, run the command again",
			k.Rel(abs), ErrChangedMeanwhile)
	}
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if c.Existed && !c.Remove {
			return changed()
		}
		return nil
	case err != nil:
		return err
	case !c.Existed:
		return changed()
	case c.Backup != "":
		// Written in place, the inode stays: its size and time change.
		b, err := os.Lstat(filepath.Join(JournalDir(k), c.Backup))
		o := c.origStat
		if err != nil || !os.SameFile(fi, b) || o == nil || fi.Size() != o.Size() || !fi.ModTime().Equal(o.ModTime()) {
			return changed()
		}
		return nil
	case int64(len(c.Orig)) != fi.Size():
		return changed()
	}
	cur, err := os.ReadFile(abs)
	if err != nil {
		return err
	}
	if !bytes.Equal(cur, c.Orig) {
		return changed()
	}
	return nil
}

// pruneEmpty removes the folders above rel that are now empty, up to (not
// including) nodes/ or conflicts/.
func pruneEmpty(k *store.KB, rel string) {
	if !under(rel) {
		return
	}
	top := rel[:strings.IndexByte(rel, '/')]
	for d := filepath.ToSlash(filepath.Dir(rel)); d != top && d != "." && d != ""; d = filepath.ToSlash(filepath.Dir(d)) {
		if os.Remove(filepath.Join(k.Dir, filepath.FromSlash(d))) != nil {
			return
		}
	}
}

// rollback puts every file of the journal back as it was, and the audit
// log back to its length before, where nothing else has changed them
// since: a file is put back (or removed, if the changeset created it)
// only while it holds what the changeset wrote, or, for a removal, while
// it is still gone. A file that holds anything else was changed after the
// killed writer by someone else (a person's edit, a git checkout of
// another branch, a CI cache that restored an old journal into a newer
// tree) and is left as it is: a rollback never overwrites nor deletes
// work that is not the changeset's. So is the audit log when records of
// other changesets follow the one of the journal.
//
// The files the changeset created go first, then the others are put back
// (each group last change first): putting a file back writes a temporary
// copy beside it, which needs room on the disk, and a write that failed
// because the disk is full is undone only if the new notes' room is
// given back first. at, when set, is called at "created removed", between
// the two, where a test stops the rollback as a kill would.
func rollback(k *store.KB, j *journal, at func(point string)) error {
	var errs []error
	for _, created := range []bool{true, false} {
		for _, c := range slices.Backward(j.Changes) {
			if c.Existed == created {
				continue
			}
			if err := rollbackChange(k, c); err != nil {
				errs = append(errs, err)
			}
		}
		if created && at != nil {
			at("created removed")
		}
	}
	if j.Audit != "" {
		if size := fileSize(j.Audit); size >= 0 && size > max(j.AuditSize, 0) && onlyRecordsOf(j.Audit, max(j.AuditSize, 0), j.Changeset) {
			if err := os.Truncate(j.Audit, max(j.AuditSize, 0)); err != nil {
				errs = append(errs, fmt.Errorf("audit log: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// rollbackChange undoes one change of a journal, as rollback says.
func rollbackChange(k *store.KB, c change) error {
	abs := filepath.Join(k.Dir, filepath.FromSlash(c.Path))
	switch ours, err := holdsChange(abs, JournalDir(k), c); {
	case err != nil:
		return err
	case !ours:
		if c.Backup != "" {
			_ = os.Remove(filepath.Join(JournalDir(k), c.Backup))
		}
		return nil
	}
	if !c.Existed {
		if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		pruneEmpty(k, c.Path)
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return err
	}
	if c.Backup != "" {
		// The old file comes back whole by one rename. A link that is
		// gone was put back by an earlier undo.
		if err := os.Rename(filepath.Join(JournalDir(k), c.Backup), abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if cur, err := os.ReadFile(abs); err == nil && bytes.Equal(cur, c.Orig) {
		return nil
	}
	return atomicfile.Write(abs, c.Orig, 0o644)
}

// holdsChange reports whether the file at abs is as the change c left
// it, or as it was before, so that a rollback may put it back: it
// holds the bytes the changeset wrote (their sum), or its original bytes
// (a change not yet made), or, for a removal or a file the changeset
// created, it is gone. A file changed since by anything else is not the
// changeset's to put back. A journal without sums (written by an older
// kk) is rolled back as it always was. jdir is the journal's folder,
// which holds its hard links.
func holdsChange(abs, jdir string, c change) (bool, error) {
	if !c.Remove && c.Sum == "" {
		return true, nil
	}
	f, err := os.Open(abs)
	if errors.Is(err, fs.ErrNotExist) {
		// Gone: as the changeset left it for a removal, as it was for a
		// created file. A file that was there and that a write replaced
		// is never gone: someone removed it since, and it stays removed.
		return c.Remove || !c.Existed, nil
	}
	if err != nil {
		return false, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if !fi.Mode().IsRegular() {
		return false, nil
	}
	if c.Backup != "" {
		// Not yet replaced: the file is still the original's inode.
		if bfi, err := os.Stat(filepath.Join(jdir, c.Backup)); err == nil && os.SameFile(fi, bfi) {
			return true, nil
		}
	}
	h := sha256.New()
	var cur []byte
	if c.Existed && c.Backup == "" {
		// Small enough to have its original in the journal: read whole.
		if cur, err = io.ReadAll(f); err != nil {
			return false, err
		}
		if bytes.Equal(cur, c.Orig) {
			return true, nil
		}
		h.Write(cur)
	} else if _, err := io.Copy(h, f); err != nil {
		return false, err
	}
	return !c.Remove && hex.EncodeToString(h.Sum(nil)) == c.Sum, nil
}

// onlyRecordsOf reports whether the audit log at path holds, from offset
// on, nothing but records of changeset (and at most an unfinished last
// line): what a writer of that changeset appended before it was killed.
func onlyRecordsOf(path string, offset int64, changeset string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	tail, err := io.ReadAll(io.NewSectionReader(f, offset, 1<<62))
	if err != nil {
		return false
	}
	for len(tail) > 0 {
		line, rest, whole := bytes.Cut(tail, []byte("\n"))
		if !whole {
			return true // a record cut short by the kill
		}
		var rec struct {
			Changeset string `json:"changeset"`
		}
		if json.Unmarshal(line, &rec) != nil || rec.Changeset != changeset {
			return false
		}
		tail = rest
	}
	return true
}

// Leftovers lists what killed writers left behind, relative to the
// repository root: journals of changesets that were never committed (to
// be rolled back), journals never finished, temporary files of atomic
// writes, and pack-import staging folders of processes that are gone.
func Leftovers(k *store.KB) ([]string, error) { return leftovers(k, k.NodesDir(), k.ConflictsDir()) }

// leftovers is Leftovers, walking only the folders of walk (nodes/,
// conflicts/) for temporary files.
func leftovers(k *store.KB, walk ...string) ([]string, error) {
	var out []string
	rel := func(p string) string { return k.Rel(p) }
	if ents, err := os.ReadDir(JournalDir(k)); err == nil {
		var kept map[string]bool
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), backupSuffix) {
				if kept == nil {
					kept = keptChangesets(k)
				}
				if keptBackup(kept, e.Name()) {
					continue
				}
			}
			if strings.HasSuffix(e.Name(), ".journal") || strings.HasSuffix(e.Name(), ".journal.tmp") || strings.HasSuffix(e.Name(), backupSuffix) {
				out = append(out, rel(filepath.Join(JournalDir(k), e.Name())))
			}
		}
	}
	for _, dir := range walk {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if d.IsDir() && p != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if !d.IsDir() && store.IsTempName(d.Name()) {
				out = append(out, rel(p))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if ents, err := os.ReadDir(k.Dir); err == nil {
		for _, e := range ents {
			if !e.IsDir() && store.IsTempName(e.Name()) {
				out = append(out, rel(filepath.Join(k.Dir, e.Name())))
			}
		}
	}
	if ents, err := os.ReadDir(k.StateDir()); err == nil {
		for _, e := range ents {
			if e.IsDir() && strings.HasPrefix(e.Name(), StagingPrefix) && !stagingLive(e.Name()) {
				out = append(out, rel(filepath.Join(k.StateDir(), e.Name())))
			}
			if !e.IsDir() && store.IsTempName(e.Name()) {
				out = append(out, rel(filepath.Join(k.StateDir(), e.Name())))
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// recoverLocked finishes what killed writers left, under the writer lock:
// it rolls back every journal and removes the other leftovers. Only a
// transaction writes under nodes/ and conflicts/ (internal/layering holds
// every other package to that), and it writes its journal before its first
// temporary file there and removes it after its last rename, so a
// temporary file in the tree means a journal was left too: without one,
// the tree is not walked, and a write at 10k leaves does not pay for
// reading 400 folders. sweep walks conflicts/ anyway, and leaves nodes/
// to the transaction, whose sync lists its temporary files (Tx.sweep).
// Leftovers, for kk doctor, always walks both.
func recoverLocked(k *store.KB, sweep bool) error {
	return recoverAt(k, sweep, nil)
}

// recoverAt is recoverLocked; at, when set, is called at "rolled back"
// (every journal rolled back, the tree not swept) and "swept" (the
// temporary files removed, the journals not): points where a test stops
// the recovery as a kill would.
//
// The journals go last: a journal is what tells the next writer to walk
// the tree for temporary files, so one dropped before the walk (a kill
// between the two) left a temporary file no later write removed.
func recoverAt(k *store.KB, sweep bool, at func(point string)) error {
	ents, err := os.ReadDir(JournalDir(k))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	journals := slices.ContainsFunc(ents, func(e os.DirEntry) bool {
		return strings.HasSuffix(e.Name(), ".journal") || strings.HasSuffix(e.Name(), ".journal.tmp")
	})
	// Rolling back again what a killed recovery rolled back already
	// writes the same bytes again.
	type rolled struct {
		path string
		j    *journal
	}
	var done []rolled
	for _, e := range ents {
		p := filepath.Join(JournalDir(k), e.Name())
		if !strings.HasSuffix(e.Name(), ".journal") {
			continue
		}
		j, err := readJournal(p)
		if err != nil {
			return fmt.Errorf("%w; move it aside to continue (the changeset it names may be half-applied: check `git status`)", err)
		}
		if err := rollback(k, j, at); err != nil {
			return fmt.Errorf("rolling back the interrupted changeset %s: %w", j.Changeset, err)
		}
		done = append(done, rolled{p, j})
	}
	if at != nil {
		at("rolled back")
	}
	var walk []string
	switch {
	case journals:
		walk = []string{k.NodesDir(), k.ConflictsDir()}
	case sweep:
		walk = []string{k.ConflictsDir()}
	}
	left, err := leftovers(k, walk...)
	if err != nil {
		return err
	}
	for _, rel := range left {
		abs := filepath.Join(k.Root, filepath.FromSlash(rel))
		if strings.HasPrefix(filepath.Base(abs), StagingPrefix) {
			_ = os.RemoveAll(abs)
			continue
		}
		_ = os.Remove(abs)
	}
	if at != nil {
		at("swept")
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".journal.tmp") {
			_ = os.Remove(filepath.Join(JournalDir(k), e.Name()))
		}
	}
	for _, r := range done {
		if err := removeJournal(r.path, r.j); err != nil {
			return err
		}
	}
	// Hard links no journal names any more: a writer killed before it
	// wrote its journal, or after it removed it.
	var kept map[string]bool
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), backupSuffix) {
			if kept == nil {
				kept = keptChangesets(k)
			}
			if !keptBackup(kept, e.Name()) {
				_ = os.Remove(filepath.Join(JournalDir(k), e.Name()))
			}
		}
	}
	return nil
}

// Recover rolls back the changeset of a killed writer, if one is left and
// no writer is running: readers call it so that an interrupted changeset
// never stays visible. It costs one directory read when there is nothing
// to do. Temporary files are harmless to readers (the scanners skip them);
// the next write removes them. It reports whether it did anything.
func Recover(k *store.KB) (bool, error) {
	ents, err := os.ReadDir(JournalDir(k))
	if err != nil || !slices.ContainsFunc(ents, func(e os.DirEntry) bool { return strings.HasSuffix(e.Name(), ".journal") }) {
		return false, nil
	}
	l, err := k.WriterLock().TryAcquire("kk (recovery)")
	if err != nil || l == nil {
		return false, err // a writer is running: it recovers
	}
	defer func() { _ = l.Release() }()
	return true, recoverLocked(k, false)
}
