package web

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/httpapi/httpapitest"
	"github.com/kk-project/kk/internal/jobqueue"
)

// chromium finds a Chromium or Chrome binary: $KK_CHROMIUM, else the
// usual names on PATH.
func chromium() string {
	if p := os.Getenv("KK_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestBrowser drives the page in a real headless Chromium over the
// DevTools protocol: it loads the tree, types a query into the search box,
// waits for the hits the script lists, opens one, and checks the leaf's
// DOM; then it checks that no hostile text of a leaf became markup, that
// the traceability picture is drawn, and that a search snippet is text
// with its matched words marked, both as the script lists it and on the
// results page with JavaScript off. Any script error, console error
// (a Content Security Policy violation is one) or dialog fails it.
func TestBrowser(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium found (chromium, chromium-browser, google-chrome, ... on PATH, or KK_CHROMIUM): " +
			"install it with `bash scripts/deps-debian.sh` (Debian, as root) to run the browser test")
	}
	srv := httptest.NewServer(New(fixture(t), Options{Title: "proj", LoopbackOnly: true}))
	defer srv.Close()
	browse(t, bin, srv.URL)
}

// TestBrowserBehindServe runs the browser test on the page as kk serve
// mounts it beside the API, behind the API's guard against web pages
// (the Host check on every route): the page's own requests pass it.
func TestBrowserBehindServe(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium found (chromium, chromium-browser, google-chrome, ... on PATH, or KK_CHROMIUM): " +
			"install it with `bash scripts/deps-debian.sh` (Debian, as root) to run the browser test")
	}
	k := fixture(t)
	q, err := jobqueue.Open(t.TempDir(), jobqueue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Options{Backend: &httpapitest.GitBackend{Root: k.Root}, Queue: q, Addr: "127.0.0.1:0",
		Page: New(k, Options{Title: "proj", LoopbackOnly: true}), PagePaths: Paths})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- api.Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	browse(t, bin, "http://"+ln.Addr().String())
}

// browse drives the page at url in a headless Chromium (bin).
func browse(t *testing.T, bin, url string) {
	t.Helper()
	var mu sync.Mutex
	var problems []string
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	var ctx context.Context
	// Listen's func runs in the loop that reads the browser's messages:
	// it only records, and answers a dialog from another goroutine.
	listen := func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			report("script exception at %s:%d: %s", d.URL, d.LineNumber, d.Text)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				report("console error: %s %s", ev.Entry.Text, ev.Entry.URL)
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				report("console.error was called")
			}
		case *cdppage.EventJavascriptDialogOpening:
			report("a dialog opened: %s", ev.Message)
			go func() {
				_, _ = chromedp.Call(ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{})
			}()
		}
	}
	ctx = startBrowser(t, bin, listen)
	start := time.Now()
	// A step that waits for something that never comes fails after 15
	// seconds, with whatever the page reported.
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, actions...); err != nil {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("%s: %v; the page reported: %q", what, err, problems)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("reading the text of %s: %v", sel, err)
		}
		return s
	}
	eval := func(js string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](js))
		if err != nil {
			t.Fatalf("evaluating %s: %v", js, err)
		}
		return n
	}
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}

	step("loading the tree", chromedp.Navigate(url+"/"), chromedp.WaitVisible(chromedp.ID("q")),
		chromedp.WaitVisible(chromedp.CSS(`#tree a.fname[href="/folder/go"]`)))
	h1 := text("main h1")

	step("searching", chromedp.SendKeys(chromedp.ID("q"), "log in"),
		chromedp.WaitVisible(chromedp.CSS(`#results a[href="/node/req-login"]`)))
	results := text("#results")
	hits := eval(`document.querySelectorAll('#results li').length`)
	scripts := eval(`document.querySelectorAll('#results script, #results img').length`)

	step("opening a hit", chromedp.Click(chromedp.CSS(`#results a[href="/node/req-login"]`)),
		chromedp.WaitVisible(chromedp.CSS(`article.node[data-id="req-login"] h1`)))
	path, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`))
	if err != nil {
		t.Fatal(err)
	}
	title := text("article.node h1")
	rows := eval(`document.querySelectorAll('.edges tbody tr').length`)
	pictureNodes := eval(`document.querySelectorAll('figure.picture svg g.n').length`)

	step("opening the hostile leaf", chromedp.Navigate(url+"/node/practice-wrap-errors"),
		chromedp.WaitVisible(chromedp.CSS(`section.body`)))
	leafText := text("section.body")
	markup := eval(`document.querySelectorAll('main script, main img, main iframe, main [onclick], main [onerror], main a[href^="javascript"], main a[href^="data"]').length`)
	pwned := eval(`window.kkPwned === 1 ? 1 : 0`)

	step("drawing the traceability graph", chromedp.Navigate(url+"/trace"),
		chromedp.WaitVisible(chromedp.CSS(`figure.picture svg`)))
	traceNodes := eval(`document.querySelectorAll('figure.picture svg a g.n').length`)

	// A snippet is text, its matched words marked, as the script lists it…
	step("searching for a markdown snippet", chromedp.Navigate(url+"/"), chromedp.WaitVisible(chromedp.ID("q")),
		chromedp.SendKeys(chromedp.ID("q"), "backoff helper"),
		chromedp.WaitVisible(chromedp.CSS(`#results a[href="/node/practice-other"]`)))
	jsSnippet := text(`#results .snippet`)
	jsMarks := eval(`document.querySelectorAll('#results .snippet mark').length`)

	// …and as the results page shows it without JavaScript: the search
	// box's form, submitted with Enter, gets the page from the server.
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	step("searching without JavaScript", chromedp.Navigate(url+"/"), chromedp.WaitVisible(chromedp.ID("q")),
		chromedp.SendKeys(chromedp.ID("q"), "backoff helper\r"),
		chromedp.WaitVisible(chromedp.CSS(`ol.hits a[href="/node/practice-other"]`)))
	noJSPage := eval(`location.pathname.endsWith("/find") && new URLSearchParams(location.search).get("q") === "backoff helper" ? 1 : 0`)
	noJSSnippet := text(`ol.hits .snippet`)
	noJSMarks := eval(`Array.from(document.querySelectorAll('ol.hits .snippet mark')).map(m => m.textContent).join(",") === "backoff,backoff,helper" ? 1 : 0`)
	noJSPanel := eval(`document.getElementById("results").hidden ? 0 : 1`)

	t.Logf("browser test took %s", time.Since(start).Round(time.Millisecond))
	if h1 != "proj" {
		t.Errorf("tree page h1 %q", h1)
	}
	if hits == 0 || scripts != 0 || !strings.Contains(results, `Users can log in <script>alert("kk")</script>`) {
		t.Errorf("search results (%d hits, %d script/img elements): %q", hits, scripts, results)
	}
	if path != "/node/req-login" || title != `Users can log in <script>alert("kk")</script>` {
		t.Errorf("opened %s titled %q", path, title)
	}
	if rows != 3 || pictureNodes != 4 {
		t.Errorf("req-login shows %d edges and %d nodes in its picture, want 3 and 4", rows, pictureNodes)
	}
	if markup != 0 || pwned != 0 {
		t.Errorf("the hostile leaf became markup: %d elements, script ran: %v", markup, pwned)
	}
	if !strings.Contains(leafText, "Wrap every error with the operation.") || !strings.Contains(leafText, `fmt.Println("<script>")`) {
		t.Errorf("leaf body text %q", leafText)
	}
	if traceNodes != 4 {
		t.Errorf("the trace picture links %d nodes, want 4", traceNodes)
	}
	const wantSnippet = "Use backoff with retry.Do, and see the backoff helper first."
	if jsSnippet != wantSnippet || jsMarks != 3 {
		t.Errorf("the script's snippet %q with %d marked words; want %q with 3", jsSnippet, jsMarks, wantSnippet)
	}
	if noJSPage != 1 {
		t.Errorf("without JavaScript, Enter in the search box did not load the results page for the query")
	}
	if noJSSnippet != wantSnippet || noJSMarks != 1 || noJSPanel != 0 {
		t.Errorf("without JavaScript the results page's snippet is %q (marks right: %d, script panel shown: %d); want %q with backoff, backoff, helper marked",
			noJSSnippet, noJSMarks, noJSPanel, wantSnippet)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
}

// browserStarts is how many times startBrowser launches Chromium before
// it gives up. A browser that exits before it listens, on a machine
// short of memory or under heavy load, is the machine's fault and not
// the page's; a page that misbehaves fails on every launch.
const browserStarts = 3

// startBrowser launches a headless Chromium (bin) with fn listening to
// its page's events, and returns the page's context, which the test's
// cleanup closes. Chromium keeps its shared memory in the temporary
// directory (--disable-dev-shm-usage), so a small or odd /dev/shm does
// not stop it.
func startBrowser(t *testing.T, bin string, fn func(ev any)) context.Context {
	t.Helper()
	var err error
	for attempt := 1; attempt <= browserStarts; attempt++ {
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 900),
			chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(t.TempDir()))...)
		ctx, cancel := chromedp.NewContext(alloc)
		ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
		if err = chromedp.Listen(ctx, fn); err == nil {
			t.Cleanup(func() {
				cancelTimeout()
				cancel()
				cancelAlloc()
			})
			return ctx
		}
		cancelTimeout()
		cancel()
		cancelAlloc()
		t.Logf("starting Chromium (%s), attempt %d of %d: %v", bin, attempt, browserStarts, err)
	}
	t.Fatalf("starting Chromium (%s) failed %d times; the last error: %v", bin, browserStarts, err)
	return nil
}
