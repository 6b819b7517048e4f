package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// A job's transaction generates the index files (ENTRY.md, GRAPH.md,
// nodes/**/index.md) from the work tree, which may hold leaves no commit
// holds: a kk node write not committed yet, a person's hand edit, a leaf
// a failed job left. A commit carries the generated files of its own
// leaves: the tip's, changed by the job. Most of the time they are the
// same, and the transaction's files are committed; when they are not,
// the commit's files are generated from the commit's leaves.
//
// To tell, the server keeps a view of what the served branch's tip holds
// under the knowledge base's folder: every file's path and the sha256 of
// its content, read once at the first commit (one git cat-file for all),
// then changed with each commit it makes and with the files another
// writer's commits change (git diff-tree).

// view is what a commit of the served branch holds under .ai/kenkeep.
type view struct {
	head  string
	files map[string]string // path relative to .ai/kenkeep -> sha256 (hex) of the content
	// clean is set when the tip's generated files are those of its leaves
	// and the work tree's generated files are the tip's: a commit whose
	// leaves are the work tree's then needs only the generated files its
	// transaction rewrote. It is set by a commit this server made from
	// the work tree's leaves, and cleared by any other move of the branch.
	clean bool
	// leaves is the nodes hash (store.HashLeaves) of the commit's leaves
	// when it is known to be the hash of a tree the work tree held: set
	// with clean, by a commit of the work tree's leaves (the hash of the
	// tree its transaction left) or by settleView. A job whose
	// transaction read a tree of that hash (txn.Result.Before) read the
	// commit's leaves, and its commit's leaves are the work tree's
	// without a comparison of every leaf: both sides differ from them by
	// the files the job changed alone.
	leaves string
}

func sum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// isLeafRel reports whether rel (relative to .ai/kenkeep) is a leaf's
// path: under nodes/, a leaf's name, no folder or file starting with ".".
func isLeafRel(rel string) bool {
	np, ok := strings.CutPrefix(rel, "nodes/")
	if !ok || !store.IsLeafName(path.Base(np)) {
		return false
	}
	return !strings.HasPrefix(np, ".") && !strings.Contains(np, "/.")
}

// isGeneratedRel reports whether rel is a generated index file.
func isGeneratedRel(rel string) bool {
	if rel == "ENTRY.md" || rel == "GRAPH.md" {
		return true
	}
	np, ok := strings.CutPrefix(rel, "nodes/")
	return ok && path.Base(np) == "index.md" && !strings.HasPrefix(np, ".") && !strings.Contains(np, "/.")
}

// viewAt returns the view of commit head, reading what changed since the
// last one.
func (b *Backend) viewAt(ctx context.Context, r *gitx.Repo, head string) (*view, error) {
	b.mu.Lock()
	v := b.view
	b.mu.Unlock()
	if v != nil && v.head == head {
		return v, nil
	}
	_, prefix := b.prefixNow()
	folder := prefix + store.DirName
	next := &view{head: head, files: map[string]string{}}
	var changed map[string]string
	var err error
	if v == nil || v.head == "" || head == "" {
		changed, err = r.Files(ctx, head, folder)
	} else {
		for k, s := range v.files {
			next.files[k] = s
		}
		changed, err = r.Changed(ctx, v.head, head, folder)
	}
	if err != nil {
		return nil, err
	}
	var rels, ids []string
	for p, id := range changed {
		rel, ok := strings.CutPrefix(p, folder+"/")
		if !ok {
			continue
		}
		if id == "" {
			delete(next.files, rel)
			continue
		}
		rels = append(rels, rel)
		ids = append(ids, id)
	}
	if err := r.ReadBlobs(ids, func(i int, data []byte) error {
		next.files[rels[i]] = sum(data)
		return nil
	}); err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.view = next
	b.mu.Unlock()
	return next, nil
}

// leafBefore is what a file a job changes held in the work tree before
// the job (see guard): rel is relative to .ai/kenkeep.
type leafBefore struct {
	rel  string
	data []byte
}

// personsChanges refuses the commit of a job that changes a note whose
// bytes before the job were not the branch's at head: a person's edit
// not committed, or a note never committed (kk node write, a hand made
// leaf). The commit would carry the person's lines as kk serve's work
// (an edit of the metadata, the model's move of the note, the links of a
// note rewritten after a move), or they would be in no commit and no
// file (an edit of the content, a deletion). It is checked when the
// commit is planned, on the tip that holds the jobs before it (a job
// that wrote the note just before is the tip's). A note git converts on
// its way in (core.autocrlf, .gitattributes) is compared as git would
// store it.
//
// A post's refactors were checked when its transaction was written
// (guard), and left out then for a person's note: one the branch no
// longer holds as it was read is a person's commit since, and the job
// is held, put back and run again (never failed: a post is not lost).
func (p *planner) personsChanges(v *view, head, prefix string) error {
	for _, before := range p.befores {
		if err := p.personsChange(v, head, prefix, before); err != nil {
			var gerr *gitReadError
			if errors.As(err, &gerr) {
				return gerr.err // git could not tell: its failure is the commit's
			}
			if p.refactors {
				return fmt.Errorf("%w: the job's refactors change a note the branch no longer holds as the job read it (a person's commit meanwhile); the job runs again: %v", jobqueue.ErrHeld, err)
			}
			return err
		}
	}
	return nil
}

// personsChange is personsChanges for one file.
func (p *planner) personsChange(v *view, head, prefix string, before leafBefore) error {
	rel := before.rel
	tip, ok := v.files[rel]
	if ok && tip == sum(before.data) {
		return nil
	}
	// The tip holds what the job wrote: a person committed the job's
	// write (git commit -a) before its commit; nothing of theirs is in
	// the job's commit.
	if data, written := p.res.Data[rel]; ok && written && tip == sum(data) {
		return nil
	}
	// head may be the tip kk last knew, another writer having committed
	// since (the person's commit of the note): the branch's compare and
	// swap then misses, and the commit is planned again on the true tip.
	// What git fails to say is no answer (gitReadError): the commit
	// fails, or is held, with git's words, never refused as a person's
	// edit.
	now, born, err := revParse(p.ctx, p.r.Top, "refs/heads/"+p.r.Branch)
	if err != nil {
		return &gitReadError{err}
	}
	if born && now != head {
		p.tipOnly = true
		return nil
	}
	repo := repoPath(prefix, rel)
	blob, err := gitx.RunWith(p.ctx, p.r.Top, nil, before.data, "hash-object", "--path="+repo, "--stdin")
	if err != nil {
		return &gitReadError{err}
	}
	holds := func(commit string) (bool, error) {
		at, has, err := revParse(p.ctx, p.r.Top, commit+":"+repo)
		if err != nil {
			return false, &gitReadError{err}
		}
		return has && at == strings.TrimSpace(string(blob)), nil
	}
	var same bool
	switch {
	case ok:
		same, err = holds(head) // the same content, as git stores it (a conversion)
	case slices.Contains(p.res.Removed, rel):
		same, err = holds(head + "^") // a person's git commit -a committed the job's deletion
	}
	if err != nil || same {
		return err
	}
	return refusal{fmt.Errorf("%s: kk serve would commit them as its own work, or lose them; commit them (or discard them: git checkout -- %s), then send the request again", personsNote(rel, ok, p.r.Branch), repoPath(prefix, rel))}
}

// personsNote says what is the person's about the file rel (relative to
// .ai/kenkeep): changes not committed, or, when the branch does not have
// it (committed false), the whole file.
func personsNote(rel string, committed bool, branch string) string {
	note := strings.TrimPrefix(rel, "nodes/")
	if !committed {
		return "the note " + note + " is not committed on the branch " + branch + " (written by hand or by kk node write)"
	}
	return "the note " + note + " has changes in the work tree that are not committed (a person's edit)"
}

// planner makes one job's commit plan (gitx.CommitOptions.Plan) and
// remembers it for the view once the commit lands.
type planner struct {
	b   *Backend
	ctx context.Context
	r   *gitx.Repo
	res *txn.Result
	// befores are what the files the job changes held before it (guard);
	// refactors is set for a post whose placement moved notes.
	befores   []leafBefore
	refactors bool

	head       string
	after      string // the nodes hash of the work tree's leaves after the job ("" when not known)
	changes    gitx.Changes
	sums       map[string]string // path relative to .ai/kenkeep -> sha256, "" when removed
	consistent bool              // the commit's leaves are the work tree's
	// tipOnly is set when the plan found the branch moved past head and
	// left a check to the plan on the new tip (gitx.Changes.TipOnly).
	tipOnly bool
}

func (b *Backend) planner(ctx context.Context, r *gitx.Repo, res *txn.Result) *planner {
	return &planner{b: b, ctx: ctx, r: r, res: res}
}

// scope is the folder every plan reads the branch under and commits to
// (gitx.CommitOptions.Scope): the knowledge base's.
func (p *planner) scope() string {
	_, prefix := p.b.prefixNow()
	return prefix + store.DirName
}

// plan returns the job's commit on head: the files its transaction wrote
// and removed, and the generated files of the commit's leaves.
func (p *planner) plan(head string) (gitx.Changes, error) {
	p.tipOnly = false
	// Checked again under index.lock: the person's operation may have
	// begun after the worker took the job (Ready).
	if err := personsOperation(p.r.GitDir); err != nil {
		return gitx.Changes{}, fmt.Errorf("%w: %v", jobqueue.ErrHeld, err)
	}
	v, err := p.b.viewAt(p.ctx, p.r, head)
	if err != nil {
		return gitx.Changes{}, err
	}
	_, prefix := p.b.prefixNow()
	if err := p.personsChanges(v, head, prefix); err != nil {
		return gitx.Changes{}, err
	}
	generated := map[string]bool{}
	for _, rel := range p.res.Generated {
		generated[rel] = true
	}
	ch := gitx.Changes{Files: map[string][]byte{}}
	job := map[string]string{}
	for _, rel := range p.res.Written {
		if !generated[rel] {
			ch.Files[repoPath(prefix, rel)] = p.res.Data[rel]
			job[rel] = p.res.Sum(rel)
		}
	}
	for _, rel := range p.res.Removed {
		if !generated[rel] {
			ch.Removed = append(ch.Removed, repoPath(prefix, rel))
			job[rel] = ""
		}
	}
	if _, ok := v.files["config.yaml"]; head == "" || !ok {
		// The branch has no commit, or none of the knowledge base's
		// (its setup cut before its commit: kk serve killed while it hung).
		if err := p.scaffold(head, prefix, &ch, job); err != nil {
			return gitx.Changes{}, err
		}
	}
	// The committed side: the tip as the job changes it.
	committed := func(rel string) (string, bool) {
		if s, ok := job[rel]; ok {
			return s, s != ""
		}
		s, ok := v.files[rel]
		return s, ok
	}
	var diff []string
	if v.leaves == "" || p.res.Before != v.leaves {
		diff = p.leafDiff(v, job, committed)
	} else {
		p.b.mu.Lock()
		p.b.shortcuts++
		check := p.b.checkShortcut
		p.b.mu.Unlock()
		if check {
			if d := p.leafDiff(v, job, committed); len(d) > 0 {
				p.b.mu.Lock()
				p.b.shortcutErr = append(p.b.shortcutErr, strings.Join(d, " "))
				p.b.mu.Unlock()
			}
		}
	}
	same, err := p.sameSummaries(committed)
	if err != nil {
		return gitx.Changes{}, err
	}
	p.consistent = len(diff) == 0 && same
	p.b.log.Debug("commit plan", "head", head, "before", p.res.Before, "leaves", v.leaves, "differing_leaves", len(diff), "same_summaries", same, "clean", v.clean)
	if p.consistent && v.clean {
		for _, rel := range p.res.Written {
			if generated[rel] {
				ch.Files[repoPath(prefix, rel)] = p.res.Data[rel]
				job[rel] = p.res.Sum(rel)
			}
		}
		for _, rel := range p.res.Removed {
			if generated[rel] {
				ch.Removed = append(ch.Removed, repoPath(prefix, rel))
				job[rel] = ""
			}
		}
	} else if err := p.generate(head, v, diff, committed, &ch, job); err != nil {
		return gitx.Changes{}, err
	}
	ch.TipOnly = p.tipOnly
	p.head, p.changes, p.sums = head, ch, job
	if p.res.Index != nil {
		p.after = strings.TrimPrefix(p.res.Index.NodesHash, "sha256:")
	}
	return ch, nil
}

// scaffold puts in ch the files of kk init's scaffold that no job
// writes (README.md, config.yaml, .gitignore, .gitattributes,
// FOLDER_SUMMARIES.md, .state/installed-version and the empty redirect
// ledger nodes/.redirects.json under .ai/kenkeep),
// as the work tree holds them,
// for the first commit of a branch that has none, or whose tip has no
// config.yaml: a repository made by git init and kk init, never
// committed, or whose setup by kk serve was cut before its commit, whose
// clones would otherwise lack them. kk init's .kkignore beside
// .ai/kenkeep goes too, when the branch does not hold one (kk serve's own
// setup commits it with the scaffold; left out, it showed untracked for
// ever); a .kkignore the branch holds is the person's, kk init's block in
// it theirs to commit. Only these: a person's other uncommitted files stay
// out.
func (p *planner) scaffold(head, prefix string, ch *gitx.Changes, job map[string]string) error {
	k := p.b.k
	for _, abs := range []string{filepath.Join(k.Dir, "README.md"), k.ConfigPath(), k.GitignorePath(), k.GitattributesPath(), k.SummariesPath(), k.InstalledPath(), k.RedirectsPath()} {
		rel := filepath.ToSlash(store.RelTo(k.Dir, abs))
		if _, ok := job[rel]; ok {
			continue // the job's own
		}
		data, err := os.ReadFile(abs)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading kk's scaffold for the first commit: %w", err)
		}
		ch.Files[repoPath(prefix, rel)] = data
		job[rel] = sum(data)
	}
	return p.scaffoldKKIgnore(head, prefix, ch)
}

// scaffoldKKIgnore puts .kkignore in ch for scaffold, as the work tree
// holds it, when it is there and the branch's tip head ("" when the
// branch has no commit) does not hold it.
func (p *planner) scaffoldKKIgnore(head, prefix string, ch *gitx.Changes) error {
	data, err := os.ReadFile(p.b.k.KKIgnorePath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading kk's scaffold for the first commit: %w", err)
	}
	name := prefix + ".kkignore"
	if head != "" {
		out, err := gitx.Read(p.ctx, p.r.Top, "ls-tree", "-z", "--name-only", head, "--", name)
		if err != nil {
			return fmt.Errorf("reading whether the branch holds .kkignore: %w", err)
		}
		if len(out) > 0 {
			return nil
		}
	}
	ch.Files[name] = data
	return nil
}

// leafDiff lists the leaves (relative to nodes/) whose content in the
// work tree the transaction read differs from the commit's, or that only
// one of them has: committed is the commit's side, the tip v as the job's
// files (job: path -> sha256, "" when removed) change it.
func (p *planner) leafDiff(v *view, job map[string]string, committed func(string) (string, bool)) []string {
	t := p.res.AfterTree()
	if t == nil {
		return []string{""} // unknown: generate from the commit's leaves
	}
	var diff []string
	key := []byte("nodes/")
	for np, w := range t.Hashes {
		key = append(key[:len("nodes/")], np...)
		// Looked up by the bytes: no string made per leaf.
		c, ok := job[string(key)]
		if !ok {
			c, ok = v.files[string(key)]
		} else {
			ok = c != ""
		}
		if !ok || c != w {
			diff = append(diff, np)
		}
	}
	check := func(rel string) {
		if !isLeafRel(rel) {
			return
		}
		np := strings.TrimPrefix(rel, "nodes/")
		if _, inW := t.Hashes[np]; inW {
			return
		}
		if _, ok := committed(rel); ok {
			diff = append(diff, np)
		}
	}
	for rel := range v.files {
		check(rel)
	}
	slices.Sort(diff)
	return slices.Compact(diff)
}

// sameSummaries reports whether FOLDER_SUMMARIES.md in the work tree is
// the commit's: the index files' folder descriptions come from it.
func (p *planner) sameSummaries(committed func(string) (string, bool)) (bool, error) {
	c, inC := committed("FOLDER_SUMMARIES.md")
	data, err := os.ReadFile(p.b.k.SummariesPath())
	if errors.Is(err, fs.ErrNotExist) {
		return !inC, nil
	}
	if err != nil {
		return false, err
	}
	return inC && c == sum(data), nil
}

// generate puts in ch the generated files of the commit's leaves: the
// work tree's tree with the differing leaves as head holds them (a leaf
// that does not parse there is left out, as the work tree's reader
// leaves one out), compared with what head holds.
func (p *planner) generate(head string, v *view, diff []string, committed func(string) (string, bool), ch *gitx.Changes, job map[string]string) error {
	_, prefix := p.b.prefixNow()
	blob := func(rel string) ([]byte, bool, error) {
		if head == "" {
			return nil, false, nil
		}
		return p.r.Blob(head + ":" + repoPath(prefix, rel))
	}
	var t *store.Tree
	effective := 0
	if at := p.res.AfterTree(); at != nil {
		t = at.Clone()
	} else {
		read, err := index.ReadTree(p.ctx, p.b.k)
		if err != nil {
			return err
		}
		t = read.Clone()
		diff = diff[:0]
		for np := range t.Hashes {
			diff = append(diff, np)
		}
		for rel := range v.files {
			if isLeafRel(rel) {
				diff = append(diff, strings.TrimPrefix(rel, "nodes/"))
			}
		}
		slices.Sort(diff)
		diff = slices.Compact(diff)
	}
	for _, np := range diff {
		wn, inW := t.LeafAt(np)
		var cn *node.Node
		cs, inC := committed("nodes/" + np)
		if inC {
			data, ok, err := blob("nodes/" + np)
			if err != nil {
				return err
			}
			if s, written := job["nodes/"+np]; written && s != "" {
				data, ok = p.res.Data["nodes/"+np], true
			}
			if ok {
				if n, err := node.Parse(np, data); err == nil {
					n.Release(false)
					cn = n
					// The tree's hash of a leaf is the index files' (CRLF
					// read as LF), not the sum of its bytes: a leaf with
					// CRLF line ends put under the latter gave the commit
					// another nodes_hash than its leaves'.
					cs = store.LeafSum(data)
				}
			}
		}
		if cn == nil && !inW {
			continue
		}
		if inW && cn != nil && t.Hashes[np] == cs {
			continue
		}
		effective++
		if inW {
			t.Remove(wn)
		}
		if cn != nil {
			t.Put(nil, cn, cs)
		}
	}
	same, err := p.sameSummaries(committed)
	if err != nil {
		return err
	}
	var summaries []byte
	if data, ok := p.res.Data["FOLDER_SUMMARIES.md"]; ok {
		summaries = data
	} else if data, ok, err := blob("FOLDER_SUMMARIES.md"); err != nil {
		return err
	} else if ok {
		summaries = data
	} else {
		summaries = []byte{}
	}
	g, err := indexfiles.GenerateFor(p.b.k, t, summaries)
	if err != nil {
		return err
	}
	for name, data := range g.Files {
		if s, ok := v.files[name]; ok && s == sum(data) {
			continue
		}
		ch.Files[repoPath(prefix, name)] = data
		job[name] = sum(data)
	}
	for rel := range v.files {
		if _, ok := g.Files[rel]; !ok && isGeneratedRel(rel) {
			ch.Removed = append(ch.Removed, repoPath(prefix, rel))
			job[rel] = ""
		}
	}
	p.consistent = effective == 0 && same
	return nil
}

// landed brings the view to the commit a plan made.
func (b *Backend) landed(p *planner, l gitx.Landed) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v := b.view
	if v == nil || v.head != p.head {
		b.view = nil // read again at the next commit
		return
	}
	next := &view{head: l.Commit, files: v.files, clean: p.consistent}
	if p.consistent {
		next.leaves = p.after
	}
	for rel, s := range p.sums {
		if s == "" {
			delete(next.files, rel)
		} else {
			next.files[rel] = s
		}
	}
	b.view = next
}

// settleView reads the view of the branch's tip and marks it clean when
// the work tree is the tip: the same leaves and summaries, the same
// generated files, and those the ones its leaves generate. The first job
// then commits the files its transaction generated, as every job after
// it; otherwise its commit generates them from its leaves.
func (b *Backend) settleView(ctx context.Context, r *gitx.Repo) error {
	head, err := r.Head()
	if err != nil {
		return err
	}
	v, err := b.viewAt(ctx, r, head)
	if err != nil {
		return err
	}
	t, err := index.ReadTree(ctx, b.k)
	if err != nil {
		return err
	}
	p := &planner{b: b, ctx: ctx, r: r, res: &txn.Result{Tree: t}}
	committed := func(rel string) (string, bool) { s, ok := v.files[rel]; return s, ok }
	if len(p.leafDiff(v, nil, committed)) > 0 {
		return nil
	}
	if same, err := p.sameSummaries(committed); err != nil || !same {
		return err
	}
	names := []string{"ENTRY.md", "GRAPH.md"}
	for d := range t.IndexDirs {
		if d == "" {
			names = append(names, "nodes/index.md")
		} else {
			names = append(names, store.JoinRel("nodes/"+d, "index.md"))
		}
	}
	onDisk := 0
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(b.k.Dir, filepath.FromSlash(name)))
		if err != nil {
			return nil
		}
		if c, ok := v.files[name]; !ok || c != sum(data) {
			return nil
		}
		onDisk++
	}
	for rel := range v.files {
		if isGeneratedRel(rel) {
			onDisk--
		}
	}
	if onDisk != 0 {
		return nil
	}
	plan, err := indexfiles.PlanFor(ctx, b.k, nil, t, nil, nil)
	if err != nil || len(plan.Write) > 0 || len(plan.Remove) > 0 {
		return nil
	}
	b.mu.Lock()
	if b.view == v {
		v.clean = true
		if len(t.Problems) == 0 {
			v.leaves = indexfiles.NodesHash(t)
		}
	}
	b.mu.Unlock()
	return nil
}
