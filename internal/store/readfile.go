package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"syscall"
)

// MaxFileBytes bounds the knowledge base's own files that kk reads whole
// (config.yaml, ENTRY.md, GRAPH.md, FOLDER_SUMMARIES.md, a folder's
// index.md, .redirects.json): 16 MiB, as session-start bounds ENTRY.md.
// None of them comes near it; a bigger one is a mistake, not a catalog.
const MaxFileBytes = 16 << 20

// UnreadableError is one of the knowledge base's files that kk does not
// read: not a regular file (a link to /dev/zero, a named pipe, a socket),
// or over MaxFileBytes. File is the path as the reader named it.
type UnreadableError struct {
	File    string
	Problem string
}

func (e *UnreadableError) Error() string {
	switch path.Base(filepath.ToSlash(e.File)) {
	case "ENTRY.md", "GRAPH.md", "index.md", "INDEX.md":
		return fmt.Sprintf("%s %s, so kk did not read it: it is generated from the notes, so remove it and run `kk index rebuild` to write it again", e.File, e.Problem)
	}
	return fmt.Sprintf("%s %s, so kk did not read it: replace it with an ordinary file", e.File, e.Problem)
}

const notRegular = "is not a regular file (a named pipe, a device or a socket, or a link to one)"

// ReadFile reads path whole when it is a regular file (a link to one
// counts) of at most MaxFileBytes, and is otherwise an *UnreadableError
// naming it: a device such as /dev/zero would never end and a named pipe
// would wait for a writer. A missing file is the open's fs.ErrNotExist.
func ReadFile(path string) ([]byte, error) {
	return readBounded(path, path, MaxFileBytes)
}

// ReadFile is the package's ReadFile with the error naming path relative to the
// repository.
func (k *KB) ReadFile(path string) ([]byte, error) {
	return readBounded(path, k.Rel(path), MaxFileBytes)
}

// relNamed is err with the file of an *UnreadableError named relative to
// the repository (ReadFile names it as it was given).
func (k *KB) relNamed(err error) error {
	if ue, ok := errors.AsType[*UnreadableError](err); ok && filepath.IsAbs(ue.File) {
		return &UnreadableError{File: k.Rel(ue.File), Problem: ue.Problem}
	}
	return err
}

func readBounded(path, name string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, &UnreadableError{File: name, Problem: "is a directory"}
	}
	if !fi.Mode().IsRegular() {
		return nil, &UnreadableError{File: name, Problem: notRegular}
	}
	if fi.Size() > limit {
		return nil, &UnreadableError{File: name, Problem: fmt.Sprintf("is %d bytes, over the limit of %d MiB", fi.Size(), limit>>20)}
	}
	f, err := OpenRead(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &UnreadableError{File: name, Problem: notRegular}
	}
	src, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(src)) > limit {
		return nil, &UnreadableError{File: name, Problem: fmt.Sprintf("is over the limit of %d MiB", limit>>20)}
	}
	return src, nil
}

// OpenRead opens path for reading without waiting for a writer should it
// be a named pipe (O_NONBLOCK); the caller checks the file's mode before
// it reads.
func OpenRead(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
