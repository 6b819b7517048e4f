//go:build !unix

package hooks

import (
	"errors"
	"io"
	"os"
)

// readHead reads the start of the file at path into buf: until buf is
// full (eof false) or the file ends (eof true).
func readHead(path string, buf []byte) (n int, eof bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer func() { _ = f.Close() }()
	n, err = io.ReadFull(f, buf)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return n, true, nil
	}
	return n, false, err
}
