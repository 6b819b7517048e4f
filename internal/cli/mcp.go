package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/mcpserver"
	"github.com/kk-project/kk/internal/store"
)

type mcpOpts struct {
	logFile  bool
	logLevel string     // --log-level, or $KK_MCP_LOG_LEVEL
	level    slog.Level // logLevel parsed, defaulted
}

func newMCPCmd(app *App) *cobra.Command {
	var o mcpOpts
	cmd := &cobra.Command{
		Use: "mcp",
		Example: `  kk mcp
  kk mcp --log-file --log-level info`,
		Annotations: map[string]string{noJSON: "the MCP protocol on stdout"},
		Short:       "Serve the knowledge base to an MCP client over stdio",
		Long: `Run kk's MCP server over stdin and stdout (newline-delimited JSON-RPC), for
a coding agent or editor that starts it as a subprocess. kk init
--harnesses registers this command in each harness's MCP settings.

Tools: query_graph, manage_graph, manage_changelog (the atom and molecule
graph), kb_query, kb_upsert, kb_delete, kb_check (traceability entities and
edges), kk_search, kk_read and kk_entry (the knowledge tree). The names use
underscores because model APIs refuse dots in tool names. Resources:
kk://entry, kk://node/{id} and kk://index/{path} (folder index.md files).

Every request works on the branch checked out at that moment: a server left
running across "git checkout" serves the new branch on its next request.
Writes take the knowledge base's writer lock, so several servers (one per
agent session) can share one tree.

A line that is not a valid JSON-RPC 2.0 message (not JSON, no method, a
null or object id, a line over the size cap, ...) is answered with a
JSON-RPC error, -32700 or -32600, and the session goes on; so is a batch,
unless the session's protocol version is 2025-03-26, which has batches.
docs/limits.md lists the limits. Such refusals, and the client's mistakes
about the session (a request before initialize, a second initialize),
are logged as warnings: level ERROR is for kk's own failures.

Nothing but protocol messages is written to stdout. The log goes to
stderr, warnings and errors only, since harnesses show stderr as errors;
--log-level info adds the session's events and a line per call. With
--log-file the log is appended to .ai/kenkeep/_logs/mcp-<date>.log
instead, at level info unless --log-level says otherwise (on stderr,
with a warning, when that file cannot be written: a read-only checkout).
KK_MCP_LOG_LEVEL sets the level when the flag is not given.

Started where there is no knowledge base, the server still answers
initialize (a client would show a server that exits at once as a broken
pipe, with no reason), warns on stderr, and answers each tool call with a
CONFIG_ERROR saying what to run (kk init); the first call after the
knowledge base exists uses it, with no restart.

The server stops, with exit status 0, when the client closes stdin or its
end of the connection.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			level := o.logLevel
			if level == "" {
				level = app.Getenv("KK_MCP_LOG_LEVEL")
			}
			if level == "" {
				level = "warn"
				if o.logFile {
					level = "info"
				}
			}
			if err := o.level.UnmarshalText([]byte(level)); err != nil {
				return usagef("--log-level %q: want debug, info, warn or error", level)
			}
			return runMCP(cmd.Context(), app, o)
		},
	}
	cmd.Flags().BoolVar(&o.logFile, "log-file", false, "log to .ai/kenkeep/_logs/mcp-<date>.log instead of stderr")
	cmd.Flags().StringVar(&o.logLevel, "log-level", "", "log level: debug, info, warn or error (default warn, info with --log-file; env KK_MCP_LOG_LEVEL)")
	return cmd
}

func runMCP(ctx context.Context, app *App, o mcpOpts) (err error) {
	// A write to a closed stdout would kill the process with SIGPIPE. With
	// the signal caught it fails with EPIPE instead, which the server takes
	// for the client leaving. Caught first: a warning on a stderr whose
	// reader has gone (the log file cannot be opened) killed it before.
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	defer signal.Stop(sigpipe)
	// Without a knowledge base the session starts all the same: a client
	// shows a server that exits before initialize as a dead pipe, with no
	// reason. Its tools answer with the reason (run kk init) until a call
	// finds one.
	k, kbErr := app.KB()
	var found *store.KB
	defer func() {
		// The server makes its knowledge base value once: every request
		// shares its index handles, released when the server stops.
		if found != nil {
			_ = found.Close()
		}
	}()
	logTo := app.IO.Err
	if o.logFile && kbErr == nil {
		// The day's log file, .ai/kenkeep/_logs/mcp-<date>.log.
		openLog := func() (*os.File, error) {
			// A log that is a named pipe is refused at once (KB.OpenLog):
			// opening it for writing would wait for a reader, for ever
			// when none comes, and the server would never answer.
			name := "mcp-" + app.Now().UTC().Format("2006-01-02") + ".log"
			f, err := k.OpenLog(name)
			if err != nil {
				return nil, fmt.Errorf("opening the log file %s: %w", k.Rel(filepath.Join(k.LogsDir(), name)), err)
			}
			return f, nil
		}
		// A log file that cannot be opened (a read-only checkout) costs
		// the log file, never the server: the agent's tools matter more.
		f, ferr := openLog()
		if ferr != nil {
			fmt.Fprintf(app.IO.Err, "kk: warning: logging to stderr instead: %v\n", ferr)
		} else {
			defer func() { err = errors.Join(err, f.Close()) }()
			logTo = f
		}
	}
	log := slog.New(slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: o.level}))
	out := app.IO.Out
	if f, ok := out.(*os.File); ok && f == os.Stdout {
		// stdout belongs to the protocol: anything in the process that
		// prints to os.Stdout lands on stderr instead.
		os.Stdout = os.Stderr
		defer func() { os.Stdout = f }()
	}
	opts := mcpserver.Options{Version: versionString(), Logger: log}
	var srv *mcp.Server
	if kbErr == nil {
		found = k
		srv = mcpserver.New(k, opts)
		log.Info("serving", "root", k.Root, "pid", os.Getpid())
	} else {
		if o.logFile {
			fmt.Fprintf(app.IO.Err, "kk: warning: logging to stderr instead: there is no knowledge base to hold the log file\n")
		}
		log.Warn("no knowledge base found; tools answer with an error until one exists", "error", kbErr.Error())
		srv = mcpserver.NewFinding(func() (*store.KB, error) {
			k, err := app.KB()
			if err == nil {
				found = k
			}
			return k, err
		}, opts)
		log.Info("serving", "pid", os.Getpid())
	}
	if err := mcpserver.Run(ctx, srv, app.IO.In, out, log); err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	log.Info("client disconnected")
	return nil
}
