package web

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/search"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/trace"
)

// page is what every template gets.
type page struct {
	Site   string // the knowledge base's name
	Title  string // the page's title
	Prefix string
	Nav    string // the active tab: tree, graph, trace
	Query  string // the search box's text
	Data   any
}

var pageNames = []string{"tree", "folder", "node", "find", "graph", "trace", "error"}

// parsePages parses each page with the layout and the shared parts.
func parsePages() map[string]*template.Template {
	funcs := template.FuncMap{"typeClass": typeClass}
	pages := map[string]*template.Template{}
	for _, name := range pageNames {
		pages[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS,
			"templates/layout.html", "templates/parts.html", "templates/"+name+".html"))
	}
	return pages
}

func (h *handler) newPage(r *http.Request, nav, title string, data any) *page {
	return &page{Site: h.opts.Title, Title: title, Prefix: h.opts.Prefix, Nav: nav, Query: r.URL.Query().Get("q"), Data: data}
}

// render writes a page, or a plain error when the template fails.
func (h *handler) render(w http.ResponseWriter, status int, name string, p *page) {
	var buf bytes.Buffer
	if err := h.pages[name].ExecuteTemplate(&buf, "layout", p); err != nil {
		http.Error(w, "rendering the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

type errorView struct {
	Status  int
	Message string
}

// fail renders the error page for an operation's error.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	h.render(w, status, "error", h.newPage(r, "", http.StatusText(status), errorView{Status: status, Message: op.ErrorOf(err).Message}))
}

func (h *handler) notFound(w http.ResponseWriter, r *http.Request, format string, args ...any) {
	h.fail(w, r, op.New(op.CodeNotFound, nil, format, args...))
}

// Items of the tree and folder pages.

type leafItem struct {
	ID, Title, Type, TypeClass, Description, URL string
	Tags                                         []string
}

type folderItem struct {
	Path, Name, Summary, URL string
	Count                    int // leaves in the folder and below
	Leaves                   []leafItem
	More                     int // leaves of the folder not listed
	Sub                      []*folderItem
	Open                     bool
	Crumbs                   []crumb
}

type crumb struct{ Name, URL string }

// treeLeavesPerFolder caps the leaves the tree page lists per folder; the
// folder's own page lists them all. (A variable for the tests.)
var treeLeavesPerFolder = 25

// readFolders reads the tree and the folder summaries into folder items.
func (h *handler) readFolders() (map[string]*folderItem, *store.Tree, error) {
	t, err := index.ReadTree(context.Background(), h.k)
	if err != nil {
		return nil, nil, err
	}
	sums, err := store.ReadSummaries(h.k.SummariesPath())
	if err != nil {
		return nil, nil, err
	}
	p := h.opts.Prefix
	folders := map[string]*folderItem{"": {URL: folderURL(p, ""), Summary: sums[""], Open: true}}
	for _, d := range t.Dirs {
		if d == "" {
			continue
		}
		name := d[strings.LastIndexByte(d, '/')+1:]
		f := &folderItem{Path: d, Name: name, Summary: sums[d], URL: folderURL(p, d), Open: !strings.Contains(d, "/")}
		folders[d] = f
	}
	for _, d := range t.Dirs {
		if d == "" {
			continue
		}
		parent := folders[store.DirOf(d)]
		if parent == nil {
			parent = folders[""]
		}
		parent.Sub = append(parent.Sub, folders[d])
	}
	for _, n := range t.Leaves {
		f := folders[n.Dir()]
		if f == nil {
			f = folders[""]
		}
		f.Leaves = append(f.Leaves, leafItem{ID: n.ID, Title: n.Title, Type: n.Type, TypeClass: typeClass(n.Type),
			Description: n.Description, URL: nodeURL(p, n.ID), Tags: n.Tags})
		for d := n.Dir(); ; d = store.DirOf(d) {
			if f := folders[d]; f != nil {
				f.Count++
			}
			if d == "" {
				break
			}
		}
	}
	return folders, t, nil
}

type treeView struct {
	Root            *folderItem
	Leaves, Folders int
	Branch          string
	// Skipped are the leaf files kk cannot read, each with its problems:
	// the page lists the others and names these.
	Skipped []store.SkippedLeaf
}

func (h *handler) tree(w http.ResponseWriter, r *http.Request) {
	folders, t, err := h.readFolders()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	for _, f := range folders {
		if len(f.Leaves) > treeLeavesPerFolder {
			f.More = len(f.Leaves) - treeLeavesPerFolder
			f.Leaves = f.Leaves[:treeLeavesPerFolder]
		}
	}
	branch, _ := index.CurrentBranch(r.Context(), h.k)
	h.render(w, http.StatusOK, "tree", h.newPage(r, "tree", h.opts.Title,
		treeView{Root: folders[""], Leaves: len(t.Leaves), Folders: len(folders) - 1, Branch: branch, Skipped: store.SkippedLeaves(t.Problems)}))
}

func (h *handler) folder(w http.ResponseWriter, r *http.Request) {
	dir := strings.Trim(r.PathValue("path"), "/")
	folders, _, err := h.readFolders()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	f := folders[dir]
	if f == nil || dir == "" {
		h.notFound(w, r, "no folder %q under nodes/", dir)
		return
	}
	f.Crumbs = crumbs(h.opts.Prefix, store.DirOf(dir))
	h.render(w, http.StatusOK, "folder", h.newPage(r, "tree", dir+"/", f))
}

// crumbs are the links to nodes/ and to each folder down to dir.
func crumbs(prefix, dir string) []crumb {
	out := []crumb{{Name: "nodes", URL: folderURL(prefix, "")}}
	if dir == "" {
		return out
	}
	segs := strings.Split(dir, "/")
	for i := range segs {
		out = append(out, crumb{Name: segs[i], URL: folderURL(prefix, strings.Join(segs[:i+1], "/"))})
	}
	return out
}

// The node page.

type edgeItem struct {
	Type, Kind, ID, URL string
	Missing             bool
}

type nodeView struct {
	Leaf   *search.NodeView
	Entity *trace.EntityView // an extracted entity (no leaf)
	ID     string
	Title  string
	Type   string
	Class  string
	Crumbs []crumb
	Body   template.HTML
	Out    []edgeItem
	In     []edgeItem
	// MoleculeURL links an atom's molecule; Atoms are a molecule's.
	MoleculeURL string
	Atoms       []atomItem
	Picture     *svgGraph
	TraceURL    string
}

// nodeChangelogLimit is how many changelog entries the node page shows.
const nodeChangelogLimit = 50

func (h *handler) node(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	limit := nodeChangelogLimit
	p := h.opts.Prefix
	v := &nodeView{ID: id, TraceURL: traceURL(p, id)}
	leaf, err := search.ReadNode(ctx, h.k, search.ReadParams{ID: id, ChangelogLimit: &limit})
	ent, entErr := h.entity(ctx, id)
	switch {
	case err == nil:
		v.Leaf, v.ID, v.Title, v.Type = leaf, leaf.ID, leaf.Title, leaf.Type
		dir := store.DirOf(strings.TrimPrefix(leaf.Path, store.DirName+"/nodes/"))
		v.Crumbs = crumbs(p, dir)
		if v.Body, err = renderMarkdown(leaf.Body, p, dir); err != nil {
			h.fail(w, r, err)
			return
		}
		// An edge names its target as its writer spelled it; the index
		// knows the id the target carries.
		canonical := map[string]string{}
		if ent != nil {
			for _, e := range ent.Edges {
				canonical[store.IDKey(e.To)] = e.To
			}
		}
		for _, e := range leaf.Edges {
			to := cmp.Or(canonical[store.IDKey(e.To)], e.To)
			v.Out = append(v.Out, edgeItem{Type: e.Type, Kind: e.Kind, ID: to, URL: nodeURL(p, to)})
		}
		if leaf.MoleculeID != "" {
			v.MoleculeURL = nodeURL(p, leaf.MoleculeID)
		}
		if leaf.Type == graph.TypeMolecule {
			if m, err := graph.Get(ctx, h.k, graph.GetParams{EntityType: graph.KindMolecule, ID: leaf.ID, IncludeChangelog: new(false)}); err == nil {
				if mv, ok := m.(graph.MoleculeView); ok {
					for _, a := range mv.Atoms {
						v.Atoms = append(v.Atoms, h.atomItem(a))
					}
				}
			}
		}
	case op.ErrorOf(err).Code == op.CodeNotFound && entErr == nil && ent != nil:
		v.Entity, v.ID, v.Title, v.Type = ent, ent.ID, ent.Title, ent.Type
		for _, e := range ent.Edges {
			v.Out = append(v.Out, edgeItem{Type: e.Type, ID: e.To, URL: nodeURL(p, e.To)})
		}
	case op.ErrorOf(err).Code == op.CodeNotFound:
		h.notFound(w, r, "no node with id %q", id)
		return
	default:
		h.fail(w, r, err)
		return
	}
	if ent != nil {
		for _, e := range ent.Incoming {
			v.In = append(v.In, edgeItem{Type: e.Type, ID: e.From, URL: nodeURL(p, e.From)})
		}
	}
	v.Class = typeClass(v.Type)
	if len(v.Out)+len(v.In) > 0 {
		if g, err := h.neighbourhood(ctx, v.ID); err == nil {
			v.Picture = g.Picture
			known := map[string]bool{}
			for _, n := range g.nodes {
				known[store.IDKey(n.ID)] = !n.Missing
			}
			for i := range v.Out {
				v.Out[i].Missing = !known[store.IDKey(v.Out[i].ID)]
			}
		}
	}
	h.render(w, http.StatusOK, "node", h.newPage(r, "", v.Title, v))
}

// entity returns the traceability entity id (a leaf or an extracted
// entity) with its edges, or nil when there is none.
func (h *handler) entity(ctx context.Context, id string) (*trace.EntityView, error) {
	res, err := trace.KBQuery(ctx, h.k, trace.KBQueryParams{ID: id})
	if err != nil {
		return nil, err
	}
	if len(res.Entities) == 0 {
		return nil, nil
	}
	return &res.Entities[0], nil
}

// leaf redirects a leaf path (from a link in a leaf's body) to its node.
func (h *handler) leaf(w http.ResponseWriter, r *http.Request) {
	v, err := search.ReadNode(r.Context(), h.k, search.ReadParams{Path: r.PathValue("path"), IncludeChangelog: new(false)})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, nodeURL(h.opts.Prefix, v.ID), http.StatusSeeOther)
}

// Search.

// findLimit is how many hits the search box and the results page show.
const findLimit = 20

type hitItem struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Type        string `json:"type"`
	Path        string `json:"path"`
	Description string `json:"description"`
	// Snippet is the matching window of the body as plain text; Parts is
	// the same text in runs, the matched words marked.
	Snippet string        `json:"snippet"`
	Parts   []snippetPart `json:"snippet_parts"`
	Score   string        `json:"score"`
	URL     string        `json:"url"`
}

type findView struct {
	Branch string    `json:"branch"`
	Query  string    `json:"query"`
	Hits   []hitItem `json:"hits"`
	// Note says why nothing was looked for.
	Note string `json:"note,omitempty"`
}

// search runs kk_search (listing matches even below the relevance
// threshold: on this page a search is a filter, not a question).
func (h *handler) search(ctx context.Context, q string, limit int) (*findView, error) {
	v := &findView{Query: q, Hits: []hitItem{}}
	if !index.Searchable(q) {
		if strings.TrimSpace(q) != "" {
			v.Note = "no word to look for"
		}
		return v, nil
	}
	d, err := search.SearchNodes(ctx, h.k, search.SearchParams{Query: q, Limit: &limit, All: true})
	if err != nil && h.opts.Repair != nil && h.opts.Repair(err) {
		d, err = search.SearchNodes(ctx, h.k, search.SearchParams{Query: q, Limit: &limit, All: true})
	}
	if err != nil {
		return nil, err
	}
	v.Branch = d.Branch
	for _, hit := range d.Hits {
		parts := snippetParts(hit.Snippet)
		if parts == nil {
			parts = []snippetPart{}
		}
		v.Hits = append(v.Hits, hitItem{ID: hit.ID, Title: hit.Title, Type: hit.Type, Path: hit.Path, Description: hit.Description,
			Snippet: snippetText(parts), Parts: parts, Score: strconv.FormatFloat(hit.Score, 'g', 4, 64), URL: nodeURL(h.opts.Prefix, hit.ID)})
	}
	return v, nil
}

func (h *handler) find(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	v, err := h.search(r.Context(), q, findLimit)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, http.StatusOK, "find", h.newPage(r, "", "Search: "+q, v))
}

func (h *handler) findJSON(w http.ResponseWriter, r *http.Request) {
	limit := findLimit
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > search.MaxSearchLimit {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": op.Invalid("limit", "must be a number between 1 and %d", search.MaxSearchLimit)})
			return
		}
		limit = n
	}
	v, err := h.search(r.Context(), r.URL.Query().Get("q"), limit)
	if err != nil {
		writeJSON(w, statusOf(err), map[string]any{"error": op.ErrorOf(err)})
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	_ = enc.Encode(v)
}

// The molecules and atoms.

type atomItem struct {
	ID, Name, URL, Summary string
	Paths                  []string
	Version                int64
}

type moleculeItem struct {
	atomItem
	Atoms []atomItem
}

type graphView struct {
	Molecules []moleculeItem
	Orphans   []atomItem
	Atoms     int
}

func (h *handler) atomItem(a graph.AtomView) atomItem {
	return atomItem{ID: a.ID, Name: a.Name, URL: nodeURL(h.opts.Prefix, a.ID), Summary: firstParagraph(a.Knowledge), Paths: a.Paths, Version: a.Version}
}

func (h *handler) graph(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	mols, atoms, err := graphEntities(ctx, h.k)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v := graphView{Atoms: len(atoms)}
	at := map[string]int{}
	for _, m := range mols {
		at[store.IDKey(m.ID)] = len(v.Molecules)
		v.Molecules = append(v.Molecules, moleculeItem{atomItem: atomItem{ID: m.ID, Name: m.Name, URL: nodeURL(h.opts.Prefix, m.ID),
			Summary: firstParagraph(m.Knowledge), Version: m.Version}})
	}
	for _, a := range atoms {
		i, ok := -1, false
		if a.MoleculeID != nil {
			i, ok = at[store.IDKey(*a.MoleculeID)]
		}
		if !ok {
			v.Orphans = append(v.Orphans, h.atomItem(a))
			continue
		}
		v.Molecules[i].Atoms = append(v.Molecules[i].Atoms, h.atomItem(a))
	}
	h.render(w, http.StatusOK, "graph", h.newPage(r, "graph", "Molecules and atoms", v))
}

// graphEntities pages through query_graph's search of molecules and of
// atoms.
func graphEntities(ctx context.Context, k *store.KB) ([]graph.MoleculeView, []graph.AtomView, error) {
	var mols []graph.MoleculeView
	var atoms []graph.AtomView
	for _, kind := range []string{graph.KindMolecule, graph.KindAtom} {
		limit, offset := graph.MaxLimit, 0
		for {
			sr, err := graph.Search(ctx, k, graph.SearchParams{EntityType: kind, IncludeChangelog: new(false), Limit: &limit, Offset: &offset})
			if err != nil {
				return nil, nil, err
			}
			mols, atoms = append(mols, sr.Molecules...), append(atoms, sr.Atoms...)
			n := len(sr.Molecules) + len(sr.Atoms)
			if offset += n; n == 0 || offset >= sr.Total {
				break
			}
		}
	}
	return mols, atoms, nil
}

// firstParagraph is the first paragraph of some knowledge, as one line of
// at most 240 characters.
func firstParagraph(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "\n\n"); i >= 0 {
		s = s[:i]
	}
	return truncate(strings.Join(strings.Fields(s), " "), 240)
}

// truncate cuts s to at most n runes, ending with "…" when cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// typeClass is a node type as a CSS class suffix: the type when it is a
// plain lowercase word, else "other".
func typeClass(t string) string {
	if t == "" {
		return "other"
	}
	for _, c := range t {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return "other"
		}
	}
	return t
}
