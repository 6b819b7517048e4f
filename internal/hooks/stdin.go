package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// ReadPayload reads a hook payload from r within the bounds of o
// (StdinIdle, StdinTotal; zero fields take their defaults). timedOut
// reports that the read stopped on a bound rather than at the end of the
// input. A payload over o.MaxPayload is an error. A UTF-8 byte order mark
// at its start is dropped (see withoutBOM).
func ReadPayload(ctx context.Context, r io.Reader, o Options) (data []byte, timedOut bool, err error) {
	o = o.withDefaults()
	if r == nil {
		return nil, false, nil
	}
	type chunk struct {
		b   []byte
		err error
	}
	chunks := make(chan chunk)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			buf := make([]byte, 64<<10)
			n, err := r.Read(buf)
			select {
			case chunks <- chunk{buf[:n], err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	total := time.NewTimer(o.StdinTotal)
	defer total.Stop()
	idle := time.NewTimer(o.StdinIdle)
	defer idle.Stop()
	for {
		select {
		case c := <-chunks:
			data = append(data, c.b...)
			if len(data) > o.MaxPayload {
				return nil, false, fmt.Errorf("the payload is larger than %d bytes", o.MaxPayload)
			}
			if errors.Is(c.err, io.EOF) {
				return withoutBOM(data), false, nil
			}
			if c.err != nil {
				return nil, false, fmt.Errorf("reading the payload: %w", c.err)
			}
			if len(c.b) > 0 {
				idle.Reset(o.StdinIdle)
			}
		case <-idle.C:
			return withoutBOM(data), true, nil
		case <-total.C:
			return withoutBOM(data), true, nil
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

// utf8BOM is the UTF-8 byte order mark.
const utf8BOM = "\ufeff"

// withoutBOM drops a UTF-8 byte order mark at the start of a payload:
// Windows PowerShell 5.1 puts one before what it pipes to a program when
// $OutputEncoding is UTF-8, and a JSON reader may ignore it (RFC 8259
// §8.1).
func withoutBOM(data []byte) []byte {
	return bytes.TrimPrefix(data, []byte(utf8BOM))
}
