package harness

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// TranscriptWindow is how much of a transcript file capture reads: the
// last 16 MiB. A longer transcript (a session of many hours, or a file
// that is not a transcript at all) is read from a line start in its last
// TranscriptWindow bytes, so its newest turns are kept and memory stays
// bounded whatever the file's size.
const TranscriptWindow = 16 << 20

// ErrNotRegular is returned for a transcript path that names something
// other than a regular file (a FIFO, a device such as /dev/zero, a
// folder): reading it could block or never end.
var ErrNotRegular = errors.New("is not a regular file")

// Transcript file opened by OpenTranscript.
type TranscriptFile struct {
	io.Reader
	f *os.File
	// Skipped is how many bytes at the start of the file are not read
	// (0 when the file fits in TranscriptWindow).
	Skipped int64
}

// Close closes the file.
func (t *TranscriptFile) Close() error { return t.f.Close() }

// OpenTranscript opens the transcript file at path for reading in bounded
// memory: only a regular file, and only its last TranscriptWindow bytes,
// starting after the first newline in them (the line that was cut); a
// file that grows while it is read is read up to the window's size.
func OpenTranscript(path string) (*TranscriptFile, error) {
	return OpenTail(path, TranscriptWindow)
}

// OpenTail is OpenTranscript with a window of its own: the file's last
// window bytes, from the first line start in them.
func OpenTail(path string, window int64) (*TranscriptFile, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s %w", path, ErrNotRegular)
	}
	// O_NONBLOCK: should the path have become a FIFO since the Stat, the
	// open does not wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		_ = f.Close()
		if err == nil {
			err = fmt.Errorf("%s %w", path, ErrNotRegular)
		}
		return nil, err
	}
	t := &TranscriptFile{f: f, Reader: io.LimitReader(f, window)}
	if size := fi.Size(); size > window {
		start := size - window
		if _, err := f.Seek(start, io.SeekStart); err != nil {
			_ = f.Close()
			return nil, err
		}
		br := bufio.NewReaderSize(io.LimitReader(f, window), 64<<10)
		n, err := skipLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			_ = f.Close()
			return nil, err
		}
		t.Reader, t.Skipped = br, start+n
	}
	return t, nil
}

// skipLine reads br through the next newline and says how many bytes that
// was.
func skipLine(br *bufio.Reader) (int64, error) {
	var n int64
	for {
		chunk, err := br.ReadSlice('\n')
		n += int64(len(chunk))
		if !errors.Is(err, bufio.ErrBufferFull) {
			return n, err
		}
	}
}
