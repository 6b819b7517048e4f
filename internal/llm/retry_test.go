package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// scripted is a provider that fails its calls with errs, in order, then
// answers.
type scripted struct {
	errs  []error
	calls int
}

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) Complete(ctx context.Context, req Request) (json.RawMessage, error) {
	s.calls++
	if s.calls <= len(s.errs) {
		return nil, s.errs[s.calls-1]
	}
	return json.RawMessage(`{}`), nil
}

// TestRetryPolicy: transient failures (a refused connection, a timeout,
// 408, 429, 5xx) are tried again with doubling waits, a 429's Retry-After
// when it is longer (capped); other failures are not; a bad reply gets
// one more try; the last error says how many tries were made.
func TestRetryPolicy(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("connect: %w", errConnRefused())}
	h := func(status int, after time.Duration) error {
		return &HTTPError{Provider: "p", Status: status, URL: "u", Body: "b", RetryAfter: after}
	}
	bad := &ReplyError{Provider: "p", Schema: "s", Reason: "not JSON"}
	policy := RetryPolicy{Attempts: 4, Backoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, BadReplies: 1}
	for _, c := range []struct {
		name   string
		errs   []error
		calls  int
		waits  []time.Duration
		failed string
	}{
		{"two 503s then an answer", []error{h(503, 0), h(503, 0)}, 3, []time.Duration{10, 20}, ""},
		{"refused, timeout, 429 with Retry-After", []error{refused, timeoutError{}, h(429, time.Second)}, 4, []time.Duration{10, 20, 100}, ""},
		{"down for good", []error{h(502, 0), h(502, 0), h(502, 0), h(502, 0), h(502, 0)}, 4, []time.Duration{10, 20, 40}, "HTTP 502 from u: b (after 4 tries)"},
		{"408 is transient", []error{h(408, 0)}, 2, []time.Duration{10}, ""},
		{"400 is not", []error{h(400, 0)}, 1, nil, "HTTP 400"},
		{"a bad reply once", []error{bad}, 2, nil, ""},
		{"a bad reply twice", []error{bad, bad}, 2, nil, "(after 2 tries)"},
		{"other errors", []error{errors.New("no key")}, 1, nil, "no key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sp := &scripted{errs: c.errs}
			r := WithRetry(sp, policy)
			var waits []time.Duration
			r.sleep = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }
			_, err := r.Complete(context.Background(), Request{})
			want := make([]time.Duration, len(c.waits))
			for i, w := range c.waits {
				want[i] = w * time.Millisecond
			}
			if sp.calls != c.calls || !slices.Equal(waits, want) {
				t.Errorf("%d calls, waits %v; want %d, %v", sp.calls, waits, c.calls, want)
			}
			if (c.failed == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.failed)) {
				t.Errorf("error %v, want %q", err, c.failed)
			}
		})
	}
	// A cancelled context stops the tries.
	ctx, cancel := context.WithCancel(context.Background())
	sp := &scripted{errs: []error{h(503, 0), h(503, 0)}}
	r := WithRetry(sp, policy)
	r.sleep = func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }
	if _, err := r.Complete(ctx, Request{}); !errors.Is(err, context.Canceled) || sp.calls != 1 {
		t.Errorf("cancelled: %v after %d calls", err, sp.calls)
	}
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// TestRetryOverHTTP: the providers New builds retry a real API that
// answers 429 with Retry-After and 503, then the decision.
func TestRetryOverHTTP(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "1")
			http.Error(w, `{"error":"slow down"}`, http.StatusTooManyRequests)
		case 2:
			http.Error(w, `{"error":"down"}`, http.StatusServiceUnavailable)
		default:
			_ = json.NewEncoder(w).Encode(map[string]any{"message": map[string]string{"role": "assistant", "content": `{"a":"x"}`}, "done": true})
		}
	}))
	t.Cleanup(srv.Close)
	policy := RetryPolicy{Attempts: 3, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}
	p, err := New(Config{Provider: "ollama", Model: "m", URL: srv.URL}, Deps{Retry: &policy})
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Complete(context.Background(), Request{Prompt: "q", Schema: objectSchema(t)})
	if err != nil || string(out) != `{"a":"x"}` || n.Load() != 3 {
		t.Fatalf("%s %v after %d requests", out, err, n.Load())
	}
}

func errConnRefused() error { return syscall.ECONNREFUSED }

func objectSchema(t *testing.T) Schema {
	t.Helper()
	return Schema{Name: "test", JSON: json.RawMessage(`{"type":"object"}`), Validate: func(any) error { return nil }}
}
