package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/web"
)

type browseOpts struct {
	addr string
	open bool
}

func newBrowseCmd(app *App) *cobra.Command {
	var o browseOpts
	cmd := &cobra.Command{
		Use:   "browse",
		Short: "Browse the knowledge base in a web browser (read-only, on loopback)",
		Long: `Serve a read-only web page of the knowledge base on this machine's loopback
interface and print its URL (http://127.0.0.1:PORT/) on stdout; --json
prints {"url"} instead. The page shows the folder tree with its summaries,
searches as you type (the search kk search runs), renders each leaf with
its edges and changelog, lists the molecules with their atoms, and draws
the traceability graph. It needs no network: the page's stylesheet and
script are built into kk. It only reads: every request but GET and HEAD
is refused, and nothing is written to the knowledge tree.

--addr picks the address (default 127.0.0.1:0, a free port). It must be a
loopback address (127.0.0.1, ::1) or localhost: the page serves the
whole knowledge base to whoever can reach it, so kk browse refuses any
other. Requests must name a loopback host too, so that no web site can
read the page through DNS rebinding. --open also opens the URL in the
default browser ($BROWSER, else xdg-open, open or the Windows shell).

The server runs until interrupted (Ctrl-C, SIGINT or SIGTERM), then
finishes the requests under way and exits 0. See docs/browse.md.`,
		Example: `  kk browse
  kk browse --addr 127.0.0.1:8080 --open`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBrowse(cmd.Context(), app, o)
		},
	}
	cmd.Flags().StringVar(&o.addr, "addr", "127.0.0.1:0", "loopback address to listen on (port 0: any free port)")
	cmd.Flags().BoolVar(&o.open, "open", false, "open the page in the default web browser")
	return cmd
}

// loopbackAddr checks that addr is a loopback host and a port, and
// returns the address to listen on (localhost becomes 127.0.0.1, so that
// the printed URL names the interface actually bound).
func loopbackAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", usagef("--addr %q: want host:port, e.g. 127.0.0.1:8080 (%v)", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return "", usagef("--addr %q: kk browse listens only on a loopback address (127.0.0.1, ::1 or localhost), since the page serves the whole knowledge base to whoever reaches it", addr)
	}
	return net.JoinHostPort(host, port), nil
}

func runBrowse(ctx context.Context, app *App, o browseOpts) error {
	addr, err := loopbackAddr(o.addr)
	if err != nil {
		return err
	}
	k, err := app.KB()
	if err != nil {
		return err
	}
	defer func() { _ = k.Close() }()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A note written into a pipe whose reader has gone (`kk browse 2>&1 |
	// grep -m1 http` ends after the URL) would kill the process with
	// SIGPIPE, Go's default for stdout and stderr, as kk serve's log
	// would. With the signal caught the write fails with EPIPE instead:
	// the note is lost, the page is still served.
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	defer signal.Stop(sigpipe)
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	url := "http://" + ln.Addr().String() + "/"
	srv := &http.Server{
		Handler:           web.New(k, web.Options{LoopbackOnly: true}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if app.JSON {
		err = app.printJSON(map[string]string{"url": url})
	} else {
		_, err = fmt.Fprintln(app.IO.Out, url)
	}
	if err != nil {
		_ = srv.Close()
		return err
	}
	app.notef("serving %s read-only at %s; press Ctrl-C to stop", k.Rel(k.Dir), url)
	if o.open {
		if err := openBrowser(app, url); err != nil {
			app.warnf("could not open a browser (%v); open %s yourself", err, url)
		}
	}
	select {
	case err := <-served:
		return fmt.Errorf("serving %s: %w", url, err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return srv.Close() // requests still running after the grace period are cut
		}
		return fmt.Errorf("stopping the server: %w", err)
	}
	return nil
}

// openBrowser starts the user's browser on url without waiting for it.
func openBrowser(app *App, url string) error {
	var name string
	var args []string
	switch b := app.Getenv("BROWSER"); {
	case strings.TrimSpace(b) != "":
		f := strings.Fields(b)
		name, args = f[0], f[1:]
	case runtime.GOOS == "darwin":
		name = "open"
	case runtime.GOOS == "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler"}
	default:
		name = "xdg-open"
	}
	c := exec.Command(name, append(args, url)...)
	if err := c.Start(); err != nil {
		return err
	}
	go func() { _ = c.Wait() }()
	return nil
}
