package store

import "sync"

// HandEdit is a generated file (ENTRY.md, GRAPH.md, a folder's index.md)
// that held text kk did not generate, a person's edit, when a write
// replaced or removed it: File is its path and Copy the copy of it the
// writer kept, both relative to the knowledge base's folder.
type HandEdit struct {
	File, Copy string
	// Removed: the write removed the file (a folder's index.md where no
	// note is left) rather than generating it again.
	Removed bool
	// Conflicted: what the file held was git's conflict markers (a merge
	// made where kk's merge driver is not set up), not a person's edit.
	Conflicted bool
}

// HandEditsDir is the folder, under .state, where writers keep the hand
// edits of generated files they replace: hand-edits/<changeset>/<file>.
const HandEditsDir = "hand-edits"

type handEdits struct {
	mu   sync.Mutex
	list []HandEdit
}

type handEditsKey struct{}

// NoteHandEdit records that a write kept a person's edit of a generated
// file, for the face to say so (TakeHandEdits), as NoteSkipped does for
// the leaves a read skipped.
func (k *KB) NoteHandEdit(e HandEdit) {
	h := Memo(k, handEditsKey{}, func() *handEdits { return &handEdits{} })
	h.mu.Lock()
	defer h.mu.Unlock()
	h.list = append(h.list, e)
}

// TakeHandEdits returns, and forgets, the hand edits noted since the last
// call, in the order they were noted.
func (k *KB) TakeHandEdits() []HandEdit {
	h := Memo(k, handEditsKey{}, func() *handEdits { return &handEdits{} })
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.list
	h.list = nil
	return out
}
