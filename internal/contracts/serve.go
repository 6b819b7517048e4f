package contracts

// The decisions kk serve asks a language model for. Each reply is checked
// against the type's schema (kk schema serve-…) before kk acts on it; a
// reply that does not match fails the job or the request with the reason.

// ServePlacement is where the organizer puts a note posted to kk serve:
// one folder of the tree (one of the candidates it was shown, or a new
// one), and the note's front matter. kk derives the leaf's id and file
// name from type and title; the model never names a file.
type ServePlacement struct {
	Folder      string   `json:"folder" jsonschema:"maxLength=200,pattern=^$|^[a-z0-9][a-z0-9-]*(/[a-z0-9][a-z0-9-]*){0\\,2}$,description=Folder under nodes/ for the note: one of the candidate folders\\, or a new kebab-case folder at most three levels deep; \"\" is the root."`
	Title       string   `json:"title" jsonschema:"minLength=1,maxLength=120,pattern=^[^\\r\\n]*\\S[^\\r\\n]*$,description=Display title of the note (one line)."`
	Description string   `json:"description" jsonschema:"maxLength=300,pattern=^[^\\r\\n]*$,description=One-line summary of the note."`
	Type        string   `json:"type" jsonschema:"enum=practice,enum=map,description=practice for how-to and rules (imperative)\\, map for what exists and where."`
	Tags        []string `json:"tags" jsonschema:"maxItems=8,description=Short lowercase tags."`
	// Phrasings are how a developer who does not know the note would ask
	// for it (kk_phrasings): search indexes them, so a later question that
	// shares no word with the note still finds it.
	Phrasings []string `json:"phrasings,omitempty" jsonschema:"maxItems=6,description=Three to six one-line questions or symptoms a developer would type to find this note\\, in their own words and not the title's: the words of the problem\\, not of the answer."`
	// Refactors are the minimal moves that keep the tree in shape as the
	// note arrives (seed 000's refactors): applied in the job's
	// transaction and commit, before the note is written.
	Refactors []ServeRefactor `json:"refactors,omitempty" jsonschema:"maxItems=10,description=Minimal refactors applied with the note\\, in order; usually none. Move an existing note into a folder\\, or merge a folder's notes into another existing folder. Leave out when the tree is fine as it is."`
}

// ServeRefactor is one move of a placement decision: an existing note
// (From ends in .md; its file name stays, kk's ids never change) moves
// into the folder To, or an existing folder's notes (From a folder) move
// into the existing folder To. Links to a moved note follow it: kk links
// by id and rewrites the generated links of every note that points at it.
type ServeRefactor struct {
	From string `json:"from" jsonschema:"minLength=1,maxLength=300,pattern=^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*$,description=An existing note (its path under nodes/\\, ending in .md) or an existing folder."`
	To   string `json:"to" jsonschema:"maxLength=200,pattern=^$|^[a-z0-9][a-z0-9-]*(/[a-z0-9][a-z0-9-]*){0\\,2}$,description=The folder it moves into (a note: any folder\\, new or existing\\, at most three levels; a folder's notes: an existing folder). \"\" is the root."`
}

// ServeRerank orders the candidates kk's search found for a query, most
// relevant first. Paths not among the candidates are dropped.
type ServeRerank struct {
	Paths []string `json:"paths" jsonschema:"maxItems=20,description=Candidate paths\\, most relevant first; leave out those that do not answer the query."`
}

// ServeAnswer is an answer synthesized from the notes kk read for a
// query, naming the ones it draws on.
type ServeAnswer struct {
	Answer  string   `json:"answer" jsonschema:"minLength=1,description=The answer\\, in Markdown\\, from the notes given only."`
	Sources []string `json:"sources" jsonschema:"description=Paths of the notes the answer draws on\\, from those given."`
}

// ServeAsk is a draft note answering a question (POST /ask), for a person
// to review before posting it.
type ServeAsk struct {
	Title  string   `json:"title" jsonschema:"minLength=1,maxLength=80,pattern=^[^\\r\\n]*$,description=Concise document title; no Markdown\\, quotes or trailing punctuation."`
	Answer string   `json:"answer" jsonschema:"minLength=1,description=Markdown explanation; no top-level heading."`
	Tags   []string `json:"tags" jsonschema:"maxItems=5,description=One to five short lowercase tags; empty when the question cannot be answered."`
}
