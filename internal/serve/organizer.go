package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/kk-project/kk/internal/curate"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/llm"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/reorg"
	"github.com/kk-project/kk/internal/schema"
	"github.com/kk-project/kk/internal/service"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// InboxFolder is where the organizer puts a note that is like nothing in
// the tree.
const InboxFolder = "inbox"

// placement is where a posted note goes and what its front matter says.
type placement struct {
	Folder      string
	Type        string
	Title       string
	Description string
	Tags        []string
	// Phrasings are the model's kk_phrasings for the note (none without
	// a model).
	Phrasings []string
	// Note is what the job says about how it was placed ("" for
	// nothing): why without the model although one is configured, why
	// without the model's refactors. The job's note and its commit message
	// carry it, with the moves the refactors made.
	Note string
	// Refactors are the model's moves of existing notes and folders,
	// applied in the job's transaction before the note is written; the
	// offline placer proposes none.
	Refactors []contracts.ServeRefactor
}

// noteBody is the body of posted content (service.NoteBody): any front
// matter it came with is dropped (the note gets kk's), and leading blank
// lines too.
func noteBody(content string) string { return service.NoteBody(content) }

// Title and description bounds of notes the organizer names.
const (
	maxTitle       = 80
	maxDescription = 160
)

// plainLine makes s one line of plain text, as the note format takes a
// title or a description (node.LineProblem): its white space runs one
// space each, and its control characters and bidirectional controls
// (which a body may hold, and a model may answer) dropped.
func plainLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if node.IsBidiControl(r) || unicode.IsControl(r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// clip cuts s to at most n runes, at a word boundary when there is one,
// made one line of plain text (plainLine).
func clip(s string, n int) string {
	s = plainLine(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimRightFunc(cut, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
}

// textLines returns the body's lines that hold prose: not blank, not a
// code fence.
func textLines(body string) []string {
	var out []string
	fenced := false
	for _, l := range strings.Split(body, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if t != "" && !fenced {
			out = append(out, t)
		}
	}
	return out
}

// deriveTitle names a note from its first line of text (a heading's
// text, or the start of the first sentence).
func deriveTitle(body string) string {
	lines := textLines(body)
	if len(lines) == 0 {
		return "Untitled note"
	}
	first := strings.TrimSpace(strings.TrimLeft(lines[0], "#>*-+ "))
	if i := strings.IndexAny(first, ".!?"); i > 0 && i+1 < len(first) && first[i+1] == ' ' {
		first = first[:i]
	}
	if t := clip(first, maxTitle); t != "" {
		return t
	}
	return "Untitled note"
}

// deriveDescription summarises a note in one line: its first line of
// prose that is not the title.
func deriveDescription(body, title string) string {
	for _, l := range textLines(body) {
		l = strings.TrimSpace(strings.TrimLeft(l, "#>*-+ "))
		if l == "" || strings.EqualFold(l, title) {
			continue
		}
		return clip(l, maxDescription)
	}
	return ""
}

// imperativeVerbs start the titles of practices: rules and how-tos. Verbs
// that often start a noun phrase ("Deploy process", "Test data") are left
// out.
var imperativeVerbs = map[string]bool{
	"add": true, "always": true, "avoid": true, "call": true, "check": true, "choose": true, "configure": true, "create": true,
	"define": true, "delete": true, "do": true, "don't": true, "dont": true, "ensure": true, "install": true, "keep": true,
	"make": true, "never": true, "pass": true, "pin": true, "prefer": true, "put": true, "remember": true, "remove": true,
	"rename": true, "run": true, "use": true, "validate": true, "wrap": true, "write": true,
}

// noteType is practice for an imperative title ("Use …", "Never …",
// "How to …"), map for anything else.
func noteType(title string) string {
	words := strings.Fields(strings.ToLower(title))
	if len(words) == 0 {
		return "map"
	}
	first := strings.TrimFunc(words[0], func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
	if imperativeVerbs[first] || first == "how" && len(words) > 1 && words[1] == "to" {
		return "practice"
	}
	return "map"
}

// likeTerms is how many of a note's terms its placement searches with:
// those that best tell the note apart (see index.Request.Like). On both
// public corpora, each leaf placed by the others (the leave-one-out
// placement in internal/searcheval), 40 put more leaves in their own
// folder than the first 12 words of the note did (docs/serve.md).
const likeTerms = 25

// maxLikeText bounds how much of a note its placement reads: the terms
// that tell a note apart are in its first pages.
const maxLikeText = 64 << 10

// similarityQuery is the search of the notes most like a note, read as a
// document (see likeTerms): its title, tags and hint, then its body, at
// most maxLikeText bytes.
func similarityQuery(p placement, hint, body string) index.Request {
	text := p.Title + "\n" + strings.Join(p.Tags, " ") + "\n" + hint + "\n" + body
	if len(text) > maxLikeText {
		text = text[:maxLikeText]
		if i := strings.LastIndexFunc(text, unicode.IsSpace); i > 0 {
			text = text[:i] // not in the middle of a word
		}
	}
	return index.Request{Text: text, Like: likeTerms, Limit: 10, Postings: placementPostings}
}

// placementPostings bounds the search placement runs per job: it needs
// the neighbourhood of a note, the folders of its ten nearest notes, and
// the full bound (index.poolPostings) made it a quarter of a job's time
// at 10,000 notes.
const placementPostings = 2000

// candidateFolders are the folders of the notes most like a note (the
// hits of its similarityQuery), best first: each folder scores the sum of
// its notes' search scores among the top hits (which it returns too). The
// root folder ("") is not a candidate.
func (b *Backend) candidateFolders(ctx context.Context, like index.Request, n int) ([]string, []index.Hit, error) {
	hits, err := b.leafHits(ctx, like, false)
	if err != nil {
		return nil, nil, err
	}
	score := map[string]float64{}
	var order []string
	for _, h := range hits {
		d := path.Dir(h.Path)
		if d == "." {
			continue
		}
		if _, ok := score[d]; !ok {
			order = append(order, d)
		}
		score[d] += h.Score
	}
	slices.SortStableFunc(order, func(a, b string) int {
		switch {
		case score[a] > score[b]:
			return -1
		case score[a] < score[b]:
			return 1
		}
		return 0
	})
	return order[:min(n, len(order))], hits, nil
}

// place decides where a posted note goes. The request's title, type and
// tags win over whatever the organizer would choose. When the model
// fails (it stays down through the retries, or its decision fails its
// schema twice), the note is placed as without a model and the
// placement says why: a post is never lost to a model error.
func (b *Backend) place(ctx context.Context, req service.JobRequest, body string) (placement, error) {
	p := placement{Title: req.Title, Type: req.Type, Tags: req.Tags}
	query := p
	if query.Title == "" && b.llm == nil {
		query.Title = deriveTitle(body)
	}
	candidates, near, err := b.candidateFolders(ctx, similarityQuery(query, req.Hint, body), 5)
	if err != nil {
		return placement{}, err
	}
	if b.llm == nil {
		return offlinePlacement(p, body, candidates), nil
	}
	d, err := b.decidePlacement(ctx, req, body, candidates, near)
	if err != nil {
		if ctx.Err() != nil {
			return placement{}, err // the server is stopping: the job runs again
		}
		b.log.Warn("the model could not place a note; placed without it", "error", err)
		p = offlinePlacement(p, body, candidates)
		p.Note = "Placed without the model (" + b.llm.Name() + "), which failed: " + oneLine(err.Error())
		return p, nil
	}
	// What the model names is made plain text: a stray control
	// character in its answer is dropped, never the post's failure.
	// What it proposes is held to the limits a request's own fields are
	// held to (service.MaxTags, …): made kk's spelling where it can be,
	// else dropped and logged, never the post's failure.
	p.Folder, p.Description, p.Refactors = d.Folder, plainLine(d.Description), d.Refactors
	var dropped []string
	p.Phrasings, dropped = cleanPhrasings(d.Phrasings)
	if len(dropped) > 0 {
		b.log.Warn("dropped phrasings the model proposed: each is one line of at most "+strconv.Itoa(maxPhrasing)+" characters", "phrasings", dropped)
	}
	if p.Title == "" {
		p.Title = clip(d.Title, service.MaxTitleLength)
		if p.Title == "" {
			b.log.Warn("the model's title is no plain text; the note's is derived from its text", "title", d.Title)
			p.Title = deriveTitle(body)
		}
	}
	if p.Type == "" {
		p.Type = d.Type
	}
	if len(p.Tags) == 0 {
		p.Tags, dropped = modelTags(d.Tags)
		if len(dropped) > 0 {
			b.log.Warn("dropped tags the model proposed: a tag is at most "+strconv.Itoa(service.MaxTagLength)+" characters, a note has at most "+strconv.Itoa(service.MaxTags), "tags", dropped)
		}
	}
	return p, nil
}

// modelTags makes the tags a model proposes kk's tidy spelling (see kk
// lint's tag checks): plain text (plainLine), lower case, each run of
// white space and hyphens one hyphen, none at either end ("Go Lang" and
// "go - lang" are go-lang), without repeats. A tag
// that is blank, or longer than service.MaxTagLength characters, or past
// service.MaxTags, is dropped: the request's own tags are refused over
// those limits, and a model's bad tag is never a reason to fail a post.
func modelTags(in []string) (tags, dropped []string) {
	tags = []string{}
	for _, t := range in {
		tag := strings.ToLower(strings.Join(strings.FieldsFunc(plainLine(t), func(r rune) bool { return unicode.IsSpace(r) || r == '-' }), "-"))
		switch {
		case tag == "" || slices.Contains(tags, tag):
		case utf8.RuneCountInString(tag) > service.MaxTagLength || len(tags) == service.MaxTags:
			dropped = append(dropped, t)
		default:
			tags = append(tags, tag)
		}
	}
	return tags, dropped
}

// offlinePlacement places p as kk serve does without a model: in the
// folder whose notes are most like it (candidates, best first), else in
// inbox/, with a title, type and description derived from the body where
// the request gave none.
func offlinePlacement(p placement, body string, candidates []string) placement {
	if p.Title == "" {
		p.Title = deriveTitle(body)
	}
	p.Folder = InboxFolder
	if len(candidates) > 0 {
		p.Folder = candidates[0]
	}
	if p.Type == "" {
		p.Type = noteType(p.Title)
	}
	p.Description = deriveDescription(body, p.Title)
	return p
}

// oneLine joins the lines of s with spaces, for a commit message's line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// decide asks the model for the decision named by schemaName and decodes
// it into out.
func (b *Backend) decide(ctx context.Context, schemaName, system, prompt string, out any) error {
	s, err := schema.ForLLM(schemaName)
	if err != nil {
		return err
	}
	raw, err := b.llm.Complete(ctx, llm.Request{System: system, Prompt: prompt, Schema: s})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decoding the %s decision: %w", schemaName, err)
	}
	return nil
}

// maxPromptNote caps how much of one note a prompt quotes.
const maxPromptNote = 8 << 10

func excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "\n[…]"
}

const placementSystem = `You organise a knowledge base of markdown notes in topical folders.
Choose the folder for a new note: one of the candidate folders when the note belongs with
them, else a new kebab-case folder (at most three levels) that fits the existing layout.
Give the note a one-line title and description, a type (practice for rules and how-tos
written as instructions, map for what exists and where), a few short lowercase tags, and
three to six phrasings: one-line questions or symptoms a developer who does not know the
note would type to find it, in their own words and not the title's.
When the new note shows that existing notes sit in the wrong place, you may add minimal
refactors: move an existing note (its path, as listed) into a folder, or merge a folder's
notes into another existing folder. Most notes need none; leave refactors out then.
Reply with the JSON object only.`

func (b *Backend) decidePlacement(ctx context.Context, req service.JobRequest, body string, candidates []string, near []index.Hit) (contracts.ServePlacement, error) {
	summaries, err := store.ReadSummaries(b.k.SummariesPath())
	if err != nil {
		return contracts.ServePlacement{}, err
	}
	var pr strings.Builder
	pr.WriteString("Folders of the knowledge base and their summaries:\n")
	folders := make([]string, 0, len(summaries))
	for f := range summaries {
		folders = append(folders, f)
	}
	slices.Sort(folders)
	for _, f := range folders {
		if f != "" {
			fmt.Fprintf(&pr, "- %s: %s\n", f, summaries[f])
		}
	}
	pr.WriteString("\nCandidate folders (holding the notes most like this one, best first):\n")
	if len(candidates) == 0 {
		pr.WriteString("- (none: nothing in the tree is like this note)\n")
	}
	for _, c := range candidates {
		fmt.Fprintf(&pr, "- %s\n", c)
	}
	if len(near) > 0 {
		pr.WriteString("\nExisting notes most like this one (path: title — description):\n")
		for _, h := range near {
			fmt.Fprintf(&pr, "- %s: %s — %s\n", h.Path, h.Title, h.Description)
		}
	}
	if req.Hint != "" {
		fmt.Fprintf(&pr, "\nHint from the user: %s\n", req.Hint)
	}
	if req.Title != "" {
		fmt.Fprintf(&pr, "Title from the user: %s\n", req.Title)
	}
	if len(req.Tags) > 0 {
		fmt.Fprintf(&pr, "Tags from the user: %s\n", strings.Join(req.Tags, ", "))
	}
	fmt.Fprintf(&pr, "\nThe note:\n%s\n", excerpt(body, maxPromptNote))
	// The provider asks once more for a reply that fails the schema; a
	// decision that passes it but names a note or folder the tree does not
	// have gets one more try here too.
	var d contracts.ServePlacement
	for range 2 {
		d = contracts.ServePlacement{}
		if err = b.decide(ctx, "serve-placement", placementSystem, pr.String(), &d); err != nil {
			return d, fmt.Errorf("placement: %w", err)
		}
		if err = b.checkPlacement(&d); err == nil {
			return d, nil
		}
		err = fmt.Errorf("placement: %w", err)
	}
	return d, err
}

// checkPlacement checks what the schema cannot: the folder is one kk
// writes to, and every refactor names a note or folder the tree has.
func (b *Backend) checkPlacement(d *contracts.ServePlacement) error {
	folder, err := node.CleanFolder(d.Folder)
	if err != nil {
		return fmt.Errorf("the decision's folder: %w", err)
	}
	d.Folder = folder
	for i, r := range d.Refactors {
		from := filepath.Join(b.k.NodesDir(), filepath.FromSlash(r.From))
		fi, err := os.Stat(from)
		switch {
		case err != nil:
			return fmt.Errorf("refactors[%d]: no note or folder %q under nodes/", i, r.From)
		case strings.HasSuffix(r.From, ".md") != fi.Mode().IsRegular():
			return fmt.Errorf("refactors[%d]: %q is not a note (a path ending in .md) or a folder", i, r.From)
		case path.Base(r.From) == "index.md":
			return fmt.Errorf("refactors[%d]: %s is a generated index file, not a note", i, r.From)
		}
	}
	return nil
}

// refactorPlan turns the decision's refactors into a rebalance plan over
// the transaction's tree: a note moves by its id (create-branch into the
// folder), a folder's notes by a merge.
func refactorPlan(tx *txn.Tx, refactors []contracts.ServeRefactor) (contracts.RebalancePlan, error) {
	var plan contracts.RebalancePlan
	for i, r := range refactors {
		if !strings.HasSuffix(r.From, ".md") {
			plan.Operations = append(plan.Operations, contracts.RebalanceOperation{Operation: contracts.OpMerge, Branch: r.From, Into: r.To})
			continue
		}
		n, err := tx.LeafAt(r.From)
		if err != nil {
			return plan, fmt.Errorf("refactors[%d]: %w", i, err)
		}
		if n == nil {
			return plan, fmt.Errorf("refactors[%d]: no note at %s", i, r.From)
		}
		plan.Operations = append(plan.Operations, contracts.RebalanceOperation{Operation: contracts.OpCreateBranch, Folder: r.To, IDs: []string{n.ID}})
	}
	return plan, nil
}

// refactor applies p's refactors in tx and records the job's note: p's
// note and the moves the refactors made.
func (b *Backend) refactor(tx *txn.Tx, j *service.Job, p *placement) error {
	note := p.Note
	if len(p.Refactors) > 0 {
		res, err := applyRefactors(tx, p.Refactors)
		if err != nil {
			return err
		}
		note = joinNote(note, movesNote(res))
	}
	if note == "" {
		return nil
	}
	return j.Note(note)
}

// dropRefactors takes the refactors out of p after the transaction could
// not apply them (err), and says so in p's note: the note is placed all
// the same.
func (b *Backend) dropRefactors(p *placement, err error) {
	b.log.Warn("the model's refactors could not be applied; placing the note without them", "error", err)
	p.Note = joinNote(p.Note, "Placed without the model's refactors, which kk could not apply: "+oneLine(err.Error()))
	p.Refactors = nil
}

// movesNote says what a job's refactors moved and whose links followed.
func movesNote(res *reorg.RebalanceResult) string {
	var b strings.Builder
	for _, m := range res.Moves {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "Moved %s to %s.", m.From, m.To)
	}
	if len(res.Relinked) > 0 {
		fmt.Fprintf(&b, "\nLinks rewritten in %s.", strings.Join(res.Relinked, ", "))
	}
	return b.String()
}

func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

// refactorError is a refactor the transaction could not apply: the job
// goes on without the refactors.
type refactorError struct{ err error }

func (e *refactorError) Error() string { return "the model's refactors: " + e.err.Error() }
func (e *refactorError) Unwrap() error { return e.err }

// applyRefactors moves what the placement's refactors move, in tx, and
// returns the moves and the notes whose links were rewritten.
func applyRefactors(tx *txn.Tx, refactors []contracts.ServeRefactor) (*reorg.RebalanceResult, error) {
	plan, err := refactorPlan(tx, refactors)
	if err != nil {
		return nil, &refactorError{err}
	}
	res, err := reorg.RebalanceInTx(tx, plan)
	if err != nil {
		return nil, &refactorError{err}
	}
	return res, nil
}

const rerankSystem = `You rank search results of a knowledge base. Order the candidate notes by how well
they answer the query, most relevant first, and leave out those that do not answer it.
Reply with the JSON object only.`

// rerank asks the model to order kk's hits; paths it names that were not
// among them are dropped.
func (b *Backend) rerank(ctx context.Context, query string, hits []index.Hit) ([]string, error) {
	var pr strings.Builder
	fmt.Fprintf(&pr, "Query: %s\n\nCandidates:\n", query)
	known := map[string]bool{}
	for _, h := range hits {
		known[h.Path] = true
		fmt.Fprintf(&pr, "- %s: %s — %s\n", h.Path, h.Title, h.Description)
	}
	var d contracts.ServeRerank
	if err := b.decide(ctx, "serve-rerank", rerankSystem, pr.String(), &d); err != nil {
		return nil, err
	}
	var out []string
	for _, p := range d.Paths {
		if known[p] && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

const answerSystem = `You answer questions from a knowledge base. Use only the notes given; say so when they
do not answer the question. Name the paths of the notes you draw on. Reply with the JSON object only.`

// Answer synthesizes an answer from the notes kk's search finds for query
// and names the notes it read.
func (b *Backend) Answer(ctx context.Context, query string) (service.Answer, error) {
	if b.llm == nil {
		return service.Answer{}, llm.ErrNotConfigured
	}
	docs, err := b.searchDocs(ctx, query, service.DefaultSearchLimit)
	if err != nil || len(docs) == 0 {
		return service.Answer{}, err
	}
	var pr strings.Builder
	read := make([]string, 0, len(docs))
	for _, d := range docs {
		fmt.Fprintf(&pr, "=== %s ===\n%s\n\n", d.Path, excerpt(d.Content, maxPromptNote))
		read = append(read, d.Path)
	}
	fmt.Fprintf(&pr, "Question: %s\n", query)
	var a contracts.ServeAnswer
	if err := b.decide(ctx, "serve-answer", answerSystem, pr.String(), &a); err != nil {
		return service.Answer{}, &service.SynthesisError{Err: err}
	}
	return service.Answer{Sources: read, Answer: a.Answer}, nil
}

const askSystem = `You draft a note for a knowledge base that answers a question: a concise title, a
Markdown explanation without a top-level heading, and one to five short lowercase tags.
Reply with the JSON object only.`

// Ask drafts a note answering question; nothing is stored.
func (b *Backend) Ask(ctx context.Context, question string) (service.Draft, error) {
	if b.llm == nil {
		return service.Draft{}, llm.ErrNotConfigured
	}
	var d contracts.ServeAsk
	if err := b.decide(ctx, "serve-ask", askSystem, "Question: "+question, &d); err != nil {
		return service.Draft{}, err
	}
	// The draft is for a person to post: its title and tags are held to
	// what a post takes, as a placement's are.
	tags, dropped := modelTags(d.Tags)
	if len(dropped) > 0 {
		b.log.Warn("dropped tags the model proposed for a draft: a tag is at most "+strconv.Itoa(service.MaxTagLength)+" characters, a note has at most "+strconv.Itoa(service.MaxTags), "tags", dropped)
	}
	return service.Draft{Title: clip(d.Title, service.MaxTitleLength), Answer: d.Answer, Tags: tags}, nil
}

// cleanPhrasings keeps the model's phrasings that are one non-empty line
// each, trimmed and without repeats: a stray one is dropped, never a
// reason to fail the post.
func cleanPhrasings(in []string) (out, dropped []string) {
	for _, p := range in {
		p = strings.TrimSpace(p)
		switch {
		case p == "" || slices.Contains(out, p):
		case node.LineProblem(p) != "" || utf8.RuneCountInString(p) > maxPhrasing || len(out) == curate.MaxPhrasings:
			dropped = append(dropped, p)
		default:
			out = append(out, p)
		}
	}
	return out, dropped
}

// maxPhrasing bounds a phrasing the model proposes, in characters: a
// question a developer would type, as long as a title may be
// (service.MaxTitleLength). Without it a model's phrasings, which its
// schema bounds in number only, could make the note too big for its file
// (node.MaxSize) and fail the post.
const maxPhrasing = service.MaxTitleLength
