package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/kk-project/kk/internal/harness"
)

// HarnessFinder finds a harness adapter by id; kk's *harness.Registry is
// one.
type HarnessFinder interface {
	Get(id string) (harness.Adapter, error)
}

// Harness asks the coding agent kk is configured with, run headless
// through its adapter (claude -p, codex exec, …), with the recursion guard
// set so the run never re-enters kk's hooks. Harnesses that can hold the
// answer to a JSON Schema get it; the others get it in the prompt. The
// JSON object is taken from the answer text and validated like any reply.
type Harness struct {
	adapter harness.Adapter
	model   string
	timeout time.Duration
	logDir  string
}

// Name implements Provider.
func (h *Harness) Name() string {
	if h.model == "" {
		return "harness " + h.adapter.ID()
	}
	return "harness " + h.adapter.ID() + " " + h.model
}

// runSeq tells apart the log files of runs started in the same second.
var runSeq atomic.Uint64

// Complete implements Provider.
func (h *Harness) Complete(ctx context.Context, req Request) (json.RawMessage, error) {
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	prompt := req.Prompt
	if req.System != "" {
		prompt = req.System + "\n\n" + prompt
	}
	prompt += "\n\nAnswer with one JSON object and nothing else. It must match this JSON Schema:\n" + string(req.Schema.JSON)
	run := harness.HeadlessRun{Prompt: prompt, Schema: req.Schema.JSON, Timeout: h.timeout}
	if h.model != "" {
		run.Model = harness.Model{Name: h.model}
	}
	if h.logDir != "" {
		stamp := time.Now().UTC().Format("20060102T150405Z")
		run.LogFile = filepath.Join(h.logDir, fmt.Sprintf("%s__%s-%d.jsonl", req.Schema.Name, stamp, runSeq.Add(1)))
	}
	answer, err := h.adapter.Headless(ctx, run)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", h.Name(), err)
	}
	doc := harness.ExtractJSON(answer)
	if doc == "" {
		return nil, &ReplyError{Provider: h.Name(), Schema: req.Schema.Name, Reason: "the answer holds no JSON object", Reply: excerpt(answer, replyExcerpt)}
	}
	return checkReply(h.Name(), req.Schema, doc)
}
