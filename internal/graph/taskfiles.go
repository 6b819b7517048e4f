package graph

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/store"
)

// TaskFileUse is one context query that named a task file (kk context
// --task-file, query_graph's taskFile): the end-of-turn graph hint takes
// the task's Context Files and id from it. Uses are kept, one JSON line
// each, in .state/task-files.jsonl (gitignored).
type TaskFileUse struct {
	// File is the task file, relative to the repository root.
	File string `json:"file"`
	At   string `json:"at"`
}

// taskFilesLog is where the uses are kept.
func taskFilesLog(k *store.KB) string { return filepath.Join(k.StateDir(), "task-files.jsonl") }

// maxTaskFileUses bounds the log: past it, the next use rewrites it with
// the newest use of each file.
const maxTaskFileUses = 2000

// RecordTaskFile notes that a context query read the task file file
// (absolute, or relative to the repository root) at time at. A file
// outside the repository is not noted.
func RecordTaskFile(k *store.KB, file string, at time.Time) error {
	if filepath.IsAbs(file) {
		rel, err := filepath.Rel(k.Root, file)
		if err != nil {
			return err
		}
		file = rel
	}
	file = path.Clean(filepath.ToSlash(file))
	if file == ".." || strings.HasPrefix(file, "../") {
		return nil
	}
	line, err := json.Marshal(TaskFileUse{File: file, At: at.UTC().Format(time.RFC3339Nano)})
	if err != nil {
		return err
	}
	p := taskFilesLog(k)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	// One write of one line (O_APPEND): concurrent queries never
	// interleave their lines.
	if _, err := f.Write(append(line, '\n')); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if fi, err := os.Stat(p); err == nil && fi.Size() > maxTaskFileUses*120 {
		return compactTaskFiles(k)
	}
	return nil
}

// TaskFileUses returns the newest use of each task file, in the order of
// those uses (oldest first). A missing log is no use; lines that do not
// parse are skipped.
func TaskFileUses(k *store.KB) ([]TaskFileUse, error) {
	data, err := os.ReadFile(taskFilesLog(k))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	last := map[string]int{}
	var uses []TaskFileUse
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		var u TaskFileUse
		if json.Unmarshal(sc.Bytes(), &u) != nil || u.File == "" {
			continue
		}
		if i, seen := last[u.File]; seen {
			uses[i].File = "" // superseded
		}
		last[u.File] = len(uses)
		uses = append(uses, u)
	}
	out := uses[:0]
	for _, u := range uses {
		if u.File != "" {
			out = append(out, u)
		}
	}
	return out, nil
}

// compactTaskFiles rewrites the log with the newest use of each file.
func compactTaskFiles(k *store.KB) error {
	uses, err := TaskFileUses(k)
	if err != nil {
		return err
	}
	if len(uses) > maxTaskFileUses/2 {
		uses = uses[len(uses)-maxTaskFileUses/2:]
	}
	var b bytes.Buffer
	for _, u := range uses {
		line, _ := json.Marshal(u)
		b.Write(append(line, '\n'))
	}
	// A use appended between the read and the rename is lost: the log is
	// a hint's memory, not knowledge, and keeps its newest uses.
	return atomicfile.Write(taskFilesLog(k), b.Bytes(), 0o644)
}

// TaskID names the task of a task file: its file name without the
// extension (tasks/T-12.md is T-12).
func TaskID(file string) string {
	base := path.Base(filepath.ToSlash(file))
	return strings.TrimSuffix(base, path.Ext(base))
}
