package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"
)

// HTTPError is an API's answer with a status other than 200.
type HTTPError struct {
	Provider string
	Status   int
	URL      string
	// Body is the start of the answer's body.
	Body string
	// RetryAfter is how long the API asked to wait (Retry-After), 0 when
	// it did not say.
	RetryAfter time.Duration
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("%s: HTTP %d from %s: %s", e.Provider, e.Status, e.URL, e.Body)
}

// retryAfter reads a Retry-After header given in seconds (0 for none or
// an HTTP date, which APIs rarely send).
func retryAfter(h string) time.Duration {
	if n, err := strconv.Atoi(h); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return 0
}

// Transient reports whether err is a provider failure worth another try:
// the provider could not be reached (connection refused or reset, a
// name that did not resolve), a call timed out (the HTTP client's own
// timeout, not the caller's context), or the API answered 408, 429 or a
// 5xx status. A reply that fails its schema is not transient (see
// ErrBadReply); neither is a cancelled or expired caller context.
func Transient(err error) bool {
	var h *HTTPError
	if errors.As(err, &h) {
		return h.Status == http.StatusRequestTimeout || h.Status == http.StatusTooManyRequests || h.Status >= 500
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// RetryPolicy is how a provider call is tried again.
type RetryPolicy struct {
	// Attempts bounds the tries of a call that fails transiently (the
	// first included); below 1, one try.
	Attempts int
	// Backoff is the wait before the second try; each next wait doubles,
	// up to MaxBackoff. An API's Retry-After, when longer, wins (capped
	// at MaxBackoff too).
	Backoff, MaxBackoff time.Duration
	// BadReplies is how many more tries a reply that fails its schema
	// gets.
	BadReplies int
}

// DefaultRetry is the policy of the providers New builds: four tries
// (0.25, 0.5 and 1 s between them, longer when a 429 says so), and one
// more try for a reply that fails its schema.
var DefaultRetry = RetryPolicy{Attempts: 4, Backoff: 250 * time.Millisecond, MaxBackoff: 8 * time.Second, BadReplies: 1}

// Retrying is a Provider that tries its provider's calls again by its
// policy.
type Retrying struct {
	p      Provider
	policy RetryPolicy
	// sleep waits d unless ctx ends first (a test seam).
	sleep func(ctx context.Context, d time.Duration) error
}

// WithRetry wraps p so that transient failures are tried again with
// backoff and replies that fail their schema get policy.BadReplies more
// tries. The error of the last try is returned, saying how many were made.
func WithRetry(p Provider, policy RetryPolicy) *Retrying {
	return &Retrying{p: p, policy: policy, sleep: sleepCtx}
}

// Name implements Provider.
func (r *Retrying) Name() string { return r.p.Name() }

// Unwrap returns the provider it wraps.
func (r *Retrying) Unwrap() Provider { return r.p }

// Complete implements Provider.
func (r *Retrying) Complete(ctx context.Context, req Request) (json.RawMessage, error) {
	attempts := max(r.policy.Attempts, 1)
	wait := r.policy.Backoff
	transient, bad := 0, 0
	for try := 1; ; try++ {
		out, err := r.p.Complete(ctx, req)
		switch {
		case err == nil:
			return out, nil
		case ctx.Err() != nil:
			return nil, err
		case errors.Is(err, ErrBadReply):
			if bad >= r.policy.BadReplies {
				return nil, triesError(err, try)
			}
			bad++
			continue
		case !Transient(err):
			return nil, err
		}
		transient++
		if transient >= attempts {
			return nil, triesError(err, try)
		}
		d := wait
		var h *HTTPError
		if errors.As(err, &h) && h.RetryAfter > d {
			d = h.RetryAfter
		}
		if r.policy.MaxBackoff > 0 {
			d = min(d, r.policy.MaxBackoff)
		}
		if serr := r.sleep(ctx, d); serr != nil {
			return nil, triesError(fmt.Errorf("%w; stopped before trying again: %w", err, serr), try)
		}
		wait *= 2
	}
}

// TriesError is the last error of a call tried more than once.
type TriesError struct {
	Err   error
	Tries int
}

func (e *TriesError) Error() string { return fmt.Sprintf("%v (after %d tries)", e.Err, e.Tries) }
func (e *TriesError) Unwrap() error { return e.Err }

func triesError(err error, tries int) error {
	if tries < 2 {
		return err
	}
	return &TriesError{Err: err, Tries: tries}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
