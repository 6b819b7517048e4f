package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/llm"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/service"
)

// cleanTags trims each tag and drops the blank ones.
func cleanTags(in []string) []string {
	var out []string
	for _, t := range in {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// What a write's metadata may hold, checked before it is queued: a note
// of many thousand tags (well under the body cap) makes every job after
// it slow for as long as it stays (each folder's index lists its tags),
// and a title the note format refuses would only fail the job later.
// The organizer holds a model's proposals to the same limits
// (service.MaxTags).
const (
	MaxTags        = service.MaxTags        // tags of a note
	MaxTagLength   = service.MaxTagLength   // characters of a tag
	MaxTitleLength = service.MaxTitleLength // characters of a title (the note format's limit)
)

// checkMeta names what is wrong with a write's title and (cleaned) tags,
// "" when nothing is.
func checkMeta(title string, tags []string) string {
	if utf8.RuneCountInString(title) > MaxTitleLength {
		return fmt.Sprintf("title is longer than %d characters", MaxTitleLength)
	}
	if len(tags) > MaxTags {
		return fmt.Sprintf("tags: %d given; at most %d", len(tags), MaxTags)
	}
	for _, t := range tags {
		if utf8.RuneCountInString(t) > MaxTagLength {
			return fmt.Sprintf("tags: %q is longer than %d characters", t, MaxTagLength)
		}
	}
	return ""
}

// MaxContentBytes bounds the content of a posted or edited note, in
// bytes, counting the white space it ends with as the note records it
// (escaped, in its front matter: see internal/serve's bodyend.go). A
// note's file is at most node.MaxSize bytes, its front matter included:
// the rest (64 KiB) is room for the longest front matter a write can
// give (MaxTitleLength, MaxTags of MaxTagLength, MaxDescriptionLength,
// and kk's own keys), so that no content accepted fails its job later
// for the note's size.
const MaxContentBytes = node.MaxSize - 64<<10

// MaxDescriptionLength bounds the description of an edited note, in
// characters (as a changeset's).
const MaxDescriptionLength = 1024

// checkContent answers a content the note format cannot take: over
// MaxContentBytes (413), holding a control character other than tab,
// line feed and carriage return, git's conflict markers outside a fenced
// code block, or a body that still opens with a front matter block once
// the content's own is dropped (400). false when it answered.
func checkContent(w http.ResponseWriter, content string) bool {
	size := len(content)
	if end := node.BodyEnd(content); end != "\n" {
		size += len(strconv.Quote(end)) - 2 - len(end)
	}
	switch {
	case size > MaxContentBytes && size == len(content):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("content is %d bytes; at most %d (a note's file is at most %d bytes, its front matter included)", len(content), MaxContentBytes, node.MaxSize))
		return false
	case size > MaxContentBytes:
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("content is %d bytes, %d as the note records it (the white space it ends with is kept escaped); at most %d (a note's file is at most %d bytes, its front matter included)", len(content), size, MaxContentBytes, node.MaxSize))
		return false
	}
	if msg := node.TextProblem(content); msg != "" {
		writeError(w, http.StatusBadRequest, "content: "+msg)
		return false
	}
	if from, to := node.ConflictMarkers([]byte(content)); from > 0 {
		// kk reads a leaf holding them as a merge stopped halfway:
		// the job would fail, naming lines of the leaf.
		writeError(w, http.StatusBadRequest, fmt.Sprintf("content: %s (lines %d to %d of the content): kk would read the note as a merge stopped halfway; resolve them, or show them in a fenced code block", node.ConflictMarkersMsg, from, to))
		return false
	}
	if msg := service.BodyProblem(content); msg != "" {
		writeError(w, http.StatusBadRequest, "content: "+msg+" (kk drops the front matter content starts with, and the line ends before it; what follows is the note's text)")
		return false
	}
	return true
}

// frontMatterOnly reports whether content is front matter and nothing
// more: the store drops a written note's front matter (service.NoteBody),
// which would leave the note no text: a post's job would fail, an edit
// would empty the note.
func frontMatterOnly(content string) bool {
	doc, err := frontmatter.Parse([]byte(content))
	return err == nil && doc.HasFrontMatter() && strings.TrimSpace(string(doc.Body())) == ""
}

// lineProblem names what the note format refuses in a write's one-line
// fields (a control character but a tab, a bidirectional control), ""
// when nothing: the job would fail on it later. A title or description
// that shows nothing is refused too (showsNothing).
func lineProblem(title, description string, tags []string) string {
	for _, f := range [][2]string{{"title", title}, {"description", description}} {
		if msg := node.LineProblem(f[1]); msg != "" {
			return f[0] + ": " + msg
		}
		if msg := showsNothing(f[1]); msg != "" {
			return f[0] + ": " + msg
		}
	}
	for _, t := range tags {
		if msg := node.LineProblem(t); msg != "" {
			return fmt.Sprintf("tags: %q %s", t, msg)
		}
	}
	return ""
}

// showsNothing says what is wrong with a title or description given
// (already trimmed of white space) that holds only white space and
// characters that show nothing: format characters (zero-width spaces and
// joiners, a byte order mark, word joiners), Hangul fillers and the
// blank braille pattern. The note would be listed by a title no one can
// read or click (index.md's "[****](…)"), whatever its text says. ""
// for an empty value (none given) and for any that shows something.
func showsNothing(s string) string {
	first, at, pos := rune(-1), 0, 0
	for _, r := range s {
		pos++
		switch {
		case unicode.IsSpace(r):
		case !invisible(r):
			return ""
		case first < 0:
			first, at = r, pos
		}
	}
	if first < 0 {
		return ""
	}
	return fmt.Sprintf("shows nothing: it holds only white space and invisible characters (%U at character %d); give text that shows, or leave the field out", first, at)
}

// invisible reports whether r shows nothing: a format character (Cf:
// U+200B–U+200F, U+2060–U+2064, U+FEFF, …), a Hangul filler (U+115F,
// U+1160, U+3164, U+FFA0) or the blank braille pattern U+2800.
func invisible(r rune) bool {
	switch r {
	case 0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// loneMarker names the first marker line of kk's generated Related or
// Citations block that content holds without its partner (outside a
// fenced code block), "" when none: kk would read it as what is left of
// a block a hand edit broke, and kk lint would report the new note. A
// post's only: an edit may give back a note a person broke so, as GET
// /content answered it. A whole block is taken (kk writes its own).
func loneMarker(content string) string {
	if !node.MayHaveLoneMarkers([]byte(content)) {
		return ""
	}
	lone := node.LoneMarkers(content)
	if len(lone) == 0 {
		return ""
	}
	m := lone[0]
	block := "Related"
	if m.Marker == node.CitationsStart || m.Marker == node.CitationsEnd {
		block = "Citations"
	}
	if m.Start {
		return fmt.Sprintf("line %d is %s, the first line of kk's generated %s block, with no %s after it: kk writes that block itself; leave the line out, or show it in a fenced code block", m.Line, m.Marker, block, m.Partner)
	}
	return fmt.Sprintf("line %d is %s, the last line of kk's generated %s block, with no %s before it: kk writes that block itself; leave the line out, or show it in a fenced code block", m.Line, m.Marker, block, m.Partner)
}

// noteType is the form of a note type a post may ask for.
var noteType = regexp.MustCompile(`^[a-z][a-z0-9-]{0,39}$`)

// POST /content {content, hint, title, tags, type}; type is kk's own.
func (s *Server) postContent(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Content string   `json:"content"`
		Hint    string   `json:"hint"`
		Title   string   `json:"title"`
		Tags    []string `json:"tags"`
		Type    string   `json:"type"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if strings.TrimSpace(body.Content) == "" {
		writeError(w, http.StatusBadRequest, "content must not be empty")
		return
	}
	if frontMatterOnly(body.Content) {
		writeError(w, http.StatusBadRequest, "content must not be empty: it holds only front matter, which kk drops (a note's front matter is kk's: give title and tags as fields)")
		return
	}
	typ := strings.TrimSpace(body.Type)
	if typ != "" && !noteType.MatchString(typ) {
		writeError(w, http.StatusBadRequest, "type must be lowercase letters, digits and - (such as practice or map): "+body.Type)
		return
	}
	if strings.ContainsAny(body.Title, "\r\n") {
		writeError(w, http.StatusBadRequest, "title must be one line")
		return
	}
	title, tags := strings.TrimSpace(body.Title), cleanTags(body.Tags)
	if msg := checkMeta(title, tags); msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	if msg := lineProblem(title, "", tags); msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	if !checkContent(w, body.Content) {
		return
	}
	if msg := loneMarker(body.Content); msg != "" {
		writeError(w, http.StatusBadRequest, "content: "+msg)
		return
	}
	s.enqueue(w, OpStore, JobRequest{Content: body.Content, Hint: body.Hint, Title: title, Tags: tags, Type: typ}, true)
}

// PUT /content {path, content, title, description, tags}
func (s *Server) putContent(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Path        string   `json:"path"`
		Content     string   `json:"content"`
		Title       string   `json:"title"`
		Description string   `json:"description"`
		Tags        []string `json:"tags"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if strings.TrimSpace(body.Path) == "" {
		writeError(w, http.StatusBadRequest, "path must not be empty")
		return
	}
	tags := cleanTags(body.Tags)
	title, desc := strings.TrimSpace(body.Title), strings.TrimSpace(body.Description)
	if strings.TrimSpace(body.Content) == "" && title == "" && desc == "" && len(tags) == 0 {
		writeError(w, http.StatusBadRequest, "content or metadata update must not be empty")
		return
	}
	if strings.ContainsAny(title+desc, "\r\n") {
		writeError(w, http.StatusBadRequest, "title and description must be one line each")
		return
	}
	if msg := checkMeta(title, tags); msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	if utf8.RuneCountInString(desc) > MaxDescriptionLength {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("description is longer than %d characters", MaxDescriptionLength))
		return
	}
	if msg := lineProblem(title, desc, tags); msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	if frontMatterOnly(body.Content) {
		// kk drops the front matter content starts with: the edit
		// would empty the note's text.
		writeError(w, http.StatusBadRequest, "content must not be empty: it holds only front matter, which kk drops (a note's front matter is kk's: give title, description and tags as fields, and no content to keep the note's text)")
		return
	}
	if strings.TrimSpace(body.Content) != "" && !checkContent(w, body.Content) {
		return
	}
	p, err := cleanPath(body.Path, false)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	content := body.Content
	if strings.TrimSpace(content) == "" {
		content = "" // a metadata-only edit keeps the body
	}
	s.enqueue(w, OpEdit, JobRequest{Path: p, Content: content, Title: title, Description: desc, Tags: tags}, false)
}

// DELETE /content {path}
func (s *Server) deleteContent(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Path string `json:"path"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if strings.TrimSpace(body.Path) == "" {
		writeError(w, http.StatusBadRequest, "path must not be empty")
		return
	}
	p, err := cleanPath(body.Path, false)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.enqueue(w, OpDelete, JobRequest{Path: p}, false)
}

// GET /content?path=P | query=Q [&mode=raw]. The query forms are
// knowledged's design (seed 000): mode=raw answers as GET /search?query=Q
// (the notes found, with their content), no mode as GET /answer?query=Q
// (an answer synthesized from them).
func (s *Server) getContent(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if msg := badChoice(q); msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	given := q.Get("path")
	if given == "" && q.Get("query") != "" {
		if strings.EqualFold(q.Get("mode"), "raw") {
			s.search(w, r)
		} else {
			s.answer(w, r)
		}
		return
	}
	if given == "" {
		writeError(w, http.StatusBadRequest, "path query parameter is required")
		return
	}
	if p, err := cleanPath(given, true); err == nil && p == KnowledgedIndex {
		text, err := s.indexText(r.Context())
		if err != nil {
			failed(w, "failed to list the notes for INDEX.md: ", err)
			return
		}
		writeDoc(w, given, text)
		return
	}
	content, err := s.readNote(r, given)
	switch {
	case errors.Is(err, ErrUnavailable):
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	case err != nil:
		writeError(w, http.StatusNotFound, "file not found: "+given)
		return
	}
	writeDoc(w, given, content)
}

// read returns the note at a path a client gave; false for a path the
// rules refuse, a missing note, or any other failure to read it.
func (s *Server) read(r *http.Request, given string) (string, bool) {
	content, err := s.readNote(r, given)
	return content, err == nil
}

// readNote is read, saying why it failed.
func (s *Server) readNote(r *http.Request, given string) (string, error) {
	p, err := cleanPath(given, true)
	if err != nil {
		return "", err
	}
	content, err := s.opts.Backend.Read(r.Context(), p)
	if err != nil {
		if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrUnavailable) {
			s.opts.Logger.Warn("reading a note failed", "path", p, "error", err)
		}
		return "", err
	}
	return content, nil
}

// failed answers a backend's failure: 503 with its reason when the
// backend cannot answer now (ErrUnavailable: the knowledge base's folder
// gone), else 500 with what failed.
func failed(w http.ResponseWriter, what string, err error) {
	if errors.Is(err, ErrUnavailable) {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeError(w, http.StatusInternalServerError, what+err.Error())
}

// choices are the query parameters that take one of a few values, each
// with its values and the error that names them (knowledged's words for
// match): a value given that is none of them is refused, whatever route
// and form the request has, rather than read as no value (a client's
// typo would get another answer than the one it asked for). Values are
// compared without regard to case; "" is the default.
var choices = []struct {
	param  string
	values []string
	err    string
}{
	{"mode", []string{"raw", "synthesize"}, `mode must be "raw" or "synthesize"`},
	{"match", []string{"any", "all"}, `match must be "any" or "all"`},
}

// badChoice returns the error of the first value of q that choices
// refuse, "" when there is none (every value of a repeated parameter is
// checked).
func badChoice(q url.Values) string {
	for _, c := range choices {
		for _, v := range q[c.param] {
			if v != "" && !slices.Contains(c.values, strings.ToLower(v)) {
				return c.err
			}
		}
	}
	return ""
}

// DefaultSearchLimit is how many notes a query search returns, unless
// the request's limit says otherwise (at most MaxSearchLimit).
const (
	DefaultSearchLimit = service.DefaultSearchLimit
	MaxSearchLimit     = 50
)

// MaxSearchTags bounds the distinct tags of a tag search (trimmed,
// lower-cased, deduplicated): a note holds at most MaxTags, and a query
// string of tens of thousands of tags would make one search cost seconds
// of CPU while it held a search slot.
const MaxSearchTags = 256

// GET /search?query=Q | tag=T&tags=a,b&match=any|all [&mode=raw]
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if msg := badChoice(q); msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	rawTags := q["tag"]
	for _, list := range q["tags"] {
		rawTags = append(rawTags, strings.Split(list, ",")...)
	}
	raw := strings.EqualFold(q.Get("mode"), "raw")
	switch {
	case len(rawTags) > 0:
		var tags []string
		seen := make(map[string]bool)
		for _, t := range rawTags {
			if t = strings.ToLower(strings.TrimSpace(t)); t != "" && !seen[t] {
				seen[t] = true
				tags = append(tags, t)
			}
		}
		if len(tags) == 0 {
			writeError(w, http.StatusBadRequest, "at least one tag is required")
			return
		}
		match := strings.ToLower(q.Get("match"))
		if len(tags) > MaxSearchTags {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("tags: %d given; at most %d", len(tags), MaxSearchTags))
			return
		}
		docs, err := s.opts.Backend.ByTags(r.Context(), tags, match == "all")
		if err != nil {
			failed(w, "search failed: ", err)
			return
		}
		if !raw {
			if docs == nil {
				docs = []TagDoc{}
			}
			writeJSON(w, http.StatusOK, docs)
			return
		}
		paths := make([]string, len(docs))
		for i, d := range docs {
			paths[i] = d.Path
		}
		s.writeDocs(w, r, paths)
	case q.Get("query") != "":
		limit := DefaultSearchLimit
		if l := q.Get("limit"); l != "" {
			n, err := strconv.Atoi(l)
			if err != nil || n < 1 {
				writeError(w, http.StatusBadRequest, "limit must be a positive integer")
				return
			}
			limit = min(n, MaxSearchLimit)
		}
		paths, err := s.opts.Backend.Search(r.Context(), q.Get("query"), limit)
		if err != nil {
			failed(w, "search failed: ", err)
			return
		}
		s.writeDocs(w, r, paths)
	default:
		writeError(w, http.StatusBadRequest, "provide either query=<text> or tag=<t> / tags=<a,b>")
	}
}

// NoDocuments is /answer's answer when no note matches.
const NoDocuments = "No relevant documents found in the knowledge base."

// GET /answer?query=Q
func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query().Get("query")
	if query == "" {
		writeError(w, http.StatusBadRequest, "query query parameter is required")
		return
	}
	a, err := s.opts.Backend.Answer(r.Context(), query)
	var synth *SynthesisError
	switch {
	case errors.Is(err, llm.ErrNotConfigured):
		writeError(w, http.StatusServiceUnavailable, llm.ErrNotConfigured.Error())
		return
	case errors.As(err, &synth):
		writeError(w, http.StatusInternalServerError, "synthesis failed: "+synth.Err.Error())
		return
	case err != nil:
		failed(w, "search failed: ", err)
		return
	}
	if a.Sources == nil {
		a.Sources = []string{}
	}
	if len(a.Sources) == 0 && a.Answer == "" {
		a.Answer = NoDocuments
	}
	writeJSON(w, http.StatusOK, struct {
		Query   string   `json:"query"`
		Sources []string `json:"sources"`
		Answer  string   `json:"answer"`
	}{query, a.Sources, a.Answer})
}

// POST /ask {question}
func (s *Server) ask(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Question string `json:"question"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	question := strings.TrimSpace(body.Question)
	if question == "" {
		writeError(w, http.StatusBadRequest, "question must not be empty")
		return
	}
	d, err := s.opts.Backend.Ask(r.Context(), question)
	switch {
	case errors.Is(err, llm.ErrNotConfigured):
		writeError(w, http.StatusServiceUnavailable, llm.ErrNotConfigured.Error())
		return
	case errors.Is(err, llm.ErrBadReply):
		writeError(w, http.StatusBadGateway, "LLM returned malformed JSON: "+err.Error())
		return
	case err != nil:
		writeError(w, http.StatusBadGateway, "LLM call failed: "+err.Error())
		return
	}
	tags := cleanTags(d.Tags)
	if tags == nil {
		tags = []string{}
	}
	title := strings.TrimRight(strings.Trim(strings.TrimSpace(d.Title), `"'`), ".:;")
	if title == "" {
		title = question
	}
	writeJSON(w, http.StatusOK, struct {
		Question string   `json:"question"`
		Title    string   `json:"title"`
		Answer   string   `json:"answer"`
		Tags     []string `json:"tags"`
	}{question, title, strings.TrimSpace(d.Answer), tags})
}

// GET /jobs/{id}
func (s *Server) getJob(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	j, ok := s.opts.Queue.Get(id)
	if !ok {
		writeError(w, http.StatusNotFound, "job not found: "+id)
		return
	}
	st := JobStatus{JobID: j.ID, Status: string(j.Status), Path: j.Path, Error: j.Error, Note: j.Note}
	if j.Status == jobqueue.Queued || j.Status == jobqueue.Processing {
		// One worker runs the jobs in order: what it waits for holds
		// every job not yet done. kk's field (as /healthz's waiting_for),
		// never "error", which kc takes for a failure.
		st.WaitingFor = healthReason(s.opts.Queue.Waiting())
	}
	writeJSON(w, http.StatusOK, st)
}

// Recent posts: the default and the cap of GET /posts/recents' limit.
const (
	DefaultRecentLimit = 20
	MaxRecentLimit     = 256
)

// GET /posts/recents?limit=N
func (s *Server) recentPosts(w http.ResponseWriter, r *http.Request) {
	limit := DefaultRecentLimit
	if l := strings.TrimSpace(r.URL.Query().Get("limit")); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, "limit must be a positive integer")
			return
		}
		limit = min(n, MaxRecentLimit)
	}
	posts, err := s.opts.Backend.Recent(r.Context(), limit)
	if err != nil {
		failed(w, "failed to read recent posts: ", err)
		return
	}
	if posts == nil {
		posts = []Post{}
	}
	writeJSON(w, http.StatusOK, struct {
		Posts []Post `json:"posts"`
	}{posts})
}

// GET /tags
func (s *Server) tags(w http.ResponseWriter, r *http.Request) {
	tags, err := s.opts.Backend.Tags(r.Context())
	if err != nil {
		failed(w, "failed to read tag index: ", err)
		return
	}
	if tags == nil {
		tags = []TagCount{}
	}
	writeJSON(w, http.StatusOK, struct {
		Tags []TagCount `json:"tags"`
	}{tags})
}

// GET /healthz
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	st := s.opts.Queue.Stats()
	status := "ok"
	if st.Waiting != "" {
		status = "waiting" // the worker holds: Waiting says for what
	}
	sharing := ""
	if sh, ok := s.opts.Backend.(sharer); ok {
		sharing = sh.SharingProblem()
	}
	waiting := healthReason(st.Waiting)
	if s.opts.Token != "" && !validBearer(r.Header.Get("Authorization"), s.opts.Token) {
		// Asked without the token (a load balancer, a monitor: the one
		// route that needs none), the answer says whether the worker
		// waits, not what for: the reasons name the server's folders
		// and quote git (a remote's URL), for anyone who can reach the
		// port.
		waiting, sharing = "", ""
	}
	writeJSON(w, http.StatusOK, struct {
		Status     string `json:"status"`
		QueueDepth int    `json:"queue_depth"`
		Processing int    `json:"processing"`
		Waiting    string `json:"waiting_for,omitempty"`
		Sharing    string `json:"sharing_failed,omitempty"`
	}{status, st.Depth, st.ByStatus[jobqueue.Processing], waiting, sharing})
}

// sharer is a backend that shares its commits with a remote (kk serve
// --push-every) and can say that doing so has been failing.
type sharer interface {
	SharingProblem() string
}

// healthReason makes what the worker waits for one line, for /healthz.
// kk's own reasons are one line, saying what is wrong and what to do; a
// reason that carries a git command's error (git's stderr: a line, then
// lines of advice) keeps git's meaningful line (its fatal: or error:
// line, else its first) and gets kk's advice for git's. The server's log
// has the whole text.
func healthReason(why string) string {
	why = strings.TrimSpace(why)
	if !strings.Contains(why, "\n") {
		return why
	}
	lines := strings.Split(why, "\n")
	first := strings.TrimSpace(lines[0])
	line := first
	if !strings.Contains(first, "fatal: ") && !strings.Contains(first, "error: ") {
		for _, l := range lines[1:] {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "fatal: ") || strings.HasPrefix(l, "error: ") {
				line = first + " " + l
				break
			}
		}
	}
	if strings.Contains(line, ".lock': File exists") {
		return line + " (another git process holds this lock: kk serve waits for it; if no git command is running, remove the file; the server's log has git's whole message)"
	}
	return line + " (kk serve tries again on its own; the server's log has git's whole message)"
}
