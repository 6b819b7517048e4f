package httpapi

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kk-project/kk/internal/jobqueue"
)

// requestMetrics counts the requests answered, by route and status.
type requestMetrics struct {
	mu     sync.Mutex
	counts map[[2]string]uint64
}

func newRequestMetrics() *requestMetrics {
	return &requestMetrics{counts: map[[2]string]uint64{}}
}

func (m *requestMetrics) count(route string, status int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counts[[2]string{route, strconv.Itoa(status)}]++
}

func (m *requestMetrics) snapshot() map[[2]string]uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[[2]string]uint64, len(m.counts))
	for k, v := range m.counts {
		out[k] = v
	}
	return out
}

// GET /metrics, in the Prometheus text format.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	st := s.opts.Queue.Stats()
	b.WriteString("# HELP kk_serve_jobs Jobs the queue holds, by state.\n# TYPE kk_serve_jobs gauge\n")
	for _, state := range jobqueue.Statuses {
		fmt.Fprintf(&b, "kk_serve_jobs{state=%q} %d\n", state, st.ByStatus[state])
	}
	b.WriteString("# HELP kk_serve_queue_depth Jobs waiting for the worker.\n# TYPE kk_serve_queue_depth gauge\n")
	fmt.Fprintf(&b, "kk_serve_queue_depth %d\n", st.Depth)
	h := st.Latency
	b.WriteString("# HELP kk_serve_job_latency_seconds Time from a job's acceptance to its end, for jobs finished since the start.\n# TYPE kk_serve_job_latency_seconds histogram\n")
	for i, bound := range h.Bounds {
		fmt.Fprintf(&b, "kk_serve_job_latency_seconds_bucket{le=%q} %d\n", strconv.FormatFloat(bound, 'g', -1, 64), h.Counts[i])
	}
	fmt.Fprintf(&b, "kk_serve_job_latency_seconds_bucket{le=\"+Inf\"} %d\n", h.Count)
	fmt.Fprintf(&b, "kk_serve_job_latency_seconds_sum %s\n", strconv.FormatFloat(h.Sum, 'g', -1, 64))
	fmt.Fprintf(&b, "kk_serve_job_latency_seconds_count %d\n", h.Count)
	counts := s.metrics.snapshot()
	keys := make([][2]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	b.WriteString("# HELP kk_serve_http_requests_total HTTP requests answered, by route and status code.\n# TYPE kk_serve_http_requests_total counter\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "kk_serve_http_requests_total{route=%q,code=%q} %d\n", k[0], k[1], counts[k])
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(b.String()))
}
