package httpapi

import "github.com/kk-project/kk/internal/service"

// The contract with the core is internal/service's; these names keep the
// face's handlers and its client (kk client) short.
type (
	Backend        = service.Backend
	Doc            = service.Doc
	TagDoc         = service.TagDoc
	TagCount       = service.TagCount
	Note           = service.Note
	Post           = service.Post
	Answer         = service.Answer
	Draft          = service.Draft
	Job            = service.Job
	JobRequest     = service.JobRequest
	SynthesisError = service.SynthesisError
)

// The operations of a job.
const (
	OpStore  = service.OpStore
	OpEdit   = service.OpEdit
	OpDelete = service.OpDelete
)

// ErrNotFound is what Backend.Read returns (wrapped) for a missing file.
var ErrNotFound = service.ErrNotFound

// ErrUnavailable is what a Backend's reads return (wrapped) when it
// cannot answer now: answered 503.
var ErrUnavailable = service.ErrUnavailable
