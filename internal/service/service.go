// Package service is the contract between kk serve's faces and its core:
// the Backend the HTTP face (internal/httpapi) calls, and the values they
// pass. internal/serve implements it over the knowledge tree.
package service

import (
	"context"
	"errors"
	"time"
)

// Backend is everything the HTTP face needs from the rest of kk: the
// tree's reads, kk's search, the query engine and the worker's one write
// path. Paths are relative to the knowledge tree (nodes/), clean, and use
// "/".
type Backend interface {
	// Read returns the whole file at path, front matter included; an
	// error matching ErrNotFound when there is none.
	Read(ctx context.Context, path string) (string, error)
	// Search returns the paths of the notes that best answer query, best
	// first, at most limit: kk's search, reranked by the model when one
	// is configured. The face reads each with Read as it writes the
	// answer, so that an answer holds one note at a time.
	Search(ctx context.Context, query string, limit int) ([]string, error)
	// ByTags returns the notes carrying any (all false) or every (all
	// true) of tags, which are lower-case and distinct, most recently
	// modified first, then by path.
	ByTags(ctx context.Context, tags []string, all bool) ([]TagDoc, error)
	// Tags counts the notes per tag, sorted by tag.
	Tags(ctx context.Context) ([]TagCount, error)
	// Notes lists every note, sorted by path.
	Notes(ctx context.Context) ([]Note, error)
	// Recent returns the newest notes stored through the service, newest
	// first, at most n.
	Recent(ctx context.Context, n int) ([]Post, error)
	// Answer synthesizes an answer to query from the notes it reads, and
	// names them. It returns an error matching llm.ErrNotConfigured when
	// no model is configured; a failure of the model after the notes
	// were found is a *SynthesisError.
	Answer(ctx context.Context, query string) (Answer, error)
	// Ask drafts a note answering question, storing nothing. Without a
	// model it returns an error matching llm.ErrNotConfigured; a reply
	// that is not a valid draft matches llm.ErrBadReply.
	Ask(ctx context.Context, question string) (Draft, error)
	// Apply does one job: one store transaction that writes the note, any
	// moves and the regenerated index files, then one commit
	// "<op>(<job id>): <path>" touching only those paths. Before writing
	// it announces the paths with job.Touch, so that recovery can restore
	// them after a crash. It returns the note's path. A failed job leaves
	// nothing behind.
	Apply(ctx context.Context, job *Job) (path string, err error)
}

// DefaultSearchLimit is how many notes a query search returns unless the
// request says otherwise.
const DefaultSearchLimit = 5

// ErrNotFound is what Backend.Read returns (wrapped) for a missing file.
var ErrNotFound = errors.New("not found")

// ErrUnavailable is what a Backend's reads return (wrapped) when it cannot
// answer for a reason outside the request that may pass (the knowledge
// base's folder gone, moved away while the server runs): the face
// answers 503, never an empty knowledge base.
var ErrUnavailable = errors.New("unavailable")

// SynthesisError is a failure of the model while answering, after the
// notes were found (GET /answer answers "synthesis failed: …").
type SynthesisError struct{ Err error }

func (e *SynthesisError) Error() string { return e.Err.Error() }
func (e *SynthesisError) Unwrap() error { return e.Err }

// Doc is a note and its whole content.
type Doc struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// TagDoc is a note's metadata, as a tag search lists it.
type TagDoc struct {
	Path        string    `json:"path"`
	Title       string    `json:"title"`
	Description string    `json:"description"`
	Tags        []string  `json:"tags"`
	Modified    time.Time `json:"modified"`
}

// Note is a note's title and description, as an index of the notes
// lists it.
type Note struct {
	Path        string
	Title       string
	Description string
}

// TagCount is how many notes carry a tag.
type TagCount struct {
	Tag   string `json:"tag"`
	Count int    `json:"count"`
}

// Post is a note stored through the service.
type Post struct {
	JobID     string    `json:"job_id"`
	Path      string    `json:"path"`
	Tags      []string  `json:"tags,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Answer is a synthesized answer and the notes it read.
type Answer struct {
	Sources []string
	Answer  string
}

// Draft is a note drafted by the model for a question.
type Draft struct {
	Title  string
	Answer string
	Tags   []string
}

// What a written note's title and tags may hold: a request's are refused
// over them (internal/httpapi checks them before a job is queued), and
// what a model proposes for a posted note is held to them too (the
// organizer in internal/serve).
const (
	MaxTags        = 50  // tags of a note
	MaxTagLength   = 64  // characters of a tag
	MaxTitleLength = 255 // characters of a title (the note format's limit)
)

// The operations of a job, which also start its commit's subject.
const (
	OpStore  = "store"
	OpEdit   = "edit"
	OpDelete = "delete"
)

// Job is one accepted write, as Backend.Apply gets it.
type Job struct {
	ID      string
	Op      string // OpStore, OpEdit or OpDelete
	Request JobRequest
	// Created is when the job was accepted; a stored note's created time.
	Created time.Time
	// Attempt is 1 on the first run, more when a crash interrupted one.
	Attempt int
	touch   func(paths ...string) error
	defer_  func(fn func(ctx context.Context) error)
	note    string
	onNote  func(note string) error
}

// OnNote sets what Note does besides remembering the note: the queue
// records it in the job's record, which GET /jobs/{id} answers with.
func (j *Job) OnNote(f func(note string) error) { j.onNote = f }

// Note says something about how the job was done that its client should
// know (kk serve: the note was placed without the model, which failed);
// the backend also puts it in the job's commit message.
func (j *Job) Note(note string) error {
	j.note = note
	if j.onNote == nil {
		return nil
	}
	return j.onNote(note)
}

// Noted returns the job's note ("" for none).
func (j *Job) Noted() string { return j.note }

// OnDefer sets what Defer does: the queue runs the step after Apply
// returns, overlapped with the next job; unset, Defer runs it at once.
func (j *Job) OnDefer(f func(fn func(ctx context.Context) error)) { j.defer_ = f }

// Defer makes fn the job's last step (kk serve's commit): the job is done
// when fn returns. With the queue, fn runs after Apply returns, in order
// with the other jobs' last steps, while the next job starts; it must
// not read what the next job may change (the work tree). Without, it
// runs now, and its error is Defer's.
func (j *Job) Defer(ctx context.Context, fn func(ctx context.Context) error) error {
	if j.defer_ == nil {
		return fn(ctx)
	}
	j.defer_(fn)
	return nil
}

// OnTouch sets what Touch does: the queue records the paths; a caller
// running a job outside the queue (a test of a Backend) sets its own.
func (j *Job) OnTouch(f func(paths ...string) error) { j.touch = f }

// Touch records, durably, the paths the job is about to change, relative
// to the repository root, before it changes them.
func (j *Job) Touch(paths ...string) error {
	if j.touch == nil {
		return nil
	}
	return j.touch(paths...)
}

// JobRequest is what a client asked for, as the queue keeps it. Path is
// the edited or deleted note (clean, relative to nodes/); Title,
// Description and Tags of an edit replace the note's only when set.
type JobRequest struct {
	Content string `json:"content,omitempty"`
	// Type is the kind of note a post asks for (practice, map, …); empty
	// lets the organizer choose. kk's own field: knowledged has none.
	Type        string   `json:"type,omitempty"`
	Hint        string   `json:"hint,omitempty"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	Path        string   `json:"path,omitempty"`
}
