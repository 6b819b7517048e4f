package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client speaks the API to a kk serve (or knowledged) server: the Go side
// of `kk client`.
type Client struct {
	// BaseURL is the server's root, such as http://127.0.0.1:9090.
	BaseURL string
	// Token, when set, is sent as a bearer token.
	Token string
	HTTP  *http.Client
}

// APIError is a reply with a status of 400 or more.
type APIError struct {
	Method, Path string
	Status       int
	// Message is the reply's "error", or the start of its body.
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.Path, e.Status, e.Message)
}

// JobStatus is a job as GET /jobs/{id} reports it (the server's answer
// and the client's reading of it). Note is kk's: how a job was done when
// its client should know (placed without the model, which failed).
type JobStatus struct {
	JobID  string `json:"job_id"`
	Status string `json:"status"`
	Path   string `json:"path,omitempty"`
	Error  string `json:"error,omitempty"`
	Note   string `json:"note,omitempty"`
	// WaitingFor (kk's) is what the worker waits for while the job is not
	// done (a lock, the branch checked out, a full disk: /healthz's
	// waiting_for); "" when it does not wait.
	WaitingFor string `json:"waiting_for,omitempty"`
}

// Final reports whether the job is done or failed.
func (j JobStatus) Final() bool { return j.Status == "done" || j.Status == "failed" }

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: WriteTimeout}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s %s: reading the reply: %w", method, path, err)
	}
	if resp.StatusCode >= 400 {
		var e struct {
			Error string `json:"error"`
		}
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		if len(msg) > 500 {
			msg = msg[:500] + "…"
		}
		return &APIError{Method: method, Path: path, Status: resp.StatusCode, Message: msg}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: the reply is not the JSON expected: %w", method, path, err)
	}
	return nil
}

// PostRequest is POST /content's body.
type PostRequest struct {
	Content string   `json:"content"`
	Hint    string   `json:"hint"`
	Title   string   `json:"title"`
	Tags    []string `json:"tags"`
	// Type asks for a kind of note (kk serve only; knowledged ignores it).
	Type string `json:"type,omitempty"`
}

// EditRequest is PUT /content's body; empty fields leave the note's
// value as it is.
type EditRequest struct {
	Path        string   `json:"path"`
	Content     string   `json:"content"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
}

// Post submits a note to store.
func (c *Client) Post(ctx context.Context, r PostRequest) (JobStatus, error) {
	var j JobStatus
	return j, c.do(ctx, http.MethodPost, "/content", r, &j)
}

// Edit submits an edit of a note.
func (c *Client) Edit(ctx context.Context, r EditRequest) (JobStatus, error) {
	var j JobStatus
	return j, c.do(ctx, http.MethodPut, "/content", r, &j)
}

// Delete submits the deletion of a note.
func (c *Client) Delete(ctx context.Context, path string) (JobStatus, error) {
	var j JobStatus
	return j, c.do(ctx, http.MethodDelete, "/content", map[string]string{"path": path}, &j)
}

// Job returns a job's status.
func (c *Client) Job(ctx context.Context, id string) (JobStatus, error) {
	var j JobStatus
	return j, c.do(ctx, http.MethodGet, "/jobs/"+url.PathEscape(id), nil, &j)
}

// WaitMissingPolls is how many 404s in a row Wait takes for the
// job it waits for as a passing miss; the next one ends the wait with it.
// knowledged answers 404 for a job it accepted while it finalizes that
// job (its handler misses the job in memory, then reads a queue file that
// no longer holds it); its kc polls through it. kk serve never does.
const WaitMissingPolls = 5

// Wait polls a job every interval (doubling up to a second) until it is
// done or failed, or ctx ends.
func (c *Client) Wait(ctx context.Context, id string, interval time.Duration) (JobStatus, error) {
	var j JobStatus
	missing := 0
	for {
		got, err := c.Job(ctx, id)
		var apiErr *APIError
		switch {
		case errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound && missing < WaitMissingPolls:
			missing++ // knowledged, finalizing the job: poll again
		case err != nil && ctx.Err() != nil:
			// The wait ended during a poll: said as below.
			return j, waitEnded(id, j, ctx.Err())
		case err != nil || got.Final():
			return got, err
		default:
			j, missing = got, 0
		}
		select {
		case <-ctx.Done():
			return j, waitEnded(id, j, ctx.Err())
		case <-time.After(interval):
		}
		interval = min(2*interval, time.Second)
	}
}

// waitEnded is the error of a wait for job id that ended (err) before the
// job did, j being its last answer: it says what the server waits for,
// when it said.
func waitEnded(id string, j JobStatus, err error) error {
	if j.WaitingFor != "" {
		return fmt.Errorf("waiting for job %s (last status: %s; the server says: %s): %w", id, j.Status, j.WaitingFor, err)
	}
	return fmt.Errorf("waiting for job %s (last status: %s): %w", id, j.Status, err)
}

// Get reads a note by path.
func (c *Client) Get(ctx context.Context, path string) (Doc, error) {
	var d Doc
	return d, c.do(ctx, http.MethodGet, "/content?path="+url.QueryEscape(path), nil, &d)
}

// Search returns the notes that best answer query.
func (c *Client) Search(ctx context.Context, query string, limit int) ([]Doc, error) {
	q := url.Values{"query": {query}, "mode": {"raw"}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var docs []Doc
	return docs, c.do(ctx, http.MethodGet, "/search?"+q.Encode(), nil, &docs)
}

func tagQuery(tags []string, all, raw bool) string {
	q := url.Values{"tags": {strings.Join(tags, ",")}}
	if all {
		q.Set("match", "all")
	}
	if raw {
		q.Set("mode", "raw")
	}
	return "/search?" + q.Encode()
}

// ByTags returns the metadata of the notes carrying any (or all) of tags.
func (c *Client) ByTags(ctx context.Context, tags []string, all bool) ([]TagDoc, error) {
	var docs []TagDoc
	return docs, c.do(ctx, http.MethodGet, tagQuery(tags, all, false), nil, &docs)
}

// ByTagsRaw returns the notes carrying any (or all) of tags, whole.
func (c *Client) ByTagsRaw(ctx context.Context, tags []string, all bool) ([]Doc, error) {
	var docs []Doc
	return docs, c.do(ctx, http.MethodGet, tagQuery(tags, all, true), nil, &docs)
}

// AnswerReply is GET /answer's reply.
type AnswerReply struct {
	Query   string   `json:"query"`
	Sources []string `json:"sources"`
	Answer  string   `json:"answer"`
}

// Answer asks the server to answer query from the notes.
func (c *Client) Answer(ctx context.Context, query string) (AnswerReply, error) {
	var a AnswerReply
	return a, c.do(ctx, http.MethodGet, "/answer?"+url.Values{"query": {query}}.Encode(), nil, &a)
}

// AskReply is POST /ask's reply.
type AskReply struct {
	Question string   `json:"question"`
	Title    string   `json:"title"`
	Answer   string   `json:"answer"`
	Tags     []string `json:"tags"`
}

// Ask has the server's model draft a note answering question.
func (c *Client) Ask(ctx context.Context, question string) (AskReply, error) {
	var a AskReply
	return a, c.do(ctx, http.MethodPost, "/ask", map[string]string{"question": question}, &a)
}

// Tags counts the notes per tag.
func (c *Client) Tags(ctx context.Context) ([]TagCount, error) {
	var r struct {
		Tags []TagCount `json:"tags"`
	}
	return r.Tags, c.do(ctx, http.MethodGet, "/tags", nil, &r)
}

// Recent lists the newest stored notes (limit 0: the server's default).
func (c *Client) Recent(ctx context.Context, limit int) ([]Post, error) {
	path := "/posts/recents"
	if limit > 0 {
		path += "?limit=" + strconv.Itoa(limit)
	}
	var r struct {
		Posts []Post `json:"posts"`
	}
	return r.Posts, c.do(ctx, http.MethodGet, path, nil, &r)
}
