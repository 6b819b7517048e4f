// Package server is the kk serve program: it wires the knowledge base, the
// model provider, the backend (internal/serve), the job queue, the HTTP
// API (internal/httpapi) and the page (internal/web), and serves them.
// It is a face's composition, kept out of the command line so that kk
// serve's flags are all the command translates.
package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/llm"
	"github.com/kk-project/kk/internal/serve"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/web"
	"github.com/kk-project/kk/internal/workpool"
)

// Options are what kk serve runs with; the command line's face
// translates its flags and environment into them.
type Options struct {
	// Root is the folder served; a knowledge base is set up there when it
	// has none (serve.Bootstrap, with Init).
	Root string
	Init store.InitOptions
	// Addr is the address to listen on (host:port), Token the bearer
	// token the API asks for ("" on loopback: none).
	Addr  string
	Token string
	// LoopbackOnly has the page answer only requests addressed to a
	// loopback name (against DNS rebinding), when Addr is a loopback
	// address.
	LoopbackOnly bool
	// PushEvery, when positive, shares the committed jobs that often.
	PushEvery time.Duration
	Logger    *slog.Logger
	// Now is the clock of the knowledge base's timestamps; nil: time.Now.
	Now func() time.Time
	// Getenv reads the environment (KK_LLM_* overrides, the providers'
	// API keys); Harnesses finds the adapter of the harness provider.
	Getenv    func(string) string
	Harnesses llm.HarnessFinder
	// Workers bounds the parallel steps of a job (tree reads, index
	// generation); 0 leaves one CPU free for reads.
	Workers int
	// GCPercent, when positive, is the garbage collection target
	// (debug.SetGCPercent; serve.GCPercent is kk serve's); 0 leaves it as it is.
	GCPercent int
	// Delay slows every job step down (end-to-end tests of concurrency).
	Delay time.Duration
	// NoWatch has every job walk the tree instead of watching it
	// (serve.Options.NoWatch).
	NoWatch bool
	// ListenWait is how long a start waits for Addr's port while another
	// socket holds it; 0: DefaultListenWait.
	ListenWait time.Duration
}

// DefaultListenWait is Options.ListenWait's default. A kk serve killed a
// moment before (kill -9) may hold its port a little longer than its own
// life: a git command it was starting holds a copy of its listening
// socket until that command has started, as it holds kk serve's lock
// (serve.DefaultLockWait), out of reach of a kill of kk's process group
// (its git commands have groups of their own).
const DefaultListenWait = serve.DefaultLockWait

// listen listens on addr, waiting up to wait (or until ctx ends) while
// another socket holds its port (see DefaultListenWait).
func listen(ctx context.Context, addr string, wait time.Duration) (net.Listener, error) {
	deadline := time.Now().Add(wait)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) {
			return ln, err
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("%w (waited %s for it: another program listens there)", err, wait)
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Run serves the knowledge base under o.Root until ctx ends: it sets the
// knowledge base up when missing, reads its config once for the model
// provider, opens the job queue, and serves the HTTP API and the page on
// o.Addr, announcing the URL in the knowledge base's state folder.
func Run(ctx context.Context, o Options) error {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if names := forgetCallersRepository(); len(names) > 0 {
		log.Warn("kk serve serves its root and ignores the repository its caller's environment names (a git hook's or an editor's variables)", "ignored", strings.Join(names, " "))
	}
	restore, err := withoutFsmonitor()
	if err != nil {
		return err
	}
	defer restore()
	// The address first: one kk serve cannot listen on (a port that does
	// not exist, one another process holds) is refused before the folder
	// is set up. Connections made before the server serves wait in the
	// listener's backlog.
	ln, err := listen(ctx, o.Addr, cmp.Or(o.ListenWait, DefaultListenWait))
	if err != nil {
		if ctx.Err() != nil {
			log.Info("kk serve stopped while it waited for its port", "addr", o.Addr)
			return nil
		}
		return fmt.Errorf("listening on %s (--addr): %w", o.Addr, err)
	}
	defer func() { _ = ln.Close() }()
	// So is a model the environment names that cannot be set up, for a
	// folder kk serve would set up: its config.yaml will be the default.
	if !store.New(o.Root).Initialized() {
		_, err := llm.New(store.DefaultConfig().LLMConfig().WithEnv(o.Getenv), llm.Deps{Getenv: o.Getenv, Harnesses: o.Harnesses})
		if err != nil && !errors.Is(err, llm.ErrNotConfigured) {
			return err
		}
	}
	// A stop (the signal's context ending) while kk serve starts is a
	// stop, not a failure: whatever step it cut short says so (a git
	// command ended, "context canceled"), and kk serve exits 0 as it
	// does when stopped while it serves. (The setup of a new folder is
	// never cut: Bootstrap.)
	stopped := func(err error) error {
		if err != nil && ctx.Err() != nil {
			log.Info("kk serve stopped while it started", "step", err)
			return nil
		}
		return err
	}
	// Until the API serves, /healthz says that kk serve starts, and what
	// it waits for (a setup's git command that does not end).
	setup := &serve.Setup{}
	opening := ""
	var openingMu sync.Mutex
	stopStarting := httpapi.ServeStarting(ln, StartingAfter, o.Token, func() string {
		if why := setup.Waiting(); why != "" {
			return why
		}
		openingMu.Lock()
		defer openingMu.Unlock()
		return opening
	}, log)
	starting := true
	defer func() {
		if starting {
			stopStarting()
		}
	}()
	k, err := serve.BootstrapWith(ctx, o.Root, o.Init, setup)
	if err != nil {
		return stopped(err)
	}
	openingMu.Lock()
	opening = "opening the knowledge base in " + k.Root + " (kk serve's lock, the repository, the tree)"
	openingMu.Unlock()
	k.Now = o.Now
	defer func() { _ = k.Close() }()
	cfg, err := k.LoadConfig()
	if err != nil {
		return err
	}
	provider, err := llm.New(cfg.LLMConfig().WithEnv(o.Getenv), llm.Deps{Getenv: o.Getenv, Harnesses: o.Harnesses, LogDir: k.LogsDir()})
	switch {
	case errors.Is(err, llm.ErrNotConfigured):
		provider = nil
	case err != nil:
		return err
	}
	workers := o.Workers
	if workers <= 0 {
		// Leave a CPU free, so that reads are answered at once while a
		// job runs.
		workers = max(1, runtime.GOMAXPROCS(0)-1)
	}
	workpool.Limit(workers)
	if o.GCPercent > 0 {
		debug.SetGCPercent(o.GCPercent)
	}
	backend := serve.New(serve.Options{KB: k, Provider: provider, Logger: log, Delay: o.Delay, NoWatch: o.NoWatch})
	if err := backend.Open(ctx); err != nil {
		return stopped(err)
	}
	defer func() { _ = backend.Close() }()
	qopts := backend.QueueOptions()
	if o.PushEvery > 0 {
		qopts.Every, qopts.OnTick, qopts.TickFrom = o.PushEvery, backend.Share, backend.ShareFrom(time.Now())
	}
	q, err := jobqueue.Open(filepath.Join(k.StateDir(), "queue"), qopts)
	if err != nil {
		return err
	}
	st := q.Stats()
	backend.KeepQueuedBranch(ctx, st.ByStatus[jobqueue.Queued]+st.ByStatus[jobqueue.Processing] > 0)
	page := web.New(k, web.Options{LoopbackOnly: o.LoopbackOnly, Repair: backend.RepairIndex})
	srv, err := httpapi.New(httpapi.Options{Backend: backend, Queue: q, Token: o.Token, Addr: o.Addr, Logger: log, Page: page, PagePaths: web.Paths, PageSearchPaths: web.SearchPaths})
	if err != nil {
		return err
	}
	if err := backend.Warm(ctx); err != nil {
		return stopped(err)
	}
	starting = false
	stopStarting()
	url := "http://" + ln.Addr().String()
	unannounce, err := serve.Announce(k, url)
	if err != nil {
		return err
	}
	defer unannounce()
	model := "none"
	if provider != nil {
		model = provider.Name()
	}
	log.Info("kk serve listening", "url", url, "root", k.Root, "branch", backend.Branch(), "model", model, "push_every", o.PushEvery.String())
	if err := srv.Serve(ctx, ln); err != nil {
		return err
	}
	log.Info("kk serve stopped")
	return nil
}

// StartingAfter is how long a start lasts before its address answers
// (httpapi.ServeStarting): /healthz with what it waits for, any other
// request 503. A start of moments (the setup of a new folder takes
// milliseconds) leaves its requests in the listener's backlog, served,
// not refused, once the API serves.
var StartingAfter = 2 * time.Second

// callersRepository are the variables by which git is told which
// repository, work tree, index and object store to use, instead of
// finding them from its working folder: those a git hook runs with
// (GIT_DIR, GIT_INDEX_FILE: a pre-commit hook of `git commit -a` gets a
// temporary index; GIT_OBJECT_DIRECTORY and the quarantine of a
// pre-receive hook), or an editor's task or a person's shell may pass on.
// They are git's own list of a repository's local variables (`git
// rev-parse --local-env-vars`, which git drops when it runs in another
// repository, a submodule's) but for the configuration ones, which say how
// git behaves rather than where, plus the quarantine and namespace.
var callersRepository = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_COMMON_DIR",
	"GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
	"GIT_QUARANTINE_PATH", "GIT_GRAFT_FILE", "GIT_SHALLOW_FILE",
	"GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
	"GIT_INTERNAL_SUPER_PREFIX", "GIT_NAMESPACE",
}

// forgetCallersRepository removes callersRepository from kk serve's
// environment, so that every git command it runs (each inherits it) finds
// the repository from the root served, and returns the names it removed.
// kk serve serves its root: started from another repository's hook, it
// committed into that repository, or staged its commits into the hook's
// temporary index, which the repository's own index never got (a person's
// next commit then deleted the knowledge base).
func forgetCallersRepository() []string {
	var names []string
	for _, name := range callersRepository {
		if _, ok := os.LookupEnv(name); ok {
			_ = os.Unsetenv(name)
			names = append(names, name)
		}
	}
	return names
}

// withoutFsmonitor has every git command kk serve runs (each inherits its
// environment) run with core.fsmonitor off, through git's environment
// configuration (GIT_CONFIG_COUNT, GIT_CONFIG_KEY_<n>, GIT_CONFIG_VALUE_<n>,
// added after any the caller set). core.fsmonitor names a hook git asks
// which files changed before it reads the work tree (a watchman hook):
// one that never answered held kk serve's job forever, "processing",
// and its start; kk serve watches the tree itself and needs none. restore
// puts the environment back as it was.
func withoutFsmonitor() (restore func(), err error) {
	n := 0
	if v, ok := os.LookupEnv("GIT_CONFIG_COUNT"); ok && strings.TrimSpace(v) != "" {
		c, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || c < 0 {
			return nil, fmt.Errorf("GIT_CONFIG_COUNT=%q in the environment: want a number of GIT_CONFIG_KEY_<n> and GIT_CONFIG_VALUE_<n> pairs (git refuses it too)", v)
		}
		n = c
	}
	set := map[string]string{
		fmt.Sprintf("GIT_CONFIG_KEY_%d", n):   "core.fsmonitor",
		fmt.Sprintf("GIT_CONFIG_VALUE_%d", n): "false",
		"GIT_CONFIG_COUNT":                    strconv.Itoa(n + 1),
	}
	was := map[string]*string{}
	restore = func() {
		for k, v := range was {
			if v == nil {
				_ = os.Unsetenv(k)
			} else {
				_ = os.Setenv(k, *v)
			}
		}
	}
	for k, v := range set {
		if old, ok := os.LookupEnv(k); ok {
			was[k] = &old
		} else {
			was[k] = nil
		}
		if err := os.Setenv(k, v); err != nil {
			restore()
			return nil, err
		}
	}
	return restore, nil
}
