package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/serve"
)

// DefaultServer is where kk client looks for kk serve when neither
// --server nor KK_SERVER names it.
const DefaultServer = "http://127.0.0.1:9090"

// clientPollInterval is how often --wait first polls a job; tests shorten it.
var clientPollInterval = 200 * time.Millisecond

// clientOpts are the flags every kk client subcommand shares.
type clientOpts struct {
	server    string
	tokenFile string
	wait      bool
	timeout   time.Duration
}

func newClientCmd(app *App) *cobra.Command {
	var o clientOpts
	cmd := &cobra.Command{
		Use:   "client",
		Short: "Post, search and read notes on a kk serve (or knowledged) server",
		Long: `Send notes to a running kk serve and read from it, over its HTTP API
(the same API knowledged serves, so kk client also talks to knowledged).

The server is --server, else KK_SERVER, else the one kk serve records in
.ai/kenkeep/.state/serve.url while it runs over this repository, else
` + DefaultServer + `. A server that
listens beyond loopback wants a bearer token: --token-file names a private
file (mode 0600) holding it on one line, else KK_SERVE_TOKEN holds it.

Writes (post, edit, delete) are queued by the server: they print the job
id, or with --wait the job's end as "<job id><TAB><status><TAB><path>".
Unlike knowledged's kc, kk client exits 1 when the server answers with an
HTTP error or a job it waited for failed; the reason goes to stderr.
--json prints the server's answer as JSON with a schema_version.

kc's invocations work too, so a script written for kc runs with kk client
in its place: --path, --id and --question for the argument, --content,
--file and --tags, get --query [--mode raw], get --tag/--tags [--match
all] [--mode raw], --timeout in seconds (120), and long flags with one
dash (-server, -wait), as kc's Go flags take them.`,
	}
	cmd.PersistentFlags().StringVar(&o.server, "server", "", "server URL (default: KK_SERVER, else the running kk serve's .ai/kenkeep/.state/serve.url, else "+DefaultServer+")")
	cmd.PersistentFlags().StringVar(&o.tokenFile, "token-file", "", "file holding the server's bearer token (default: KK_SERVE_TOKEN)")
	writeFlags := func(c *cobra.Command) {
		c.Flags().BoolVar(&o.wait, "wait", false, "wait for the job to finish; exit 1 when it fails")
		o.timeout = 2 * time.Minute
		c.Flags().Var((*waitTimeout)(&o.timeout), "timeout", "how long --wait waits: a duration (2m), or seconds (120)")
	}
	for _, sub := range []*cobra.Command{
		newClientPostCmd(app, &o), newClientEditCmd(app, &o), newClientDeleteCmd(app, &o),
		newClientGetCmd(app, &o), newClientJobCmd(app, &o), newClientSearchCmd(app, &o),
		newClientTagsCmd(app, &o), newClientRecentCmd(app, &o), newClientAskCmd(app, &o),
	} {
		if sub.Name() == "post" || sub.Name() == "edit" || sub.Name() == "delete" {
			writeFlags(sub)
		}
		run := sub.RunE
		sub.RunE = func(c *cobra.Command, args []string) error {
			if f := c.Flags().Lookup("timeout"); f != nil && o.timeout <= 0 {
				return usagef("--timeout must be a positive duration, such as 2m, not %s", f.Value)
			}
			if c.Flags().Lookup("body-file") != nil && c.Flags().Changed("body") && c.Flags().Changed("body-file") {
				return usagef("--body and --body-file both give the note's text; give one")
			}
			err := run(c, args)
			if ns := (*noServerError)(nil); errors.As(err, &ns) {
				return ns
			}
			return err
		}
		cmd.AddCommand(sub)
	}
	return cmd
}

// waitTimeout is --timeout: a Go duration (2m, 90s), or a number of
// seconds as knowledged's kc reads its --timeout (120).
type waitTimeout time.Duration

func (t *waitTimeout) String() string { return time.Duration(*t).String() }

func (t *waitTimeout) Type() string { return "duration" }

func (t *waitTimeout) Set(s string) error {
	if secs, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(secs, 0) && !math.IsNaN(secs) {
		if secs > float64(math.MaxInt64)/float64(time.Second) {
			return fmt.Errorf("%s seconds is too long", s)
		}
		*t = waitTimeout(secs * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration such as 2m, or a number of seconds", s)
	}
	*t = waitTimeout(d)
	return nil
}

// apiClient builds the HTTP client from the flags and the environment.
// The server is --server, else KK_SERVER, else the URL a kk serve running
// over this repository recorded (.ai/kenkeep/.state/serve.url), else
// DefaultServer.
func (o *clientOpts) apiClient(app *App) (*httpapi.Client, error) {
	server, from := o.server, "--server"
	if server == "" {
		server, from = app.Getenv("KK_SERVER"), "KK_SERVER"
	}
	if server == "" {
		from = filepath.Join(".ai", "kenkeep", ".state", serve.URLFile)
		var err error
		if server, err = app.announcedServer(from); err != nil {
			return nil, err
		}
	}
	if server == "" {
		server = DefaultServer
	}
	if err := checkServerURL(server, from); err != nil {
		return nil, err
	}
	token := strings.TrimSpace(app.Getenv("KK_SERVE_TOKEN"))
	if o.tokenFile != "" {
		var err error
		if token, err = app.readTokenFile(o.tokenFile); err != nil {
			return nil, err
		}
	}
	hc := &http.Client{Timeout: httpapi.WriteTimeout, Transport: noServerHint{server: server}}
	return &httpapi.Client{BaseURL: server, Token: token, HTTP: hc}, nil
}

// checkServerURL refuses a server URL that names no server: one not
// http:// or https://, without a host, or with a query or a fragment
// (the API's routes are added to the URL's path, which a query or a
// fragment would swallow). from names where the URL came from.
func checkServerURL(server, from string) error {
	if !strings.HasPrefix(server, "http://") && !strings.HasPrefix(server, "https://") {
		return usagef("%s %q must be an http:// or https:// URL", from, server)
	}
	u, err := url.Parse(server)
	switch {
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return usagef("%s %q is not a valid URL: %v", from, server, err)
	case u.Host == "":
		return usagef("%s %q names no host: name the server, such as %s", from, server, DefaultServer)
	case u.RawQuery != "" || u.ForceQuery:
		return usagef("%s %q must not have a query (?%s): name the server alone, such as %s", from, server, u.RawQuery, DefaultServer)
	case u.Fragment != "" || strings.Contains(server, "#"):
		return usagef("%s %q must not have a fragment (#%s): name the server alone, such as %s", from, server, u.Fragment, DefaultServer)
	}
	return nil
}

// announcedServer is the URL a kk serve running over the knowledge base
// of this repository (--root, KK_ROOT, or found upwards) recorded in
// .ai/kenkeep/.state/serve.url (named file in errors), or "" when there
// is none.
//
// A URL off this machine's loopback is followed only while a kk serve
// holds its lock over the repository (it wrote the file at its start):
// otherwise the file did not come from a server here (a hostile
// repository's, committed with git add -f, or copied with it), and
// following it would send every note posted, KK_SERVE_TOKEN and every
// search to whoever it names, and give an agent that searches that
// server's answers. It is refused, naming the file. A loopback URL, as a
// killed server leaves, is followed as before: it reaches this machine
// alone.
func (a *App) announcedServer(file string) (string, error) {
	k, err := a.findKB()
	if err != nil {
		return "", nil
	}
	data, err := os.ReadFile(filepath.Join(k.StateDir(), serve.URLFile))
	if err != nil {
		return "", nil
	}
	raw := strings.TrimSpace(string(data))
	if !strings.HasPrefix(raw, "http://") && !strings.HasPrefix(raw, "https://") {
		return "", nil
	}
	if u, err := url.Parse(raw); err == nil && localHost(u.Hostname()) {
		return raw, nil
	}
	if serve.Running(k) {
		return raw, nil
	}
	return "", fmt.Errorf("%s names %s, a server off this machine's loopback, and no kk serve runs over this repository: kk serve did not write it (a file that came with the repository?), and kk client sends nothing there; name the server with --server or KK_SERVER, or start kk serve in the repository", file, raw)
}

// localHost reports whether host names this machine's loopback (or its
// unspecified address, which reaches it): localhost, 127.0.0.0/8, ::1,
// 0.0.0.0, ::.
func localHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

// noServerHint is the client's transport: when nothing listens at the
// server's address, the error says so and how to start a server, instead
// of a bare "connection refused".
type noServerHint struct{ server string }

func (t noServerHint) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil && errors.Is(err, syscall.ECONNREFUSED) {
		return nil, &noServerError{server: t.server, err: err}
	}
	return resp, err
}

// noServerError is the error of a request nothing answered. The client
// commands return it as it is, without the request line net/http puts in
// front of it (Get "http://…/search?…": …), which tells a user nothing.
type noServerError struct {
	server string
	err    error
}

func (e *noServerError) Error() string {
	return fmt.Sprintf("no server answers at %s (%v); start one in the repository with kk serve, or name a running one with --server or KK_SERVER", e.server, e.err)
}

func (e *noServerError) Unwrap() error { return e.err }

// finishWrite prints an accepted job, waiting for its end with --wait.
func finishWrite(ctx context.Context, app *App, o *clientOpts, c *httpapi.Client, j httpapi.JobStatus) error {
	if !o.wait {
		if app.JSON {
			return app.printJSON(j)
		}
		_, err := fmt.Fprintln(app.IO.Out, j.JobID)
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	final, err := c.Wait(wctx, j.JobID, clientPollInterval)
	if err != nil {
		return err
	}
	return printJob(app, final)
}

// printJob prints a job and fails when it failed.
func printJob(app *App, j httpapi.JobStatus) error {
	var err error
	if app.JSON {
		err = app.printJSON(j)
	} else {
		_, err = fmt.Fprintf(app.IO.Out, "%s\t%s\t%s\n", j.JobID, j.Status, j.Path)
	}
	if err != nil {
		return err
	}
	if j.Status == "failed" {
		return fmt.Errorf("job %s failed: %s", j.JobID, j.Error)
	}
	if !app.JSON && !j.Final() && j.WaitingFor != "" {
		// A job the server holds (a lock, the branch switched): why, on
		// stderr, stdout keeping its one line.
		_, err = fmt.Fprintf(app.IO.Err, "kk: job %s waits: %s\n", j.JobID, j.WaitingFor)
	}
	return err
}

// readContent returns the note's text: --content, else the --file
// (- is standard input), else standard input when it is not a terminal.
// flag is the file's flag as the command line typed it (--body-file or
// --file), which an error names.
func readContent(app *App, content, file, flag string, contentSet bool) (string, error) {
	switch {
	case contentSet:
		return content, nil
	case file == "-" || (file == "" && !app.IO.InTTY):
		data, _, err := app.readLimited("-", flag, httpapi.DefaultMaxBody)
		return string(data), err
	case file != "":
		data, _, err := app.readLimited(file, flag, httpapi.DefaultMaxBody)
		return string(data), err
	}
	return "", nil
}

func splitTags(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// argOrFlag is a command's one operand, given as its argument or, as
// knowledged's kc gives it, as a flag (--path, --id). A blank one is not
// given: what is named when neither gave one.
func argOrFlag(args []string, flagValue, flag, cmd, what string) (string, error) {
	arg := ""
	if len(args) > 0 && strings.TrimSpace(args[0]) != "" {
		arg = args[0]
	}
	if strings.TrimSpace(flagValue) == "" {
		flagValue = ""
	}
	switch {
	case arg != "" && flagValue != "":
		return "", usagef("give %s as the argument or as --%s, not both", what, flag)
	case arg != "":
		return arg, nil
	case flagValue == "":
		return "", usagef("%s needs %s: the argument or --%s", cmd, what, flag)
	}
	return flagValue, nil
}

type clientPostOpts struct {
	content, file, hint, title, typ string
	tags                            []string
	contentSet                      bool
	fileFlag                        string // --body-file as typed (--file, knowledged's kc name)
}

func newClientPostCmd(app *App, co *clientOpts) *cobra.Command {
	var o clientPostOpts
	cmd := &cobra.Command{
		Use:   "post",
		Short: "Submit a note; the server's organizer places it",
		Long: `Submit a note. Its text is --body, else the --body-file (- for standard
input), else standard input. The server decides where it goes and commits
it as store(<job id>): <path>.`,
		Example: `  kk client post --title "Go channels" --tag golang,concurrency < channels.md
  kk client post --body "Run make lint before pushing." --wait`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.contentSet = cmd.Flags().Changed("body")
			o.fileFlag = app.flagName(cmd.Flags(), "body-file")
			return runClientPost(cmd.Context(), app, co, o)
		},
	}
	cmd.Flags().StringVar(&o.content, "body", "", "the note's text")
	cmd.Flags().StringVar(&o.file, "body-file", "", "read the note's text from a file (- for standard input)")
	cmd.Flags().StringVar(&o.hint, "hint", "", "a hint for the organizer (a topic, a folder)")
	cmd.Flags().StringVar(&o.title, "title", "", "the note's title")
	cmd.Flags().StringSliceVar(&o.tags, "tag", nil, "tag (repeatable, or comma-separated: golang,concurrency)")
	cmd.Flags().StringVar(&o.typ, "type", "", "the kind of note (practice, map, …; kk serve only; default: the organizer chooses)")
	return cmd
}

func runClientPost(ctx context.Context, app *App, co *clientOpts, o clientPostOpts) error {
	content, err := readContent(app, o.content, o.file, o.fileFlag, o.contentSet)
	if err != nil {
		return err
	}
	if strings.TrimSpace(content) == "" {
		return usagef("post needs the note's text: --body, --body-file or standard input")
	}
	c, err := co.apiClient(app)
	if err != nil {
		return err
	}
	j, err := c.Post(ctx, httpapi.PostRequest{Content: content, Hint: o.hint, Title: o.title, Tags: splitTags(strings.Join(o.tags, ",")), Type: o.typ})
	if err != nil {
		return err
	}
	return finishWrite(ctx, app, co, c, j)
}

type clientEditOpts struct {
	path, content, file, title, description string
	tags                                    []string
	contentSet                              bool
	fileFlag                                string // --body-file as typed (--file, knowledged's kc name)
}

func newClientEditCmd(app *App, co *clientOpts) *cobra.Command {
	var o clientEditOpts
	cmd := &cobra.Command{
		Use:   "edit <path>",
		Short: "Replace a note's text or metadata",
		Long: `Edit the note at <path> (relative to nodes/, or to the repository): --body or --body-file
replaces its text; --title, --description and --tag replace those fields.
Without new text only the metadata changes. The server commits the edit
as edit(<job id>): <path>.`,
		Example: `  kk client edit go/channels.md --body-file channels.md --wait
  kk client edit go/channels.md --tag golang,channels`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.path, err = argOrFlag(args, o.path, "path", "edit", "the note's path"); err != nil {
				return err
			}
			o.contentSet = cmd.Flags().Changed("body")
			o.fileFlag = app.flagName(cmd.Flags(), "body-file")
			if !o.contentSet && o.file == "" && o.title == "" && o.description == "" && len(o.tags) == 0 {
				return usagef("edit needs new text (--body, --body-file) or metadata (--title, --description, --tag)")
			}
			return runClientEdit(cmd.Context(), app, co, o)
		},
	}
	cmd.Flags().StringVar(&o.content, "body", "", "the note's new text")
	cmd.Flags().StringVar(&o.file, "body-file", "", "read the new text from a file (- for standard input)")
	cmd.Flags().StringVar(&o.title, "title", "", "the new title")
	cmd.Flags().StringVar(&o.description, "description", "", "the new one-line description")
	cmd.Flags().StringSliceVar(&o.tags, "tag", nil, "the new tags (repeatable, or comma-separated)")
	hiddenFlag(cmd, &o.path, "path", "the note's path (knowledged's kc form of the argument)")
	return cmd
}

// hiddenFlag adds a string flag that knowledged's kc takes in place of
// kk client's argument; hidden, as the argument is kk client's form.
func hiddenFlag(cmd *cobra.Command, p *string, name, usage string) {
	cmd.Flags().StringVar(p, name, "", usage)
	_ = cmd.Flags().MarkHidden(name)
}

func runClientEdit(ctx context.Context, app *App, co *clientOpts, o clientEditOpts) error {
	content := ""
	if o.contentSet || o.file != "" {
		var err error
		if content, err = readContent(app, o.content, o.file, o.fileFlag, o.contentSet); err != nil {
			return err
		}
	}
	c, err := co.apiClient(app)
	if err != nil {
		return err
	}
	j, err := c.Edit(ctx, httpapi.EditRequest{Path: o.path, Content: content, Title: o.title, Description: o.description, Tags: splitTags(strings.Join(o.tags, ","))})
	if err != nil {
		return err
	}
	return finishWrite(ctx, app, co, c, j)
}

func newClientDeleteCmd(app *App, co *clientOpts) *cobra.Command {
	var path string
	cmd := &cobra.Command{
		Use:     "delete <path>",
		Example: `  kk client delete golang/channels.md --wait`,
		Short:   "Delete a note",
		Long:    `Delete the note at <path> (relative to nodes/, or to the repository). The server commits it as delete(<job id>): <path>.`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := argOrFlag(args, path, "path", "delete", "the note's path")
			if err != nil {
				return err
			}
			return runClientDelete(cmd.Context(), app, co, p)
		},
	}
	hiddenFlag(cmd, &path, "path", "the note's path (knowledged's kc form of the argument)")
	return cmd
}

func runClientDelete(ctx context.Context, app *App, co *clientOpts, path string) error {
	c, err := co.apiClient(app)
	if err != nil {
		return err
	}
	j, err := c.Delete(ctx, path)
	if err != nil {
		return err
	}
	return finishWrite(ctx, app, co, c, j)
}

func newClientJobCmd(app *App, co *clientOpts) *cobra.Command {
	var id string
	cmd := &cobra.Command{
		Use:     "job <id>",
		Example: `  kk client job 01J9ZK3Q5W2X8Y7V6T5R4Q3P2N`,
		Short:   "Show a job's status",
		Long: `Print a job as "<job id><TAB><status><TAB><path>". A failed job prints
its error to stderr and exits 1. A job kk serve holds (queued or processing
while a lock another git process left is in place, another branch is
checked out, …) prints on stderr what it waits for.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			jobID, err := argOrFlag(args, id, "id", "job", "the job's id")
			if err != nil {
				return err
			}
			c, err := co.apiClient(app)
			if err != nil {
				return err
			}
			j, err := c.Job(cmd.Context(), jobID)
			if err != nil {
				return err
			}
			return printJob(app, j)
		},
	}
	hiddenFlag(cmd, &id, "id", "the job's id (knowledged's kc form of the argument)")
	return cmd
}

// clientGetOpts are kk client get's flags: a path (the argument, or
// --path), or the searches of knowledged's kc get (--query, --tag,
// --tags, --match, --mode), which kk client search also runs.
type clientGetOpts struct {
	path, query, match, mode string
	tags                     []string
}

func newClientGetCmd(app *App, co *clientOpts) *cobra.Command {
	var o clientGetOpts
	cmd := &cobra.Command{
		Use: "get <path>",
		Example: `  kk client get golang/channels.md
  kk client get golang/channels.md --json`,
		Short: "Print a note",
		Long: `Print the note at <path> (relative to nodes/, or to the repository) as it is stored, front matter included.

knowledged's kc forms work too: --path P for the argument; --query Q
answers Q (with --mode raw: the notes that match, as kk client search Q);
--tag or --tags with --match any|all lists the notes with the tags (with
--mode raw: whole), as kk client search --tag.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(o.path) == "" {
				o.path = ""
			}
			if len(args) > 0 && strings.TrimSpace(args[0]) != "" {
				if o.path != "" {
					return usagef("give the path as the argument or as --path, not both")
				}
				o.path = args[0]
			}
			search, err := o.search()
			if err != nil {
				return err
			}
			if search != nil {
				return runClientSearch(cmd.Context(), app, co, *search)
			}
			c, err := co.apiClient(app)
			if err != nil {
				return err
			}
			d, err := c.Get(cmd.Context(), o.path)
			if err != nil {
				return err
			}
			if app.JSON {
				return app.printJSON(d)
			}
			_, err = io.WriteString(app.IO.Out, d.Content)
			return err
		},
	}
	hiddenFlag(cmd, &o.path, "path", "the note's path (knowledged's kc form of the argument)")
	hiddenFlag(cmd, &o.query, "query", "answer this question from the notes; with --mode raw, the notes that match it")
	hiddenFlag(cmd, &o.match, "match", "with --tag: any (the default) or all")
	hiddenFlag(cmd, &o.mode, "mode", "raw: the notes whole; synthesize (the default for --query): an answer")
	cmd.Flags().StringSliceVar(&o.tags, "tag", nil, "list the notes with this tag (repeatable, or comma-separated)")
	_ = cmd.Flags().MarkHidden("tag")
	return cmd
}

// search is the search a kc-style get asks for, nil for a read by path.
func (o clientGetOpts) search() (*clientSearchOpts, error) {
	tags := splitTags(strings.Join(o.tags, ","))
	mode := strings.ToLower(o.mode)
	match := strings.ToLower(o.match)
	switch {
	case o.path != "" && (o.query != "" || len(o.tags) > 0):
		return nil, usagef("--path reads one note; --query and --tag search: give one")
	case o.query != "" && len(o.tags) > 0:
		return nil, usagef("--query searches words, --tag tags: give one")
	case o.match != "" && len(o.tags) == 0:
		return nil, usagef("--match goes with --tag")
	case match != "" && match != "any" && match != "all":
		return nil, usagef("--match must be any or all, not %q", o.match)
	case mode != "" && mode != "raw" && mode != "synthesize":
		return nil, usagef("--mode must be raw or synthesize, not %q", o.mode)
	case len(o.tags) > 0 && len(tags) == 0:
		return nil, usagef("--tag needs a tag")
	case o.path == "" && strings.TrimSpace(o.query) == "" && len(tags) == 0:
		return nil, usagef("get needs a path (the argument or --path), --query or --tag")
	case o.path != "":
		return nil, nil
	case len(tags) > 0:
		return &clientSearchOpts{tags: tags, all: match == "all", raw: mode == "raw"}, nil
	}
	return &clientSearchOpts{query: strings.TrimSpace(o.query), answer: mode != "raw"}, nil
}

type clientSearchOpts struct {
	query  string
	tags   []string
	all    bool
	raw    bool
	answer bool
	limit  int
}

func newClientSearchCmd(app *App, co *clientOpts) *cobra.Command {
	var o clientSearchOpts
	cmd := &cobra.Command{
		Use:   "search [<text>...]",
		Short: "Search a server's notes by words or tags, or ask them a question",
		Long: `With <text>, print the notes that best match it, each as a line
"=== <path> ===" followed by the note. With --answer, print the server's
answer to <text> drawn from the notes, and the notes it used on stderr.
With --tag (repeatable or comma-separated), list the notes carrying any of
the tags (every one with --all) as "<path><TAB><title><TAB><tags>"; --raw
prints them whole instead.`,
		Example: `  kk client search goroutine leaks
  kk client search --answer how do we cancel a worker
  kk client search --tag golang --tag concurrency --all`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.query = strings.TrimSpace(strings.Join(args, " "))
			switch {
			case len(o.tags) > 0 && o.query != "":
				return usagef("search takes words or --tag, not both")
			case len(o.tags) == 0 && o.query == "":
				return usagef("search needs words to look for, or --tag")
			case o.answer && len(o.tags) > 0:
				return usagef("--answer answers words, not tags")
			case o.all && len(o.tags) == 0:
				return usagef("--all goes with --tag")
			case o.limit < 0:
				return usagef("--limit must be 1 or more")
			}
			return runClientSearch(cmd.Context(), app, co, o)
		},
	}
	cmd.Flags().StringSliceVar(&o.tags, "tag", nil, "list the notes with this tag (repeatable, or comma-separated)")
	cmd.Flags().BoolVar(&o.all, "all", false, "with --tag: notes carrying every tag, not any")
	cmd.Flags().BoolVar(&o.raw, "raw", false, "with --tag: print the notes whole")
	cmd.Flags().BoolVar(&o.answer, "answer", false, "answer the text as a question from the notes (needs a model on the server)")
	cmd.Flags().IntVar(&o.limit, "limit", 0, "at most N notes for a word search (default: the server's, 5)")
	return cmd
}

func printDocs(app *App, docs []httpapi.Doc) error {
	if docs == nil {
		docs = []httpapi.Doc{}
	}
	if app.JSON {
		return app.printJSON(struct {
			Docs []httpapi.Doc `json:"docs"`
		}{docs})
	}
	for i, d := range docs {
		if i > 0 {
			fmt.Fprintln(app.IO.Out)
		}
		fmt.Fprintf(app.IO.Out, "=== %s ===\n%s", d.Path, d.Content)
		if !strings.HasSuffix(d.Content, "\n") {
			fmt.Fprintln(app.IO.Out)
		}
	}
	return nil
}

// tagsWanted describes the tags a search by tag asked for.
func tagsWanted(o clientSearchOpts) string {
	if len(o.tags) == 1 {
		return "the tag " + o.tags[0]
	}
	if o.all {
		return "every tag of " + strings.Join(o.tags, ", ")
	}
	return "any of the tags " + strings.Join(o.tags, ", ")
}

func runClientSearch(ctx context.Context, app *App, co *clientOpts, o clientSearchOpts) error {
	c, err := co.apiClient(app)
	if err != nil {
		return err
	}
	switch {
	case o.answer:
		a, err := c.Answer(ctx, o.query)
		if err != nil {
			return err
		}
		if app.JSON {
			return app.printJSON(a)
		}
		if len(a.Sources) > 0 {
			fmt.Fprintf(app.IO.Err, "sources: %s\n", strings.Join(a.Sources, ", "))
		}
		_, err = fmt.Fprintln(app.IO.Out, strings.TrimRight(a.Answer, "\n"))
		return err
	case len(o.tags) > 0 && o.raw:
		docs, err := c.ByTagsRaw(ctx, o.tags, o.all)
		if err != nil {
			return err
		}
		if len(docs) == 0 {
			app.noResults("no note on %s carries %s; kk client tags lists the tags", c.BaseURL, tagsWanted(o))
		}
		return printDocs(app, docs)
	case len(o.tags) > 0:
		notes, err := c.ByTags(ctx, o.tags, o.all)
		if err != nil {
			return err
		}
		if notes == nil {
			notes = []httpapi.TagDoc{}
		}
		if app.JSON {
			return app.printJSON(struct {
				Notes []httpapi.TagDoc `json:"notes"`
			}{notes})
		}
		if len(notes) == 0 {
			app.noResults("no note on %s carries %s; kk client tags lists the tags", c.BaseURL, tagsWanted(o))
		}
		for _, n := range notes {
			fmt.Fprintf(app.IO.Out, "%s\t%s\t%s\n", n.Path, n.Title, strings.Join(n.Tags, ","))
		}
		return nil
	}
	docs, err := c.Search(ctx, o.query, o.limit)
	if err != nil {
		return err
	}
	if len(docs) == 0 {
		app.noResults("no note on %s matches %q; kk client tags lists the tags, kk client recent the newest notes", c.BaseURL, o.query)
	}
	return printDocs(app, docs)
}

func newClientTagsCmd(app *App, co *clientOpts) *cobra.Command {
	return &cobra.Command{
		Use:     "tags",
		Example: `  kk client tags`,
		Short:   "List the tags and how many notes carry each",
		Long:    `Print one line per tag, "<tag><TAB><count>", sorted by tag.`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := co.apiClient(app)
			if err != nil {
				return err
			}
			tags, err := c.Tags(cmd.Context())
			if err != nil {
				return err
			}
			if tags == nil {
				tags = []httpapi.TagCount{}
			}
			if app.JSON {
				return app.printJSON(struct {
					Tags []httpapi.TagCount `json:"tags"`
				}{tags})
			}
			if len(tags) == 0 {
				app.noResults("no note on %s has a tag", c.BaseURL)
			}
			for _, t := range tags {
				fmt.Fprintf(app.IO.Out, "%s\t%d\n", t.Tag, t.Count)
			}
			return nil
		},
	}
}

func newClientRecentCmd(app *App, co *clientOpts) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:     "recent",
		Example: `  kk client recent --limit 5`,
		Short:   "List the notes stored most recently",
		Long: `Print the newest notes stored through the server, newest first, one a
line: "<created_at><TAB><job id><TAB><path><TAB><tags>", the time in
RFC 3339 UTC.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 0 {
				return usagef("--limit must be 1 or more")
			}
			c, err := co.apiClient(app)
			if err != nil {
				return err
			}
			posts, err := c.Recent(cmd.Context(), limit)
			if err != nil {
				return err
			}
			if posts == nil {
				posts = []httpapi.Post{}
			}
			if app.JSON {
				return app.printJSON(struct {
					Posts []httpapi.Post `json:"posts"`
				}{posts})
			}
			if len(posts) == 0 {
				app.noResults("no note has been posted to %s yet; kk client post adds one", c.BaseURL)
			}
			for _, p := range posts {
				fmt.Fprintf(app.IO.Out, "%s\t%s\t%s\t%s\n", p.CreatedAt.UTC().Format(time.RFC3339), p.JobID, p.Path, strings.Join(p.Tags, ","))
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "at most N notes (default: the server's, 20)")
	return cmd
}

func newClientAskCmd(app *App, co *clientOpts) *cobra.Command {
	var question string
	cmd := &cobra.Command{
		Use:     "ask <question>...",
		Example: `  kk client ask how do goroutines stop`,
		Short:   "Have the server's model draft a note answering a question",
		Long: `Print a draft note answering <question>: the answer on stdout, its
title and tags on stderr. Nothing is stored; post the draft to keep it.
The server needs a model (503 without one).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			q := strings.TrimSpace(strings.Join(args, " "))
			switch {
			case q != "" && question != "":
				return usagef("give the question as the arguments or as --question, not both")
			case q == "":
				q = strings.TrimSpace(question)
			}
			if q == "" {
				return usagef("ask needs a question: the arguments or --question")
			}
			c, err := co.apiClient(app)
			if err != nil {
				return err
			}
			a, err := c.Ask(cmd.Context(), q)
			if err != nil {
				return err
			}
			if app.JSON {
				return app.printJSON(a)
			}
			fmt.Fprintf(app.IO.Err, "title: %s\ntags: %s\n", a.Title, strings.Join(a.Tags, ", "))
			_, err = fmt.Fprintln(app.IO.Out, strings.TrimRight(a.Answer, "\n"))
			return err
		},
	}
	hiddenFlag(cmd, &question, "question", "the question (knowledged's kc form of the arguments)")
	return cmd
}

// readTokenFile reads the bearer token of --token-file: a private file
// (mode 0600 or stricter) of one line.
func (a *App) readTokenFile(path string) (string, error) {
	data, name, err := a.readLimited(path, "--token-file", maxTokenBytes)
	if err != nil {
		return "", err
	}
	if path != "-" {
		fi, err := os.Stat(path)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		if err := httpapi.CheckTokenFileMode(path, fi.Mode()); err != nil {
			return "", err
		}
	}
	return httpapi.ParseToken(name, data)
}

// kcDashFlags rewrites the long flags of kk client's commands typed with
// one dash, as knowledged's kc takes them (Go's flag package: -server URL,
// -wait, -content=x), to the two dashes pflag reads. Only a token that
// names a long flag of the command at hand (its own, an old name of one,
// or one it inherits) is rewritten; never a flag's value, nothing after
// "--", and nothing of kk's other commands.
func kcDashFlags(root *cobra.Command, args []string) []string {
	out := slices.Clone(args)
	cmd, client := root, false
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			sub := subcommand(cmd, a)
			switch {
			case sub != nil && (client || sub.Name() == "client"):
				cmd, client = sub, true
			case !client:
				return args // not kk client
			}
			continue
		}
		name, _, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := longFlag(cmd, name)
		if f == nil {
			continue
		}
		if client && !strings.HasPrefix(a, "--") && len(name) > 1 {
			out[i] = "-" + a
		}
		if !inline && f.NoOptDefVal == "" {
			i++ // its value, whatever it looks like
		}
	}
	return out
}

// subcommand is cmd's subcommand named (or aliased) name, nil if none.
func subcommand(cmd *cobra.Command, name string) *cobra.Command {
	for _, c := range cmd.Commands() {
		if c.Name() == name || slices.Contains(c.Aliases, name) {
			return c
		}
	}
	return nil
}

// longFlag is the flag cmd reads by the long name name: its own, one an
// old name (flagAliases) stands for, or a persistent flag of a command
// above it; nil if none. It reads the flag sets without their normalize
// functions, which record the names typed.
func longFlag(cmd *cobra.Command, name string) *pflag.Flag {
	if n, ok := flagAliases[cmd.CommandPath()][name]; ok {
		name = n
	}
	for c := cmd; c != nil; c = c.Parent() {
		for _, fs := range []*pflag.FlagSet{c.LocalNonPersistentFlags(), c.PersistentFlags()} {
			var found *pflag.Flag
			fs.VisitAll(func(f *pflag.Flag) {
				if f.Name == name {
					found = f
				}
			})
			if found != nil && (c == cmd || fs == c.PersistentFlags()) {
				return found
			}
		}
	}
	return nil
}
