package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/serve"
	"github.com/kk-project/kk/internal/serve/server"
	"github.com/kk-project/kk/internal/store"
)

// EnvServeTestDelay slows kk serve's worker for the crash test: a Go
// duration the worker waits before it writes, between the write and the
// commit, and after the commit of every job.
const EnvServeTestDelay = "KK_SERVE_TEST_DELAY"

type serveOpts struct {
	addr      string
	tokenFile string
	pushEvery time.Duration
	logLevel  string
	noWatch   bool
}

func newServeCmd(app *App) *cobra.Command {
	var o serveOpts
	cmd := &cobra.Command{
		Use:         "serve",
		Annotations: map[string]string{noJSON: "a server; its answers are JSON already"},
		Short:       "Serve the knowledge base over HTTP (knowledged's API)",
		Long: `Serve the knowledge tree over HTTP with knowledged's API, so that knowledged's
kc and mcp-knowledged, and kk client, work against it:

  POST /content {content, hint, title, tags[, type]}   queue a note      -> 202 {job_id, status}
  PUT /content {path, content, title, description, tags}  queue an edit
  DELETE /content {path}                               queue a deletion
  GET /jobs/{id}                                       a job's state (queued, processing, done, failed)
  GET /content?path=P                                  a note, front matter included
  GET /search?query=Q | ?tag=T&tags=a,b&match=any|all [&mode=raw]
  GET /answer?query=Q, POST /ask {question}            answers (need a model)
  GET /posts/recents?limit=N, GET /tags, GET /healthz, GET /metrics

Paths are relative to the knowledge tree (.ai/kenkeep/nodes/); every route
also takes the path from the repository root.

Writes are queued durably under .ai/kenkeep/.state/queue/ and answered at
once; one worker runs them in order. Each job is one store transaction (the
note, the regenerated index files) and then exactly one git commit,
"store(<job id>): <path>", "edit(…)" or "delete(…)", by "kk serve
<kk-serve@kk.invalid>", touching only that job's files. After a crash, a job
whose commit exists is done; any other has its files put back and runs again.

The organizer places a posted note in the folder whose notes are most like
it by kk's search, else in inbox/, as a practice when its title is
imperative ("Use …", "Never …") and a map otherwise, unless the post names a
type. With a model configured (llm: in config.yaml, or KK_LLM_PROVIDER,
KK_LLM_MODEL, KK_LLM_URL, KK_LLM_API_KEY_ENV, KK_LLM_HARNESS; API keys only
from the environment), the model chooses the folder, title, description,
type and tags, reranks search results, and answers /answer and /ask; without
one those two answer 503.

The root is --root, else the knowledge base found upwards, else the working
folder. A folder that does not exist or is empty becomes a git repository
with a knowledge base and one commit; a git repository without a knowledge
base gets one; a non-empty folder that is not in a git repository is
refused.

--addr defaults to 127.0.0.1:9090 (port 0 picks a free port). Listening on
anything but loopback needs --token-file: a private file (mode 0600) holding
on one line the bearer token every request must carry (at least 16 bytes). The URL served is
written to .ai/kenkeep/.state/serve.url while the server runs.

Web pages are kept out: unless a request carries the token, every route
refuses a Host other than the loopback names at the port served and the
--addr given (DNS rebinding), and writes refuse another site's Origin and a
body not sent as Content-Type: application/json. Request bodies are decoded
strictly (valid UTF-8, no key twice, no NUL, no unknown field, nothing
after the object).

The read-only web page of kk browse is served at / beside the API (the
folder tree, search as you type, leaves with their edges and changelog, the
molecules and the traceability graph); it follows the same token rule.

kk serve commits to the branch checked out when it starts, and only to it.
While another branch (or a detached HEAD) is checked out in its work tree,
jobs stay queued and /healthz says why; they resume when the branch is back.
A git lock another git process holds (a person's git commit with its editor
open) is waited for, never a reason to fail a job; /healthz reports it. One
kk serve serves a work tree (.ai/kenkeep/.state/serve.lock); git lock files a
killed kk serve left are removed when the next one starts.

--push-every D, when origin exists, fetches, rebases the server's commits
onto origin's branch and pushes at once, between jobs, every D, then commits
and pushes the index files regenerated for the merged tree; a push refused
because origin moved is tried again at once (ten rounds), any other failure
at the next tick. A rebase is never left halfway.

Each job's transaction first finds what changed in the tree since the last
one (a person's edit, a git checkout, another kk process): on Linux kk serve
asks the kernel (inotify) which folders changed instead of stat'ing every
leaf, and walks the whole tree whenever it cannot tell (the first job, a
queue overflow, a folder renamed, a network file system). --no-watch walks at
every job.

SIGINT, SIGTERM or SIGHUP, to kk serve or to its whole process group, stops
accepting requests, lets the current job finish (git runs in a process group
of its own and is not signalled), and exits 0; a job waiting for another git
process's lock is resumed at the next start instead. The log (text) goes to
stderr.`,
		Example: `  kk serve
  kk serve --root ~/notes --addr 127.0.0.1:9090
  kk serve --addr 0.0.0.0:9090 --token-file ~/.config/kk/token --push-every 5m
  KK_LLM_PROVIDER=ollama KK_LLM_MODEL=llama3.2 kk serve`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.pushEvery < 0 {
				return usagef("--push-every %s: give a positive duration, such as 5m", o.pushEvery)
			}
			return runServe(cmd.Context(), app, o)
		},
	}
	cmd.Flags().StringVar(&o.addr, "addr", "127.0.0.1:9090", "address to listen on (host:port; port 0 picks a free one)")
	cmd.Flags().StringVar(&o.tokenFile, "token-file", "", "file holding the bearer token requests must carry (needed beyond loopback)")
	cmd.Flags().DurationVar(&o.pushEvery, "push-every", 0, "fetch, rebase and push to origin this often, between jobs (0: never)")
	cmd.Flags().StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	cmd.Flags().BoolVar(&o.noWatch, "no-watch", false, "find what changed in the tree by a walk of every leaf at each job, not the kernel's reports")
	return cmd
}

// serveRoot is the folder kk serve serves: --root, else the knowledge base
// found upwards, else the working folder.
func serveRoot(app *App) (string, error) {
	if app.Root != "" {
		return app.Root, nil
	}
	wd, err := app.Getwd()
	if err != nil {
		return "", err
	}
	if k, err := store.Find(wd); err == nil {
		return k.Root, nil
	}
	return wd, nil
}

func runServe(ctx context.Context, app *App, o serveOpts) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return usagef("--log-level %q: want debug, info, warn or error", o.logLevel)
	}
	log := slog.New(slog.NewTextHandler(app.IO.Err, &slog.HandlerOptions{Level: level}))
	token := ""
	if o.tokenFile != "" {
		var err error
		if token, err = app.readTokenFile(o.tokenFile); err != nil {
			return err
		}
		if err := httpapi.CheckTokenLength(o.tokenFile, token); err != nil {
			return err
		}
	}
	if err := httpapi.ListenAddr(o.addr, token); err != nil {
		return &UsageError{Msg: err.Error()}
	}
	var delay time.Duration
	if v := app.Getenv(EnvServeTestDelay); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%s=%q: %w", EnvServeTestDelay, v, err)
		}
		delay = d
	}
	root, err := serveRoot(app)
	if err != nil {
		return err
	}
	// The page answers only loopback names when kk serve listens on
	// loopback, as kk browse does, against DNS rebinding.
	_, notLoopback := loopbackAddr(o.addr)
	gc := serve.GCPercent
	if app.Getenv("GOGC") != "" {
		gc = 0 // GOGC rules
	}
	// The signal's context ends the waits of a job's commit for locks
	// other git processes hold (the job then resumes at the next start);
	// what the worker started, git included, it finishes. SIGHUP (the
	// terminal closed, an ssh session dropped) stops it the same way:
	// Go's default ended the process in the middle of a commit.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	// A log line written into a pipe whose reader has gone (`kk serve
	// 2>&1 | grep -m1 listening`, a tee ended, a log collector
	// restarted) would kill the process with SIGPIPE, Go's default for
	// stderr, at start or in the middle of a job. With the signal caught
	// the write fails with EPIPE instead: the log is lost, the server
	// goes on.
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	defer signal.Stop(sigpipe)
	return server.Run(ctx, server.Options{
		Root: root, Init: store.InitOptions{Version: releaseVersion(), Now: app.Now(), Command: app.Command},
		Addr: o.addr, Token: token, LoopbackOnly: notLoopback == nil, PushEvery: o.pushEvery,
		Logger: log, Now: app.Now, Getenv: app.Getenv, Harnesses: app.harnesses(), GCPercent: gc, Delay: delay, NoWatch: o.noWatch,
	})
}
