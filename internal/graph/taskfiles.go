package graph

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/op"
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
	// One write of one line (O_APPEND): concurrent queries never
	// interleave their lines; a log that is a named pipe is refused at
	// once rather than waited on.
	if err := atomicfile.Append(p, append(line, '\n'), 0o644); err != nil {
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

// MaxTaskFileBytes is the largest task file a context query reads (1 MiB).
const MaxTaskFileBytes = 1 << 20

// readTaskFile reads the task file a context query names (relative to the
// repository root, or absolute) and returns its text and absolute path.
// The name comes from an agent or a client as well as from a person, so
// only a regular file inside the repository (after following links) of at
// most MaxTaskFileBytes is read: a FIFO would block the call for ever and
// a device such as /dev/zero would never end. Each refusal is a
// VALIDATION_ERROR on taskFile naming the file as given.
func readTaskFile(k *store.KB, given string) ([]byte, string, error) {
	invalid := func(format string, args ...any) error {
		return op.Invalid("taskFile", "%s %s", op.Quote(given), fmt.Sprintf(format, args...))
	}
	file := given
	if !filepath.IsAbs(file) {
		file = filepath.Join(k.Root, file)
	}
	file = filepath.Clean(file)
	if !within(k.Root, file) {
		return nil, "", invalid("is outside the repository; give a task file inside it")
	}
	root, err := filepath.EvalSymlinks(k.Root)
	if err != nil {
		return nil, "", err
	}
	resolved, err := filepath.EvalSymlinks(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", invalid("does not exist")
	}
	if err != nil {
		return nil, "", invalid("cannot be read (%s)", osProblem(err))
	}
	if !within(root, resolved) {
		return nil, "", invalid("is outside the repository (it is a link to %s); give a task file inside it", op.Quote(resolved))
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return nil, "", invalid("cannot be read (%s)", osProblem(err))
	}
	if fi.IsDir() {
		return nil, "", invalid("is a folder; give a markdown file")
	}
	if !fi.Mode().IsRegular() {
		return nil, "", invalid("is not a regular file")
	}
	// O_NONBLOCK: should the path have become a FIFO since the Stat, the
	// open does not wait for a writer.
	f, err := os.OpenFile(resolved, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, "", invalid("cannot be read (%s)", osProblem(err))
	}
	defer func() { _ = f.Close() }()
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, "", invalid("is not a regular file")
	}
	src, err := io.ReadAll(io.LimitReader(f, MaxTaskFileBytes+1))
	if err != nil {
		return nil, "", invalid("cannot be read (%s)", osProblem(err))
	}
	if len(src) > MaxTaskFileBytes {
		return nil, "", invalid("is over %d bytes; the limit is %d (1 MiB)", MaxTaskFileBytes, MaxTaskFileBytes)
	}
	return src, file, nil
}

// within reports whether path is dir or inside it (both clean, absolute).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// osProblem is the operating system's reason for a failed file operation,
// without the operation and path it names (those are the caller's).
func osProblem(err error) string {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err.Error()
	}
	return err.Error()
}
