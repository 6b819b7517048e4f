package index

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/store"
)

// AuditFile is the name of a branch's audit log, next to its index.
const AuditFile = "audit.jsonl"

// AuditRecord is one applied changeset: who applied it, when, from where,
// and what it did.
type AuditRecord struct {
	Changeset string    `json:"changeset"`
	Actor     string    `json:"actor"`
	At        string    `json:"at"`
	Source    string    `json:"source"`
	Command   string    `json:"command,omitempty"`
	Branch    string    `json:"branch"`
	Ops       []AuditOp `json:"ops"`
}

// AuditOp is one operation of a changeset.
type AuditOp struct {
	Op     string `json:"op"`               // create, update, delete, add_edge, delete_edge, write, remove
	ID     string `json:"id"`               // the entity, or an edge's source
	Type   string `json:"type,omitempty"`   // entity or edge type
	To     string `json:"to,omitempty"`     // an edge's target
	Path   string `json:"path,omitempty"`   // the leaf written or removed, relative to nodes/
	Before int64  `json:"before,omitempty"` // version before the write
	After  int64  `json:"after,omitempty"`  // version after the write
	// Fields are the front matter keys (and "body") an update changed.
	Fields []string `json:"fields,omitempty"`
}

// AuditPath is the audit log of a branch.
func AuditPath(k *store.KB, branch string) string {
	return filepath.Join(BranchesDir(k), EncodeBranch(branch), AuditFile)
}

// AppendAudit appends one record to the branch's audit log. The caller
// holds the writer lock, so records never interleave; each record is one
// line written with a single write call and synced.
func AppendAudit(k *store.KB, branch string, rec AuditRecord) error {
	path := AuditPath(k, branch)
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	// git clean may remove the folder meanwhile (store.InStateFolder).
	return store.InStateFolder(filepath.Dir(path), func() error {
		// A log that is not a regular file (a named pipe) is refused at
		// once rather than waited on with the writer lock held.
		f, err := atomicfile.OpenAppend(path, 0o644)
		if err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
		_, werr := f.Write(append(line, '\n'))
		serr := f.Sync()
		if err := errors.Join(werr, serr, f.Close()); err != nil {
			return fmt.Errorf("audit log %s: %w", path, err)
		}
		return nil
	})
}

// ReadAudit returns the records of the branch's current audit log, oldest
// first (none when there is no log).
func ReadAudit(k *store.KB, branch string) ([]AuditRecord, error) {
	path := AuditPath(k, branch)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []AuditRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for line := 1; sc.Scan(); line++ {
		var rec AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, line, err)
		}
		out = append(out, rec)
	}
	return out, sc.Err()
}

// RotateAudit moves the branch's audit log aside as
// audit-<UTC time>.jsonl, so the next record starts a new log. It returns
// the new name of the old log ("" when there was nothing to rotate). The
// caller holds the writer lock.
func RotateAudit(k *store.KB, branch string, now time.Time) (string, error) {
	path := AuditPath(k, branch)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && fi.Size() == 0) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	dst := filepath.Join(filepath.Dir(path), "audit-"+now.UTC().Format("20060102T150405.000000000Z")+".jsonl")
	if err := os.Rename(path, dst); err != nil {
		return "", fmt.Errorf("rotating the audit log: %w", err)
	}
	return dst, nil
}
