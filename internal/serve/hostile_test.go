package serve

// Hostile and faulty clients of kk serve, found by an outside QA run:
// each test fails on the code before its fix.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/node"
)

// slowPost opens a connection to the server at url and sends the
// headers of a POST /content whose body is body, with Expect:
// 100-continue, then the first few bytes of the body once the server
// says it reads it (100 Continue: the handler has started to read the
// body). The rest is left to the caller.
func slowPost(t *testing.T, url, body string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	fmt.Fprintf(c, "POST /content HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", strings.TrimPrefix(url, "http://"), len(body))
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("waiting for 100 Continue: %v", err)
	}
	if !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("the server answered %q before reading the body", line)
	}
	if _, err := r.ReadString('\n'); err != nil { // the blank line ending it
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, body[:5]); err != nil {
		t.Fatal(err)
	}
	return c, r
}

// A client that sends the headers of a write and then dribbles its body
// holds no write slot while the body comes: with every write slot's
// worth of such clients stuck in their bodies, an honest post is
// accepted at once and done, and the slow clients, once their bodies
// are in, are accepted too. Found by the QA run: the write gate was
// entered before the body was read, so 8 slow bodies held all 8 write
// slots (for up to 30 s) and every honest writer waited, then got 503.
func TestSlowBodiesHoldNoWriteSlot(t *testing.T) {
	k := newRepo(t, 0)
	// A short wait for a slot: a post the slow bodies keep out is
	// answered 503 soon instead of after the default 30 s.
	s := startHTTP(t, context.Background(), Options{KB: k}, nil, httpapi.Options{Limits: httpapi.Limits{Wait: 2 * time.Second}})
	type slow struct {
		c    net.Conn
		r    *bufio.Reader
		body string
	}
	var slows []slow
	for i := range httpapi.DefaultLimits.Writes {
		body := fmt.Sprintf(`{"title":"Slow %d","content":"A body sent slowly, %d.\n"}`, i, i)
		c, r := slowPost(t, s.URL, body)
		slows = append(slows, slow{c, r, body})
	}
	j, err := s.Client.Post(ctx, httpapi.PostRequest{Title: "Honest", Content: "Posted while slow bodies dribble.\n"})
	if err != nil {
		t.Fatalf("an honest post while %d slow bodies dribble: %v", len(slows), err)
	}
	if j := s.waitJob(t, j.JobID, 30*time.Second); j.Status != "done" {
		t.Fatalf("the honest post: %+v", j)
	}
	for i, sl := range slows {
		if _, err := io.WriteString(sl.c, sl.body[5:]); err != nil {
			t.Fatalf("slow client %d: the server closed its connection before its body came: %v", i, err)
		}
		resp, err := http.ReadResponse(sl.r, nil)
		if err != nil {
			t.Fatalf("slow client %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Errorf("slow client %d, once its body was in: %d %s", i, resp.StatusCode, b)
		}
	}
}

// A body that does not come within httpapi.BodyTimeout is answered 408
// naming the limit, and nothing is queued.
func TestStalledBodyIsCut(t *testing.T) {
	defer func(d time.Duration) { httpapi.BodyTimeout = d }(httpapi.BodyTimeout)
	httpapi.BodyTimeout = 300 * time.Millisecond
	k := newRepo(t, 0)
	s := start(t, k, nil)
	queueDir := filepath.Join(k.StateDir(), "queue")
	before := listDir(t, queueDir)
	_, r := slowPost(t, s.URL, `{"title":"Stalled","content":"Never sent whole.\n"}`)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "request body did not come within") {
		t.Errorf("a stalled body: %d %s", resp.StatusCode, b)
	}
	if after := listDir(t, queueDir); !slices.Equal(after, before) {
		t.Errorf("the queue's folder was %v before, %v after", before, after)
	}
}

// postRaw posts body to path with method and returns the status and the
// answer's error.
func postRaw(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url+"/content", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var answer struct {
		Error string `json:"error"`
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &answer)
	if answer.Error == "" {
		answer.Error = string(raw)
	}
	return resp.StatusCode, answer.Error
}

// A post whose content is at most httpapi.MaxContentBytes is done, with
// the longest title and tags a post may carry (four-byte characters all
// through), whatever white space it ends with; one byte more is refused
// at once, 413 naming the field and the limit, and nothing is queued.
// Found by the QA run: a post near the 1 MiB body cap was accepted (202)
// and its job failed later ("the leaf would be 1048971 bytes; the limit
// is 1048576"): the leaf's front matter comes on top of the content.
func TestPostNearTheLeafLimit(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	queueDir := filepath.Join(k.StateDir(), "queue")
	title := strings.Repeat("𝔸", httpapi.MaxTitleLength)
	var tags []string
	for i := range httpapi.MaxTags {
		tags = append(tags, fmt.Sprintf("%02d", i)+strings.Repeat("𝔹", httpapi.MaxTagLength-2))
	}
	for _, end := range []string{"\n", "", "\n\n\n", " \t\n"} {
		word := "lorem ipsum dolor sit amet "
		content := strings.Repeat(word, httpapi.MaxContentBytes/len(word)+1)
		recorded := len(end) // "\n", the format's own end, is not recorded
		if end != "\n" {
			recorded = len(strconv.Quote(end)) - 2 // the others are, escaped
		}
		content = content[:httpapi.MaxContentBytes-recorded] + end
		raw, err := json.Marshal(httpapi.PostRequest{Title: title, Content: content, Tags: tags})
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) > httpapi.DefaultMaxBody {
			t.Fatalf("the post is %d bytes, over the body cap", len(raw))
		}
		j, err := s.Client.Post(ctx, httpapi.PostRequest{Title: title, Content: content, Tags: tags})
		if err != nil {
			t.Fatalf("content of %d bytes ending %q: %v", len(content), end, err)
		}
		if j := s.waitJob(t, j.JobID, 60*time.Second); j.Status != "done" {
			t.Fatalf("content of %d bytes ending %q: %+v", len(content), end, j)
		}
		// Titles repeat: each post is told apart by its content.
		title = title[:len(title)-len("𝔸")] + "x"
	}
	over := strings.Repeat("a", httpapi.MaxContentBytes) + "\n"
	before := listDir(t, queueDir)
	overEnd := strings.Repeat("a", httpapi.MaxContentBytes-5) + "\n\n\n" // recorded as \n\n\n: 6 bytes
	for _, tc := range []struct{ method, body, want string }{
		{"POST", fmt.Sprintf(`{"title":"Over","content":%q}`, over), fmt.Sprintf("content is %d bytes; at most %d", len(over), httpapi.MaxContentBytes)},
		{"PUT", fmt.Sprintf(`{"path":"inbox/x.md","content":%q}`, over), fmt.Sprintf("content is %d bytes; at most %d", len(over), httpapi.MaxContentBytes)},
		{"POST", fmt.Sprintf(`{"title":"Over","content":%q}`, overEnd), fmt.Sprintf("content is %d bytes, %d as the note records it (the white space it ends with is kept escaped); at most %d", len(overEnd), httpapi.MaxContentBytes+1, httpapi.MaxContentBytes)},
	} {
		code, msg := postRaw(t, tc.method, s.URL, tc.body)
		want := tc.want
		if code != http.StatusRequestEntityTooLarge || !strings.Contains(msg, want) {
			t.Errorf("%s of content one byte over: %d %q; want 413 %q", tc.method, code, msg, want)
		}
	}
	if after := listDir(t, queueDir); !slices.Equal(after, before) {
		t.Errorf("the queue's folder was %v before, %v after", before, after)
	}
	if httpapi.MaxContentBytes >= node.MaxSize {
		t.Errorf("MaxContentBytes %d leaves no room for the front matter of a leaf of at most %d", httpapi.MaxContentBytes, node.MaxSize)
	}
}

// A write whose text the note format refuses (a control character, or
// a bidirectional control in a one-line field) is refused at once, 400
// naming the field, the code point and where it is, and nothing is
// queued. Found by the QA run: each was accepted (202) and its job
// failed later ("field \"title\": holds the control character U+001B").
func TestWriteTextTheFormatRefusesIs400(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	queueDir := filepath.Join(k.StateDir(), "queue")
	before := listDir(t, queueDir)
	for _, tc := range []struct{ method, body, want string }{
		{"POST", `{"title":"T","content":"ring \u0007 bell\n"}`, "content: holds the control character U+0007 on line 1"},
		{"POST", `{"title":"abc\u001bdef","content":"x\n"}`, "title: holds the control character U+001B at character 4"},
		{"POST", `{"title":"abc\u202edef","content":"x\n"}`, "title: holds the bidirectional control character U+202E at character 4"},
		{"POST", `{"title":"T","tags":["ok","a\u2066b"],"content":"x\n"}`, `tags: "a\u2066b" holds the bidirectional control character U+2066 at character 2`},
		{"POST", `{"title":"T","tags":["a\u0007b"],"content":"x\n"}`, `tags: "a\ab" holds the control character U+0007 at character 2`},
		{"PUT", `{"path":"inbox/x.md","content":"a\nb\u0008\n"}`, "content: holds the control character U+0008 on line 2"},
		{"PUT", `{"path":"inbox/x.md","description":"d\u202ed"}`, "description: holds the bidirectional control character U+202E at character 2"},
		{"PUT", `{"path":"inbox/x.md","title":"t\u0085t"}`, "title: holds the control character U+0085 at character 2"},
		{"PUT", `{"path":"inbox/x.md","tags":["\u001b[31m"]}`, `tags: "\x1b[31m" holds the control character U+001B at character 1`},
	} {
		code, msg := postRaw(t, tc.method, s.URL, tc.body)
		if code != http.StatusBadRequest || !strings.Contains(msg, tc.want) {
			t.Errorf("%s %s: %d %q; want 400 %q", tc.method, tc.body, code, msg, tc.want)
		}
	}
	if after := listDir(t, queueDir); !slices.Equal(after, before) {
		t.Errorf("the queue's folder was %v before, %v after", before, after)
	}
}

// A post with no title whose first line holds a bidirectional control
// (which the body may hold) or a control character the line's other
// white space hides is done: the title and description kk derives from
// the text leave them out. Found by the QA run: the job failed
// ("field \"title\": holds the bidirectional control character U+202E").
func TestDerivedTitleLeavesControlsOut(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	j := s.post(t, httpapi.PostRequest{Content: "Right \u202eto left\u202c text here\n\nA second \u2067line\u2069 of prose.\n"})
	if j.Status != "done" {
		t.Fatalf("post: %+v", j)
	}
	got, err := s.Client.Get(ctx, j.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Content, "\u202eto left") {
		t.Errorf("the body lost its text:\n%s", got.Content)
	}
	jobCommit(t, k, "store", j)
}

// A post whose title is as long as a post may give (255 characters) is
// done: the id kk derives from it, and the file name, are cut to a
// length every file system takes. Found by the QA run: the job failed
// ("open …/inbox/.map-….md.tmp-…: file name too long").
func TestLongTitleIsDone(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	title := strings.Repeat("word ", httpapi.MaxTitleLength/5)[:httpapi.MaxTitleLength-1] + "z"
	j := s.post(t, httpapi.PostRequest{Title: title, Content: "A note with the longest title.\n"})
	if j.Status != "done" {
		t.Fatalf("post: %+v", j)
	}
	if id := strings.TrimSuffix(filepath.Base(j.Path), ".md"); len(id) > node.MaxIDLen {
		t.Errorf("id %q is %d characters; the limit is %d", id, len(id), node.MaxIDLen)
	}
	got, err := s.Client.Get(ctx, j.Path)
	if err != nil || !strings.Contains(strings.Join(strings.Fields(got.Content), " "), "title: >- "+title+" description:") {
		t.Errorf("the note does not keep its whole title: %v\n%s", err, got.Content)
	}
	jobCommit(t, k, "store", j)
}

// gitThatCannotWrite puts a git on PATH, for the rest of the test, that
// runs the real one, except while the file it returns exists: then its
// subcommand sub fails as git does when the machine cannot take its
// writes, saying msg on stderr with git's exit status.
func gitThatCannotWrite(t *testing.T, sub, msg string) (flag string) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	flag = filepath.Join(dir, "fail")
	script := fmt.Sprintf("#!/bin/sh\nif [ -e %q ]; then\n  for a in \"$@\"; do\n    if [ \"$a\" = %q ]; then\n      printf '%%s\\n' %q >&2\n      exit 128\n    fi\n  done\nfi\nexec %q \"$@\"\n", flag, sub, msg, real)
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return flag
}

// A job whose commit finds git unable to write (git update-index or git
// update-ref failing with "No space left on device", "Disk quota
// exceeded" or "Read-only file system") is held as kk's own writes are
// on a full disk (TestFaultUnwritableMachineHoldsTheJob): the job waits,
// /healthz says why, and once git can write it is done with its one
// commit. Found by the QA run: the job failed ("committing: git
// update-index …: No space left on device"), and the post was lost.
func TestFaultGitThatCannotWriteHoldsTheJob(t *testing.T) {
	for _, tc := range []struct {
		name, sub, msg, says string
	}{
		{"update-index ENOSPC", "update-index", "fatal: sha1 file '.git/index.kk.lock' write error: No space left on device", "the disk is full"},
		{"update-index full", "update-index", "fatal: sha1 file '.git/index.kk.lock' write error. Out of diskspace", "the disk is full"},
		{"update-ref EDQUOT", "update-ref", "fatal: update_ref failed for ref 'HEAD': cannot update ref 'refs/heads/main': unable to append to '.git/logs/HEAD': Disk quota exceeded", "disk quota"},
		{"update-index EROFS", "update-index", "fatal: Unable to create '.git/index.kk.lock': Read-only file system", "read-only"},
		// .git (or its objects) made unwritable for kk serve's user.
		{"update-index EACCES", "update-index", "fatal: Unable to create '.git/index.kk.lock': Permission denied", "cannot be written (permission denied)"},
		{"update-ref objects", "update-ref", "error: insufficient permission for adding an object to repository database .git/objects", "cannot be written (permission denied)"},
		// kk serve run under a file-size limit (ulimit -f, LimitFSIZE).
		{"update-index EFBIG", "update-index", "fatal: sha1 file '.git/index.kk.lock' write error: File too large", "file-size limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flag := gitThatCannotWrite(t, tc.sub, tc.msg)
			k := newRepo(t, 0)
			// Before the server's first commit: the git update-ref it
			// starts then is kept running for the next ones.
			s := start(t, k, nil)
			if err := os.WriteFile(flag, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			id := s.postAsync(t, "Unwritable git "+tc.name)
			s.waitHealth(t, tc.says)
			if j, _ := s.Client.Job(ctx, id); j.Status == "failed" || j.Status == "done" {
				t.Fatalf("the job ended while git could not write: %+v", j)
			}
			if err := os.Remove(flag); err != nil {
				t.Fatal(err)
			}
			j := s.waitJob(t, id, 30*time.Second)
			if j.Status != "done" {
				t.Fatalf("the job once git could write: %+v", j)
			}
			jobCommit(t, k, "store", j)
			if h := s.health(t); h.Status != "ok" {
				t.Errorf("health after: %+v", h)
			}
			clean(t, k)
		})
	}
}

// A post whose content is front matter alone (kk drops a posted note's
// front matter: the note's is kk's) is refused at once, 400, and nothing
// is queued. Found by the QA run: it was accepted (202) and its job
// failed ("content must not be empty").
func TestPostOfFrontMatterOnlyIs400(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	queueDir := filepath.Join(k.StateDir(), "queue")
	before := listDir(t, queueDir)
	for _, body := range []string{
		`{"content":"---\ntitle: x\n---\n"}`,
		`{"title":"Titled","content":"---\ntitle: x\ntags: [a]\n---\n\n\n  \n"}`,
	} {
		code, msg := postRaw(t, "POST", s.URL, body)
		if code != http.StatusBadRequest || !strings.Contains(msg, "content must not be empty: it holds only front matter") {
			t.Errorf("POST %s: %d %q", body, code, msg)
		}
	}
	if after := listDir(t, queueDir); !slices.Equal(after, before) {
		t.Errorf("the queue's folder was %v before, %v after", before, after)
	}
	// Front matter followed by text is a note: its front matter dropped.
	j := s.post(t, httpapi.PostRequest{Title: "Kept", Content: "---\ntitle: dropped\n---\n\nThe text after it.\n"})
	if j.Status != "done" {
		t.Fatalf("post: %+v", j)
	}
}

// A client that stops reading an answer is cut once it has read nothing
// for httpapi.StallTimeout, and the slot its request held is free: with
// every search slot held by such clients, each stalled in an answer of
// many megabytes, a search is answered. Found by the QA run: a stalled
// reader held its slot until the write timeout (180 s), so 4 of them
// kept every search out (503 after the wait for a slot).
func TestStalledReadersHoldNoSlot(t *testing.T) {
	defer func(d time.Duration) { httpapi.StallTimeout = d }(httpapi.StallTimeout)
	httpapi.StallTimeout = 300 * time.Millisecond
	k := newRepo(t, 0)
	s := startHTTP(t, context.Background(), Options{KB: k}, nil, httpapi.Options{Limits: httpapi.Limits{Wait: 10 * time.Second}})
	// 16 notes of 900 KB carrying one tag, written by hand: an answer
	// listing them all (14 MB) is more than the sockets hold.
	body := strings.Repeat("lorem ipsum dolor sit amet ", 900<<10/27)
	if err := os.MkdirAll(k.NodePath("inbox"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 16 {
		leaf := fmt.Sprintf("---\ntype: map\ntitle: Big %d\ndescription: A big note\ntags:\n  - big\nkk_schema_version: 3\nkk_id: map-big-%d\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\nkk_version: 1\n---\n%s\n", i, i, body)
		if err := os.WriteFile(k.NodePath(fmt.Sprintf("inbox/map-big-%d.md", i)), []byte(leaf), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	host := strings.TrimPrefix(s.URL, "http://")
	for i := range httpapi.DefaultLimits.Searches {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
		fmt.Fprintf(c, "GET /search?tag=big&mode=raw HTTP/1.1\r\nHost: %s\r\n\r\n", host)
		// The answer has begun (the request holds its slot); nothing
		// more of it is read.
		resp, err := http.ReadResponse(bufio.NewReaderSize(c, 16), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("stalled reader %d: %v %v", i, resp, err)
		}
	}
	docs, err := s.Client.ByTags(ctx, []string{"big"}, false)
	if err != nil {
		t.Fatalf("a search while %d readers stall: %v", httpapi.DefaultLimits.Searches, err)
	}
	if len(docs) != 16 {
		t.Errorf("the search found %d notes, want 16", len(docs))
	}
}

// A read of a path no note can have (a name longer than the file system
// takes, a path through a note as if it were a folder) is 404 "file not
// found", as any missing note is, and logs nothing. Found by the QA run:
// each was logged as a failed read, with the whole path, so a client
// sending paths of a megabyte wrote a megabyte to the log per request.
func TestReadOfAnImpossiblePathIsNotFound(t *testing.T) {
	k := newRepo(t, 0)
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := startHTTP(t, context.Background(), Options{KB: k, Logger: log}, nil, httpapi.Options{Logger: log})
	j := s.post(t, httpapi.PostRequest{Title: "A note", Content: "A note.\n"})
	if j.Status != "done" {
		t.Fatalf("post: %+v", j)
	}
	for _, p := range []string{strings.Repeat("a", 300) + ".md", "inbox/" + strings.Repeat("b", 64<<10) + ".md", j.Path + "/x.md"} {
		resp, err := http.Get(s.URL + "/content?path=" + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), "file not found") {
			t.Errorf("GET /content?path=%.40s…: %d %.200s", p, resp.StatusCode, b)
		}
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "reading a note failed") {
			t.Errorf("a read was logged as a failure (%d bytes): %.150s … %.150s", len(line), line, line[max(0, len(line)-150):])
		}
	}
}

// TestNumberLikeTextIsKeptAsText: a title, a description or a tag that
// YAML 1.2 reads as a number (0o17, 0B101, 0X1F, +.5, 01.5, 01e5), which
// the front matter writer, following js-yaml 3 (YAML 1.1), wrote without
// quotes, is stored and read back as the text it was. Before, the post
// was accepted (202) and its job failed (`field "title": must be a
// string, not a number`), and an edit giving such a description failed
// the same way.
func TestNumberLikeTextIsKeptAsText(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	for i, text := range []string{"0o17", "0B101", "0X1F", "+.5", "-.5", "01.5", "01e5", "0O7"} {
		j := s.post(t, httpapi.PostRequest{Title: text, Tags: []string{text}, Content: fmt.Sprintf("Note %d whose title reads as a number.\n", i)})
		if j.Status != "done" {
			t.Fatalf("post titled %q: %+v", text, j)
		}
		jobCommit(t, k, "store", j)
		e := s.edit(t, httpapi.EditRequest{Path: j.Path, Description: text})
		if e.Status != "done" {
			t.Fatalf("edit of %s with the description %q: %+v", j.Path, text, e)
		}
		got, err := s.Client.Get(ctx, j.Path)
		if err != nil {
			t.Fatal(err)
		}
		n, err := node.Parse(j.Path, []byte(got.Content))
		if err != nil {
			t.Fatalf("%s does not parse: %v\n%s", j.Path, err, got.Content)
		}
		if n.Title != text || n.Description != text || len(n.Tags) != 1 || n.Tags[0] != text {
			t.Errorf("%s: title %q, description %q, tags %q; want %q each\n%s", j.Path, n.Title, n.Description, n.Tags, text, got.Content)
		}
	}
}

// A write whose content holds git's conflict markers outside a fenced
// code block (a line of <<<<<<< and a later one of >>>>>>>) is refused at
// once, 400 naming the lines, and nothing is queued: kk reads such a
// leaf as a merge stopped halfway. A fenced example of them is a note.
// Found by the hostile-input QA run: the post was accepted (202) and its
// job failed ("inbox/map-conflict.md: holds git conflict markers (lines
// 18 to 22)", lines of the leaf the client never saw).
func TestWriteOfConflictMarkersIs400(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	queueDir := filepath.Join(k.StateDir(), "queue")
	before := listDir(t, queueDir)
	for _, tc := range []struct{ method, body string }{
		{"POST", `{"title":"Conflict","content":"a\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n"}`},
		{"PUT", `{"path":"inbox/x.md","content":"a\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n"}`},
	} {
		code, msg := postRaw(t, tc.method, s.URL, tc.body)
		if want := "content: holds git conflict markers (lines 2 to 6 of the content)"; code != http.StatusBadRequest || !strings.Contains(msg, want) {
			t.Errorf("%s %s: %d %q; want 400 %q", tc.method, tc.body, code, msg, want)
		}
	}
	if after := listDir(t, queueDir); !slices.Equal(after, before) {
		t.Errorf("the queue's folder was %v before, %v after", before, after)
	}
	j := s.post(t, httpapi.PostRequest{Title: "Fenced conflict", Content: "How a conflict looks:\n\n```\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n```\n"})
	if j.Status != "done" {
		t.Fatalf("a fenced example of conflict markers: %+v", j)
	}
}

// A write holding Unicode's tag characters (U+E0000–U+E007F) outside an
// emoji's tag sequence (a subdivision flag: U+1F3F4, tag letters, then
// U+E007F) is refused at once, 400 naming the field, the code point and
// where it is, and nothing is queued: they show as nothing, in a diff as
// on the page, yet a model reads each as the ASCII letter it shadows, so
// a post could hide an instruction a reviewer never sees and kk's hooks
// hand the agent (ASCII smuggling). A flag emoji is a note. Found by the
// hostile-input QA run: a post whose description said "hidden
// <IGNORE in tag characters> text" was done, and kk hook prompt-context
// gave the agent the hidden word.
func TestWriteOfTagCharactersIs400(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	queueDir := filepath.Join(k.StateDir(), "queue")
	before := listDir(t, queueDir)
	for _, tc := range []struct{ method, body, want string }{
		{"POST", `{"title":"T","content":"ok\nhidden \udb40\udc49\udb40\udc47 text\n"}`, "content: holds the invisible tag character U+E0049 on line 2"},
		{"POST", `{"title":"ab\udb40\udc41","content":"x\n"}`, "title: holds the invisible tag character U+E0041 at character 3"},
		{"POST", `{"title":"T","tags":["ok","a\udb40\udc41"],"content":"x\n"}`, `tags: "a\U000e0041" holds the invisible tag character U+E0041 at character 2`},
		{"PUT", `{"path":"inbox/x.md","description":"d\udb40\udc7f"}`, "description: holds the invisible tag character U+E007F at character 2"},
		// Tag letters after a flag but not ended by the cancel tag.
		{"POST", `{"title":"T","content":"\ud83c\udff4\udb40\udc67\udb40\udc62 run\n"}`, "content: holds the invisible tag character U+E0067 on line 1"},
	} {
		code, msg := postRaw(t, tc.method, s.URL, tc.body)
		if code != http.StatusBadRequest || !strings.Contains(msg, tc.want) {
			t.Errorf("%s %s: %d %q; want 400 %q", tc.method, tc.body, code, msg, tc.want)
		}
	}
	if after := listDir(t, queueDir); !slices.Equal(after, before) {
		t.Errorf("the queue's folder was %v before, %v after", before, after)
	}
	england := "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F"
	j := s.post(t, httpapi.PostRequest{Title: "Flag " + england, Content: "The flag of England: " + england + ".\n"})
	if j.Status != "done" {
		t.Fatalf("a flag emoji: %+v", j)
	}
}

// A post or an edit whose title (or an edit's description) shows nothing
// (white space and invisible characters only: zero-width spaces and
// joiners, a byte order mark, Hangul fillers) is refused at once, 400
// naming the field and the first such character, and nothing is queued:
// the note would be listed by a title no one can read or click, in
// index.md and on the page. Found by the hostile-input QA run: a title of
// two U+200B was stored as the note's title (index.md listed it as
// "[****](…)"). A title of only white space is still no title.
func TestInvisibleTitleIs400(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	queueDir := filepath.Join(k.StateDir(), "queue")
	before := listDir(t, queueDir)
	for _, tc := range []struct{ method, body, want string }{
		{"POST", `{"title":"\u200b\u200b","content":"x\n"}`, "title: shows nothing: it holds only white space and invisible characters (U+200B at character 1)"},
		{"POST", `{"title":" \u3164 ","content":"x\n"}`, "title: shows nothing: it holds only white space and invisible characters (U+3164 at character 1)"},
		{"POST", `{"title":"\ufeff\u2060\u200d","content":"x\n"}`, "(U+FEFF at character 1)"},
		{"PUT", `{"path":"inbox/x.md","title":"\u200c"}`, "title: shows nothing"},
		{"PUT", `{"path":"inbox/x.md","description":"\u200b \u200b"}`, "description: shows nothing: it holds only white space and invisible characters (U+200B at character 1)"},
	} {
		code, msg := postRaw(t, tc.method, s.URL, tc.body)
		if code != http.StatusBadRequest || !strings.Contains(msg, tc.want) {
			t.Errorf("%s %s: %d %q; want 400 %q", tc.method, tc.body, code, msg, tc.want)
		}
	}
	if after := listDir(t, queueDir); !slices.Equal(after, before) {
		t.Errorf("the queue's folder was %v before, %v after", before, after)
	}
	for _, title := range []string{"Zero\u200bwidth inside", "\u3000 ", "👨\u200d👩\u200d👧"} {
		if j := s.post(t, httpapi.PostRequest{Title: title, Content: "Text of " + title + ".\n"}); j.Status != "done" {
			t.Fatalf("title %q: %+v", title, j)
		}
	}
}

// A post whose content holds a marker line of kk's generated Related or
// Citations block without its partner (outside a fenced code block) is
// refused at once, 400 naming the line and the marker, and nothing is
// queued: kk would read it as what is left of a block a hand edit broke,
// and kk lint would report the new note (lone-marker, "a line deleted by
// hand?"). A whole block, as GET /content gives a note back, is still
// taken (kk writes its own in its place), and so is a marker in a fence.
// Found by the hostile-input QA run: such a post was done, and kk lint
// reported lone-marker on the note kk serve had just written.
func TestPostOfALoneBlockMarkerIs400(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	queueDir := filepath.Join(k.StateDir(), "queue")
	before := listDir(t, queueDir)
	for _, tc := range []struct{ body, want string }{
		{`{"title":"Lone","content":"Intro.\n\n<!-- kk:related:start -->\nhanging\n"}`, "content: line 3 is <!-- kk:related:start -->, the first line of kk's generated Related block, with no <!-- kk:related:end --> after it"},
		{`{"title":"Lone end","content":"Intro.\n<!-- kk:citations:end -->\n"}`, "content: line 2 is <!-- kk:citations:end -->, the last line of kk's generated Citations block, with no <!-- kk:citations:start --> before it"},
	} {
		code, msg := postRaw(t, "POST", s.URL, tc.body)
		if code != http.StatusBadRequest || !strings.Contains(msg, tc.want) {
			t.Errorf("POST %s: %d %q; want 400 %q", tc.body, code, msg, tc.want)
		}
	}
	if after := listDir(t, queueDir); !slices.Equal(after, before) {
		t.Errorf("the queue's folder was %v before, %v after", before, after)
	}
	for _, content := range []string{
		"Intro.\n\n<!-- kk:related:start -->\n- [x](x.md)\n<!-- kk:related:end -->\n",
		"Shown:\n\n```\n<!-- kk:related:start -->\n```\n",
		"Quoted `<!-- kk:related:start -->` in prose.\n",
	} {
		if j := s.post(t, httpapi.PostRequest{Title: "Marker " + strconv.Itoa(len(content)), Content: content}); j.Status != "done" {
			t.Fatalf("content %q: %+v", content, j)
		}
	}
}
