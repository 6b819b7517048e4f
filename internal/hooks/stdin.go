package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Bounds of the payload read. Some hosts never close a hook's stdin, so
// the read stops StdinIdle after the last byte (or after the start when
// no byte comes: hosts write the payload before the hook even runs), and
// StdinTotal after it started, whichever is first. Tests shorten them.
var (
	StdinIdle  = 250 * time.Millisecond
	StdinTotal = 2 * time.Second
	// MaxPayload caps the payload's size: hook payloads are small JSON
	// documents (a Stop payload with the last message is the largest).
	MaxPayload = 8 << 20
)

// ReadPayload reads a hook payload from r within the bounds above.
// timedOut reports that the read stopped on a bound rather than at the end
// of the input. A payload over MaxPayload is an error.
func ReadPayload(ctx context.Context, r io.Reader) (data []byte, timedOut bool, err error) {
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
	total := time.NewTimer(StdinTotal)
	defer total.Stop()
	idle := time.NewTimer(StdinIdle)
	defer idle.Stop()
	for {
		select {
		case c := <-chunks:
			data = append(data, c.b...)
			if len(data) > MaxPayload {
				return nil, false, fmt.Errorf("the payload is larger than %d bytes", MaxPayload)
			}
			if errors.Is(c.err, io.EOF) {
				return data, false, nil
			}
			if c.err != nil {
				return nil, false, fmt.Errorf("reading the payload: %w", c.err)
			}
			if len(c.b) > 0 {
				idle.Reset(StdinIdle)
			}
		case <-idle.C:
			return data, true, nil
		case <-total.C:
			return data, true, nil
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}
