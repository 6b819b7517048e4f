package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// ServeStarting answers on ln while kk serve starts (the setup of a new
// folder, opening the repository), before the API is ready, once the
// start has lasted after (a start of moments leaves its requests waiting
// in the listener's backlog, served as soon as the API is): GET /healthz
// says {"status":"starting"} and, to a caller with the token (or to any,
// without one), what the start waits for (waiting(), when not ""); every
// other request is answered 503 with Retry-After. A start that waits for
// a git command that does not end answered nothing: its connections
// waited in the listener's backlog. An address Serve would refuse (not
// loopback, without a token) is not served meanwhile either. The
// returned function stops
// answering and gives ln back as it was, for Serve; ln must be a TCP
// listener (any other is not served meanwhile).
func ServeStarting(ln net.Listener, after time.Duration, token string, waiting func() string, log *slog.Logger) (stop func()) {
	tl, ok := ln.(*net.TCPListener)
	if !ok || ListenAddr(ln.Addr().String(), token) != nil {
		return func() {} // Serve refuses such an address, with the reason
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cross-Origin-Resource-Policy", "same-origin")
		why := waiting()
		if r.URL.Path != "/healthz" || r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Retry-After", "5")
			writeError(w, http.StatusServiceUnavailable, "kk serve is starting; try again shortly (GET /healthz says what it waits for)")
			return
		}
		if token != "" && !validBearer(r.Header.Get("Authorization"), token) {
			why = "" // as /healthz: the reason names the server's folders
		}
		if host, _, err := net.SplitHostPort(r.Host); token == "" && (err != nil || !isLoopback(host)) && !isLoopback(r.Host) {
			// Without a token, to a request addressed to this loopback
			// server by another name (a web page's DNS rebinding), not
			// what for either.
			why = ""
		}
		writeJSON(w, http.StatusOK, struct {
			Status     string `json:"status"`
			QueueDepth int    `json:"queue_depth"`
			Processing int    `json:"processing"`
			Waiting    string `json:"waiting_for,omitempty"`
		}{"starting", 0, 0, why})
	})
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	var mu sync.Mutex
	var done chan struct{} // made when it starts answering
	timer := time.AfterFunc(after, func() {
		mu.Lock()
		defer mu.Unlock()
		if done != nil {
			return
		}
		done = make(chan struct{})
		go func(done chan struct{}) {
			defer close(done)
			if err := srv.Serve(keptListener{tl}); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Warn("answering while kk serve starts", "error", err)
			}
		}(done)
	})
	return func() {
		mu.Lock()
		timer.Stop()
		started := done
		done = make(chan struct{}) // never starts now
		mu.Unlock()
		if started == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			_ = srv.Close()
		}
		<-started
		_ = tl.SetDeadline(time.Time{})
	}
}

// keptListener is a TCP listener whose Close ends a pending Accept (a
// deadline in the past) but leaves the socket open, for the API's
// server to serve next.
type keptListener struct{ *net.TCPListener }

func (l keptListener) Close() error { return l.SetDeadline(time.Unix(1, 0)) }
