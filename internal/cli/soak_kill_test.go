//go:build unix

package cli

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// TestWriteSoakKill9 is a seeded soak of kk's writes killed with SIGKILL
// at random points while a person uses git in the same repository. Each
// iteration is a git repository with kk init done (its git hooks on, run
// synchronously) and some notes committed, then a random sequence of
// steps: kk node write (new, --update of its body, --update of the
// description of a note the person edited by hand), kk node delete, kk
// node rename and kk index rebuild as child processes, some of them killed
// after a random delay, between the person's hand edits of notes (kept
// uncommitted), git commit -am, git stash and git stash pop, git checkout
// -b and back, and a git merge of a branch that added other notes.
//
// Each iteration also draws, from its seed, which of these it does: kill
// the kk commands that recover after a kill (kk check, lint, status)
// before the one that checks; run two kk writes at once (the tree must
// then be as before, or as after one or both, in some order); keep a
// hand-written note with a YAML error there throughout (every other write
// must go through; kk check and kk index rebuild --check must report it
// and nothing else); kill git commit with its hooks; have the person
// commit (git commit -am) right after a kill, before any kk command, so
// that kk's post-commit hook is the next kk command.
//
// After every step: the person's uncommitted bytes are as they left them;
// a killed write's files (every note, the redirect ledger and, unless the
// person committed first, the generated files) are as before it or as
// the same command leaves them run to its end (in a copy of the
// repository); after the next kk command (kk check, which must pass: a
// hand edit of a note's body or description is no finding of kk check,
// only of kk index rebuild --check, which runs after a rebuild) no
// journal is left; after kk index rebuild nothing of a killed writer is
// left and kk index rebuild --check passes; kk kept no generated file as
// a hand edit (the person never edits one); git fsck is clean, no
// .git/index.lock left. At the end, HEAD's generated files match its
// notes (kk index rebuild --check in git archive HEAD), unless git commit
// was killed with its hooks.
//
// It runs 3 iterations of 20 steps by default. KK_SOAK_ITERATIONS sets
// how many, KK_SOAK_SEED the first iteration's seed (each iteration's
// seed is logged, and KK_SOAK_SEED=<it> KK_SOAK_ITERATIONS=1 runs that
// one again); KK_SOAK_STEPS the steps per iteration; KK_SOAK_KEEP a
// folder to copy the repository to when a check fails.
func TestWriteSoakKill9(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	iterations, seed, steps := soakEnv(t, "KK_SOAK_ITERATIONS", 3), soakEnv(t, "KK_SOAK_SEED", 1), soakEnv(t, "KK_SOAK_STEPS", 20)
	for it := range iterations {
		s := uint64(seed + it)
		t.Run(fmt.Sprintf("seed=%d", s), func(t *testing.T) {
			newSoak(t, s).run(steps)
		})
	}
}

func soakEnv(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: not a count", name, v)
	}
	return n
}

// soak is one iteration's repository, person and kk.
type soak struct {
	t    *testing.T
	rng  *rand.Rand
	dir  string // the repository
	home string // HOME and the global git config
	k    *store.KB

	// kkNotes are the ids of the notes kk writes, renames and deletes
	// (with their folder), personNotes the paths (repository-relative)
	// of the notes the person edits by hand, which kk writes only with
	// --update --description.
	kkNotes     map[string]string
	personNotes []string
	// want holds, for every file the person edited, the bytes it must
	// have in the working tree.
	want map[string][]byte
	// stashed is what want was before git stash.
	stashed map[string][]byte
	// took is how long each kind of kk write took when left alone: kills
	// land anywhere in [0, 1.2×took).
	took map[string]time.Duration
	next int // the next new note's number
	log  []string
	// merged tells whether the other branch was merged already.
	merged                     bool
	kills, rolledBack, applied int
	// killRecovery kills kk commands that recover after a kill before
	// the one that checks; pairs runs two writes at once now and then.
	killRecovery, pairs bool
	// killGit kills git commit and its hooks now and then;
	// commitAfterKill has the person commit right after a kill, before
	// any kk command.
	killGit, commitAfterKill bool
	// onSide: on a side branch, which branchAround leaves with the work
	// tree's changes (no commit there).
	onSide bool
	// bad is the repository-relative path of a note the person wrote by
	// hand with a YAML error in its front matter, there all along
	// (uncommitted), or "".
	bad string
}

func newSoak(t *testing.T, seed uint64) *soak {
	home := t.TempDir()
	s := &soak{
		t: t, rng: rand.New(rand.NewPCG(seed, 0x50ac)), dir: filepath.Join(t.TempDir(), "repo"), home: home,
		kkNotes: map[string]string{}, want: map[string][]byte{}, took: map[string]time.Duration{},
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s.k = store.New(s.dir)
	gitconfig := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(gitconfig, []byte("[user]\n\tname = Soak Person\n\temail = soak@example.invalid\n[init]\n\tdefaultBranch = main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.git("init", "-q", "-b", "main")
	s.kk("init")
	folders := []string{"alpha", "beta", "beta/deep"}
	for i := range 6 {
		id := fmt.Sprintf("practice-k%d", i)
		args := []string{"node", "write", "practice", id, "--description", fmt.Sprintf("kk note %d", i), "--folder", folders[i%3]}
		if i > 0 {
			args = append(args, "--relates-to", fmt.Sprintf("practice-k%d", i-1))
		}
		s.kkIn(soakBody(id, 0), args...)
		s.kkNotes[id] = folders[i%3]
	}
	for i := range 4 {
		id := fmt.Sprintf("map-p%d", i)
		s.kkIn(fmt.Sprintf("Person note %d.\n\nA paragraph the person keeps editing.\n", i),
			"node", "write", "map", id, "--description", fmt.Sprintf("person note %d", i), "--folder", "person")
		s.personNotes = append(s.personNotes, ".ai/kenkeep/nodes/person/"+id+".md")
	}
	s.next = 6
	s.killRecovery, s.pairs = s.rng.IntN(2) == 0, s.rng.IntN(2) == 0
	if s.rng.IntN(3) == 0 {
		s.bad = ".ai/kenkeep/nodes/person/map-bad.md"
	}
	s.killGit, s.commitAfterKill = s.rng.IntN(2) == 0, s.rng.IntN(2) == 0
	t.Logf("killing recovering commands: %t; two writers at once: %t; a note with a YAML error: %t; killing git commit: %t; committing right after a kill: %t",
		s.killRecovery, s.pairs, s.bad != "", s.killGit, s.commitAfterKill)
	s.git("add", "-A")
	s.git("commit", "-qm", "base notes")
	// The other branch adds notes of its own, to be merged later.
	s.git("checkout", "-q", "-b", "other")
	for i := range 3 {
		s.kkIn(fmt.Sprintf("Other note %d.\n", i), "node", "write", "practice", fmt.Sprintf("practice-o%d", i),
			"--description", fmt.Sprintf("other note %d", i), "--folder", "other")
	}
	s.git("add", "-A")
	s.git("commit", "-qm", "other notes")
	s.git("checkout", "-q", "main")
	if s.bad != "" {
		data := []byte("---\ntype: map\ntitle: Bad note\ndescription: written by hand\ntags: [oops\nkk_relates_to: [practice-k1]\n---\nThe person's note, its tags list not closed.\n")
		if err := os.WriteFile(filepath.Join(s.dir, s.bad), data, 0o644); err != nil {
			t.Fatal(err)
		}
		s.want[s.bad] = data
	}
	s.checkAll("setup")
	return s
}

// soakBody is the body of a kk note at a version: long enough that a
// write takes a moment.
func soakBody(id string, version int) string {
	return fmt.Sprintf("Body of %s, version %d.\n\n", id, version) +
		strings.Repeat(fmt.Sprintf("Line of %s at version %d, written by kk.\n", id, version), 200)
}

func (s *soak) env() []string {
	return append(os.Environ(),
		"KK_ROOT=", "KK_GIT_HOOKS=wait", "HOME="+s.home,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(s.home, "gitconfig"),
		"GIT_AUTHOR_NAME=Soak Person", "GIT_AUTHOR_EMAIL=soak@example.invalid",
		"GIT_COMMITTER_NAME=Soak Person", "GIT_COMMITTER_EMAIL=soak@example.invalid",
		"GIT_EDITOR=true", "GIT_MERGE_AUTOEDIT=no")
}

func (s *soak) command(dir, stdin, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = s.env()
	cmd.Stdin = strings.NewReader(stdin)
	return cmd
}

func (s *soak) fatalf(format string, args ...any) {
	s.t.Helper()
	if keep := os.Getenv("KK_SOAK_KEEP"); keep != "" {
		// The repository as the failure left it, to look into.
		_ = os.RemoveAll(keep)
		if out, err := exec.Command("cp", "-a", s.dir, keep).CombinedOutput(); err != nil {
			s.t.Logf("KK_SOAK_KEEP: %v\n%s", err, out)
		}
	}
	s.t.Fatalf("%s\nsteps so far:\n  %s", fmt.Sprintf(format, args...), strings.Join(s.log, "\n  "))
}

// tryIn runs a command to its end in the repository and returns its
// output and error.
func (s *soak) tryIn(stdin, name string, args ...string) (string, error) {
	out, err := s.command(s.dir, stdin, name, args...).CombinedOutput()
	return string(out), err
}

func (s *soak) mustIn(stdin, name string, args ...string) string {
	s.t.Helper()
	out, err := s.tryIn(stdin, name, args...)
	if err != nil {
		s.fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

func (s *soak) git(args ...string) string { s.t.Helper(); return s.mustIn("", "git", args...) }
func (s *soak) kk(args ...string) string  { s.t.Helper(); return s.mustIn("", "kk", args...) }
func (s *soak) kkIn(stdin string, args ...string) string {
	s.t.Helper()
	return s.mustIn(stdin, "kk", args...)
}

func (s *soak) logf(format string, args ...any) {
	s.log = append(s.log, fmt.Sprintf(format, args...))
}

func (s *soak) run(steps int) {
	for n := range steps {
		step := fmt.Sprintf("step %d", n)
		switch r := s.rng.IntN(100); {
		case r < 45:
			s.kkWrite(step)
		case r < 60:
			s.handEdit()
		case r < 70:
			s.commit()
		case r < 80:
			s.stashAround(step)
		case r < 90:
			s.branchAround(step)
		default:
			s.merge()
		}
		s.checkAll(step)
	}
	s.checkHead()
	s.t.Logf("%d steps, %d writers killed: %d left the leaves as before, %d as after", steps, s.kills, s.rolledBack, s.applied)
}

// soakWrite is one kk write of the soak.
type soakWrite struct {
	kind  string // for took
	args  []string
	stdin string
	// after is what the write does to the soak's model once it applied.
	after func()
	// target is the person's note the write changes, if any.
	target string
}

func (w soakWrite) String() string { return "kk " + strings.Join(w.args, " ") }

// pickWrite picks a random kk write. avoid holds the ids another write
// running at the same time works on.
func (s *soak) pickWrite(step string, avoid map[string]bool) soakWrite {
	var ids []string
	for _, id := range slices.Sorted(maps.Keys(s.kkNotes)) {
		if !avoid[id] {
			ids = append(ids, id)
		}
	}
	var w soakWrite
	switch r := s.rng.IntN(6); {
	case r == 0 || len(ids) < 3:
		w.kind = "write"
		id := fmt.Sprintf("practice-k%d", s.next)
		s.next++
		folder := []string{"alpha", "beta", "beta/deep", "gamma"}[s.rng.IntN(4)]
		w.args = []string{"node", "write", "practice", id, "--description", "a new kk note", "--folder", folder}
		if len(ids) > 0 {
			to := ids[s.rng.IntN(len(ids))]
			w.args = append(w.args, "--relates-to", to)
			avoid[to] = true
		}
		w.stdin = soakBody(id, 0)
		w.after = func() { s.kkNotes[id] = folder }
		avoid[id] = true
	case r == 1:
		w.kind = "update"
		id := ids[s.rng.IntN(len(ids))]
		w.args = []string{"node", "write", "practice", id, "--update", "--description", fmt.Sprintf("updated at %s", step)}
		w.stdin = soakBody(id, s.rng.IntN(1000)+1)
		avoid[id] = true
	case r == 2 && s.stashed == nil && !avoid["person"]:
		w.kind = "update-person"
		p := s.personNotes[s.rng.IntN(len(s.personNotes))]
		w.target = p
		id := strings.TrimSuffix(filepath.Base(p), ".md")
		w.args = []string{"node", "write", "map", id, "--update", "--description", fmt.Sprintf("person note described at %s", step)}
		w.after = func() {
			// kk changed the description and kept the rest: the person's
			// bytes are now the file as kk left it, whose body must still
			// be the one the person edited.
			if old, ok := s.want[p]; ok {
				cur := s.read(p)
				if !bytes.Equal(soakBodyOf(cur), soakBodyOf(old)) {
					s.fatalf("%s: kk node write --update --description changed the body the person edited:\nbefore:\n%s\nafter:\n%s", step, old, cur)
				}
				s.want[p] = cur
			}
		}
		avoid["person"] = true
	case r == 3:
		w.kind = "delete"
		id := ids[s.rng.IntN(len(ids))]
		w.args = []string{"node", "delete", id}
		w.after = func() { delete(s.kkNotes, id) }
		avoid[id] = true
	case r == 4:
		w.kind = "rename"
		id := ids[s.rng.IntN(len(ids))]
		nid := fmt.Sprintf("practice-k%d", s.next)
		s.next++
		w.args = []string{"node", "rename", id, nid}
		w.after = func() { s.kkNotes[nid] = s.kkNotes[id]; delete(s.kkNotes, id) }
		avoid[id], avoid[nid] = true, true
	default:
		w.kind = "rebuild"
		w.args = []string{"index", "rebuild"}
	}
	return w
}

// delay returns a random delay to kill a write of kind after, or false
// when this one is left alone (a third of them, and every kind's first
// run, which says how long it takes).
func (s *soak) delay(kind string) (time.Duration, bool) {
	if s.rng.IntN(3) == 0 || s.took[kind] == 0 {
		return 0, false
	}
	took := int64(s.took[kind])
	if s.rng.IntN(2) == 0 {
		// Late in the run, where the files are replaced and recorded.
		return time.Duration(took*3/5 + s.rng.Int64N(took/2)), true
	}
	return time.Duration(s.rng.Int64N(took * 6 / 5)), true
}

// started is a kk write running.
type started struct {
	w     soakWrite
	cmd   *exec.Cmd
	out   bytes.Buffer
	start time.Time
	kill  bool
	delay time.Duration
}

func (s *soak) start(w soakWrite, delay time.Duration, kill bool) *started {
	r := &started{w: w, cmd: s.command(s.dir, w.stdin, "kk", w.args...), delay: delay, kill: kill}
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.out
	r.start = time.Now()
	if err := r.cmd.Start(); err != nil {
		s.fatalf("%v", err)
	}
	if r.kill {
		go func() {
			time.Sleep(r.delay)
			_ = r.cmd.Process.Signal(syscall.SIGKILL)
		}()
	}
	return r
}

// wait waits for the write and reports whether it was killed; a write
// that was not must have succeeded.
func (s *soak) wait(step string, r *started) bool {
	err := r.cmd.Wait()
	if ws, ok := r.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		s.kills++
		return true
	}
	if err != nil {
		s.fatalf("%s: %s: %v\n%s", step, r.w, err, r.out.String())
	}
	s.took[r.w.kind] = time.Since(r.start)
	return false
}

// copyRepo copies the repository, to run writes to their end in.
func (s *soak) copyRepo() string {
	ref := filepath.Join(s.t.TempDir(), "ref")
	if out, err := exec.Command("cp", "-a", s.dir, ref).CombinedOutput(); err != nil {
		s.fatalf("cp: %v\n%s", err, out)
	}
	return ref
}

// runIn runs writes to their end, one after the other, in a copy of the
// repository, and returns its tree.
func (s *soak) runIn(ref string, ws ...soakWrite) map[string]string {
	for _, w := range ws {
		if out, err := s.command(ref, w.stdin, "kk", w.args...).CombinedOutput(); err != nil {
			s.fatalf("%s in a reference copy: %v\n%s", w, err, out)
		}
	}
	return s.tree(ref)
}

// recoverKilled is the next kk command after a kill: kk check, which
// rolls back. With killRecovery, kk commands that recover are killed
// first, zero to two of them.
func (s *soak) recoverKilled(step string) {
	if s.killRecovery {
		for range s.rng.IntN(3) {
			args := [][]string{{"check"}, {"lint"}, {"status"}}[s.rng.IntN(3)]
			cmd := s.command(s.dir, "", "kk", args...)
			delay := time.Duration(s.rng.Int64N(int64(30 * time.Millisecond)))
			if err := cmd.Start(); err != nil {
				s.fatalf("%v", err)
			}
			time.Sleep(delay)
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
			s.logf("  recovering kk %s killed after %s", strings.Join(args, " "), delay)
		}
	}
	s.kkCheck(step)
}

// kkWrite runs one random kk write, killed or not, or, with pairs, now
// and then two at once.
func (s *soak) kkWrite(step string) {
	n := 1
	if s.pairs && s.rng.IntN(3) == 0 {
		n = 2
	}
	avoid := map[string]bool{}
	var ws []soakWrite
	var delays []time.Duration
	var kills []bool
	var desc []string
	for range n {
		w := s.pickWrite(step, avoid)
		d, k := s.delay(w.kind)
		ws, delays, kills = append(ws, w), append(delays, d), append(kills, k)
		if k {
			desc = append(desc, fmt.Sprintf("%s (killed after %s)", w, d))
		} else {
			desc = append(desc, w.String())
		}
	}
	s.logf("%s: %s", step, strings.Join(desc, " and at once "))
	before := s.tree(s.dir)
	var ref string // the repository before, to run the writes whole in
	if slices.Contains(kills, true) {
		ref = s.copyRepo()
		defer func() { _ = os.RemoveAll(ref) }()
	}
	runs := make([]*started, n)
	for i, w := range ws {
		runs[i] = s.start(w, delays[i], kills[i])
	}
	killed := make([]bool, n)
	for i, r := range runs {
		killed[i] = s.wait(step, r)
	}
	if !slices.Contains(killed, true) {
		for _, w := range ws {
			if w.after != nil {
				w.after()
			}
		}
		return
	}
	var targets []string
	for _, w := range ws {
		if w.target != "" {
			targets = append(targets, w.target)
		}
	}
	// The person's bytes must hold before any other kk runs: the kill
	// must not have touched them.
	s.checkPerson(step+" (right after the kill)", targets...)
	// The next kk command recovers: the tree is then as before the
	// killed writes or as after them, whole, in some order, and holds
	// every write that was not killed.
	// Now and then the person commits first (git commit -am), and kk's
	// post-commit hook is the next kk command. The generated files are
	// then left out of the comparison: the hook brings them up to date.
	filter := func(m map[string]string) map[string]string { return m }
	if s.commitAfterKill && !s.onSide && s.rng.IntN(2) == 0 {
		out, err := s.tryIn("", "git", "commit", "-qam", "person's commit right after a kill")
		if err != nil && !soakNothingToCommit(out) {
			s.fatalf("%s: git commit -am after a kill: %v\n%s", step, err, out)
		}
		s.logf("  git commit -am before any kk command: %s", strings.TrimSpace(out))
		s.checkPerson(step+" (git commit -am after the kill)", targets...)
		filter = soakLeaves
	}
	s.recoverKilled(step)
	got := filter(s.tree(s.dir))
	before = filter(before)
	var orders [][]int
	if n == 1 {
		orders = [][]int{{}, {0}}
	} else {
		orders = [][]int{{}, {0}, {1}, {0, 1}, {1, 0}}
	}
	var tried []string
	for _, o := range orders {
		ok := true
		for i := range n {
			if !killed[i] && !slices.Contains(o, i) {
				ok = false // a write that was not killed is applied
			}
		}
		if !ok {
			continue
		}
		var want map[string]string
		if len(o) == 0 {
			want = before
		} else {
			cp := filepath.Join(s.t.TempDir(), "order")
			if out, err := exec.Command("cp", "-a", ref, cp).CombinedOutput(); err != nil {
				s.fatalf("cp: %v\n%s", err, out)
			}
			var ows []soakWrite
			for _, i := range o {
				ows = append(ows, ws[i])
			}
			want = filter(s.runIn(cp, ows...))
			_ = os.RemoveAll(cp)
		}
		if maps.Equal(got, want) {
			if len(o) == 0 {
				s.rolledBack++
				s.logf("  rolled back (or never started)")
			} else {
				s.applied++
				s.logf("  applied: %v", o)
			}
			for _, i := range o {
				if ws[i].after != nil {
					ws[i].after()
				}
			}
			return
		}
		tried = append(tried, fmt.Sprintf("as after %v:\n%s", o, soakDiff(before, want, got)))
	}
	s.fatalf("%s: the tree after the kill is neither as before nor as after the writes:\n%s", step, strings.Join(tried, "\n"))
}

// soakBodyOf returns a note's body (what follows its front matter).
func soakBodyOf(data []byte) []byte {
	if i := bytes.Index(data, []byte("\n---\n")); i >= 0 {
		return data[i+5:]
	}
	return data
}

// handEdit edits a person note by hand, as an editor saves it.
func (s *soak) handEdit() {
	p := s.personNotes[s.rng.IntN(len(s.personNotes))]
	data := s.read(p)
	data = append(data, fmt.Sprintf("\nHand edit %d of the person, not committed.\n", s.rng.IntN(1<<20))...)
	if err := os.WriteFile(filepath.Join(s.dir, p), data, 0o644); err != nil {
		s.fatalf("%v", err)
	}
	s.want[p] = data
	s.logf("hand edit of %s", p)
}

func (s *soak) read(rel string) []byte {
	data, err := os.ReadFile(filepath.Join(s.dir, rel))
	if err != nil {
		s.fatalf("%v", err)
	}
	return data
}

// commit is the person's git commit -am (with the notes kk added now and
// then: git add -A first).
func (s *soak) commit() {
	if s.rng.IntN(2) == 0 {
		s.git("add", "-A")
		s.logf("git add -A")
	}
	// Now and then the person interrupts git commit, and kk's post-commit
	// hook with it (kk index rebuild --commits when the commit left part
	// of the knowledge base in the work tree: a note kk added, not added
	// to git), as a terminal's Ctrl-C stops them all, but with SIGKILL.
	if s.killGit && s.took["git commit"] > 0 && s.rng.IntN(2) == 0 {
		cmd := s.command(s.dir, "", "git", "commit", "-qam", "person's commit")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		delay := time.Duration(s.rng.Int64N(int64(s.took["git commit"]) * 6 / 5))
		if err := cmd.Start(); err != nil {
			s.fatalf("%v", err)
		}
		time.Sleep(delay)
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err := cmd.Wait()
		s.logf("git commit -am, git and its hooks killed after %s: %v", delay, err)
		// git leaves its locks when killed (index.lock, HEAD.lock, a
		// branch's ref lock; kk's git update-ref in the hook was killed
		// with it), and says to remove them: the person does.
		_ = filepath.WalkDir(filepath.Join(s.dir, ".git"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") && os.Remove(p) == nil {
				s.logf("  rm %s", s.k.Rel(p))
			}
			return nil
		})
		s.checkPerson("after git commit was killed")
		s.kkCheck("after git commit was killed")
		return
	}
	start := time.Now()
	out, err := s.tryIn("", "git", "commit", "-qam", "person's commit")
	if err != nil && !soakNothingToCommit(out) {
		s.fatalf("git commit -am: %v\n%s", err, out)
	}
	if err == nil {
		s.took["git commit"] = time.Since(start)
	}
	s.logf("git commit -am")
}

// stashAround stashes the person's changes, runs a kk write (killed or
// not), and pops the stash.
func (s *soak) stashAround(step string) {
	// The person commits what kk wrote, and stashes their own edits.
	s.git("add", "-A")
	if len(s.want) > 0 {
		s.git(append([]string{"reset", "-q", "--"}, slices.Sorted(func(yield func(string) bool) {
			for p := range s.want {
				if !yield(p) {
					return
				}
			}
		})...)...)
	}
	if _, err := s.tryIn("", "git", "commit", "-qm", "kk's writes, before a stash"); err == nil {
		s.logf("git add -A; git reset <person's notes>; git commit")
	}
	out := s.git("stash")
	s.logf("git stash: %s", strings.TrimSpace(out))
	if strings.Contains(out, "No local changes") {
		s.kkWrite(step)
		return
	}
	s.stashed, s.want = s.want, map[string][]byte{}
	for p := range s.stashed {
		if data, err := s.tryIn("", "git", "show", "HEAD:"+p); err == nil {
			s.want[p] = []byte(data)
		}
	}
	s.checkPerson(step + " (stashed)")
	s.kkWrite(step)
	s.checkAll(step + " (stashed)")
	out, err := s.tryIn("", "git", "stash", "pop")
	if err != nil {
		// kk's write changed files the stash holds too (the generated
		// ones): git refuses to pop over them, as it does for any
		// change. The person commits and pops again, which merges.
		s.logf("git stash pop: %v: %s", err, strings.TrimSpace(out))
		s.git("add", "-A")
		s.git("commit", "-qm", "kk's writes, to pop the stash over")
		out, err = s.tryIn("", "git", "stash", "pop")
		if err != nil {
			s.fatalf("%s: git stash pop after a commit: %v\n%s\ngit status:\n%s", step, err, out, s.git("status"))
		}
	}
	s.logf("git stash pop")
	for p, data := range s.stashed {
		s.want[p] = data
	}
	s.stashed = nil
}

// branchAround checks out a new branch, runs a kk write there (killed or
// not, uncommitted), and checks out main again: the uncommitted changes
// come along both ways.
func (s *soak) branchAround(step string) {
	b := fmt.Sprintf("side-%d", len(s.log))
	s.git("checkout", "-q", "-b", b)
	s.logf("git checkout -b %s", b)
	s.checkAll(step + " (on " + b + ")")
	s.onSide = true
	s.kkWrite(step)
	s.onSide = false
	s.checkAll(step + " (on " + b + ")")
	s.git("checkout", "-q", "main")
	s.logf("git checkout main")
}

// merge merges the other branch (once), after committing what is there.
func (s *soak) merge() {
	if s.merged {
		s.commit()
		return
	}
	s.git("add", "-A")
	if _, err := s.tryIn("", "git", "commit", "-qm", "before the merge"); err != nil {
		s.logf("(nothing to commit before the merge)")
	}
	out, err := s.tryIn("", "git", "merge", "--no-edit", "other")
	if err != nil {
		s.fatalf("git merge other: %v\n%s\ngit status:\n%s", err, out, s.git("status"))
	}
	s.merged = true
	s.logf("git merge other")
}

// checkPerson checks that every file the person edited holds their bytes.
// A write's target (a person's note it changes) is left out.
func (s *soak) checkPerson(when string, target ...string) {
	s.t.Helper()
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range s.want {
			if !yield(p) {
				return
			}
		}
	}) {
		if slices.Contains(target, p) {
			continue
		}
		got, err := os.ReadFile(filepath.Join(s.dir, p))
		if err != nil || !bytes.Equal(got, s.want[p]) {
			s.fatalf("%s: the person's %s is not as they left it (%v):\nwant:\n%s\ngot:\n%s", when, p, err, s.want[p], got)
		}
	}
}

// checkAll checks the repository after a step.
func (s *soak) checkAll(when string) {
	s.t.Helper()
	s.checkPerson(when)
	s.kkCheck(when)
	s.checkPerson(when + " (after kk check)")
	// A reader rolls back a journal; a journal still being written when
	// its writer died (.journal.tmp) was never used, and is a temporary
	// file the next write removes (checked after kk index rebuild below).
	if ents, _ := os.ReadDir(txn.JournalDir(s.k)); slices.ContainsFunc(ents, func(e os.DirEntry) bool {
		return strings.HasSuffix(e.Name(), ".journal")
	}) {
		s.fatalf("%s: a journal is left after kk check: %v", when, ents)
	}
	if out, err := s.tryIn("", "kk", "index", "rebuild"); err != nil {
		s.fatalf("%s: kk index rebuild: %v\n%s", when, err, out)
	}
	if left, err := txn.Leftovers(s.k); err != nil || len(left) > 0 {
		s.fatalf("%s: left after kk index rebuild: %v %v", when, left, err)
	}
	s.findingsOnlyOfBad(when, "unreadable\t"+s.bad+"\t", "index", "rebuild", "--check")
	s.checkPerson(when + " (after kk index rebuild)")
	if out, err := s.tryIn("", "git", "fsck", "--no-progress"); err != nil || strings.TrimSpace(out) != "" && !soakOnlyDangling(out) {
		s.fatalf("%s: git fsck: %v\n%s", when, err, out)
	}
	// The person never edits a generated file: kk must not keep one as
	// their hand edit (which says, wrongly, that they wrote in it).
	if ents, err := os.ReadDir(filepath.Join(s.k.StateDir(), store.HandEditsDir)); err == nil && len(ents) > 0 {
		var kept []string
		_ = filepath.WalkDir(filepath.Join(s.k.StateDir(), store.HandEditsDir), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				kept = append(kept, s.k.Rel(p))
			}
			return nil
		})
		s.fatalf("%s: kk kept generated files as hand edits no one made: %v", when, kept)
	}
	if _, err := os.Stat(filepath.Join(s.dir, ".git", "index.lock")); err == nil {
		s.fatalf("%s: .git/index.lock is left", when)
	}
}

// checkHead checks that the generated files HEAD holds match the notes
// it holds (kk's hooks regenerate every commit whose files lag), in a
// copy of HEAD's knowledge base (git archive), unless the person killed
// git commit and its hooks.
func (s *soak) checkHead() {
	s.t.Helper()
	if s.killGit {
		return
	}
	dir := s.t.TempDir()
	archive := exec.Command("sh", "-c", `git archive HEAD .ai | tar -x -C "$1"`, "sh", dir)
	archive.Dir, archive.Env = s.dir, s.env()
	if out, err := archive.CombinedOutput(); err != nil {
		s.fatalf("git archive HEAD: %v\n%s", err, out)
	}
	cmd := s.command(dir, "", "kk", "index", "rebuild", "--check")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
			if s.bad == "" || !strings.HasPrefix(l, "unreadable\t"+s.bad+"\t") {
				s.fatalf("HEAD's generated files do not match its notes: kk index rebuild --check in git archive HEAD: %v\n%s%s", err, stdout.String(), stderr.String())
			}
		}
	}
}

// kkCheck runs kk check, which must pass, or, with a note with a YAML
// error there, find only that it cannot be read.
func (s *soak) kkCheck(when string) {
	s.t.Helper()
	s.findingsOnlyOfBad(when, "leaves-readable\t\t"+s.bad+" cannot be read: invalid YAML", "check")
}

// findingsOnlyOfBad runs kk with args, which must exit 0 or, with a bad
// note there, exit 1 with every line of its output starting with
// finding: a note with a YAML error is a finding of kk check and of kk
// index rebuild --check (it is left out of the generated files), and
// nothing else.
func (s *soak) findingsOnlyOfBad(when, finding string, args ...string) {
	s.t.Helper()
	cmd := s.command(s.dir, "", "kk", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		if s.bad != "" {
			s.fatalf("%s: kk %s passed with %s there", when, strings.Join(args, " "), s.bad)
		}
		return
	}
	ok := s.bad != "" && cmd.ProcessState.ExitCode() == 1 && stdout.Len() > 0
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if !strings.HasPrefix(l, finding) {
			ok = false
		}
	}
	if !ok {
		s.fatalf("%s: kk %s: %v\n%s%s", when, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
}

// soakNothingToCommit reports whether git commit's output says it had
// nothing to commit.
func soakNothingToCommit(out string) bool {
	return strings.Contains(out, "nothing to commit") || strings.Contains(out, "nothing added to commit") || strings.Contains(out, "no changes added")
}

// soakOnlyDangling reports whether git fsck's output names only dangling
// objects (a stash popped, a commit left): no error.
func soakOnlyDangling(out string) bool {
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, "dangling ") {
			return false
		}
	}
	return true
}

// tree returns every file of the repository's .ai/kenkeep but .state/
// and temporary files, by repository-relative path.
func (s *soak) tree(repo string) map[string]string {
	out := map[string]string{}
	k := store.New(repo)
	err := filepath.WalkDir(k.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p == k.StateDir() {
			return filepath.SkipDir
		}
		if d.IsDir() || store.IsTempName(d.Name()) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repo, p)
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		s.fatalf("%v", err)
	}
	return out
}

// soakLeaves returns the files of a tree but the generated ones.
func soakLeaves(tree map[string]string) map[string]string {
	out := map[string]string{}
	for p, v := range tree {
		if path.Base(p) != "index.md" && p != ".ai/kenkeep/GRAPH.md" && p != ".ai/kenkeep/ENTRY.md" {
			out[p] = v
		}
	}
	return out
}

// soakDiff names the files that differ between before, want (after the
// write run to its end) and got.
func soakDiff(before, want, got map[string]string) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, m := range []map[string]string{before, want, got} {
		for p := range m {
			if seen[p] {
				continue
			}
			seen[p] = true
			bv, bok := before[p]
			wv, wok := want[p]
			gv, gok := got[p]
			if bok == wok && bv == wv && wok == gok && wv == gv {
				continue
			}
			fmt.Fprintf(&b, "%s: before %s, after %s, got %s\n", p, soakState(bv, bok), soakState(wv, wok), soakState(gv, gok))
		}
	}
	return b.String()
}

func soakState(v string, ok bool) string {
	if !ok {
		return "absent"
	}
	return fmt.Sprintf("%d bytes %.60q", len(v), v)
}

// TestIndexRebuildKill9LargeTree kills kk index rebuild with SIGKILL at
// random points on a tree of 3000 generated notes in a git repository,
// whose generated files are gone (a cold rebuild writes every index.md,
// GRAPH.md and ENTRY.md) or stale after a person's uncommitted edits of
// notes' descriptions. After each kill, and a kk check, which must pass
// and roll back, the knowledge base is as before the rebuild or as a
// rebuild run to its end leaves it, the person's notes as they left
// them. 3 rounds by default; KK_SOAK_ROUNDS sets how many, KK_SOAK_SEED
// the seed.
func TestIndexRebuildKill9LargeTree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	rounds, seed := soakEnv(t, "KK_SOAK_ROUNDS", 3), soakEnv(t, "KK_SOAK_SEED", 1)
	s := &soak{t: t, rng: rand.New(rand.NewPCG(uint64(seed), 0xb16)), dir: filepath.Join(t.TempDir(), "repo"), home: t.TempDir()}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s.k = store.New(s.dir)
	s.git("init", "-q", "-b", "main")
	if _, err := benchtree.Generate(s.dir, benchtree.Options{Nodes: 3000, Seed: uint64(seed)}); err != nil {
		t.Fatal(err)
	}
	s.kk("init")
	s.git("add", "-A")
	s.git("commit", "-qm", "3000 notes")
	var leaves []string
	for p := range s.tree(s.dir) {
		if strings.Contains(p, "/nodes/") && strings.HasSuffix(p, ".md") && filepath.Base(p) != "index.md" {
			leaves = append(leaves, p)
		}
	}
	slices.Sort(leaves)
	var took time.Duration
	killed, rolledBack, applied := 0, 0, 0
	for round := range rounds {
		if round == 0 || s.rng.IntN(2) == 0 {
			// Cold: the generated files are gone.
			s.logf("round %d: the generated files removed", round)
			for p := range s.tree(s.dir) {
				if b := filepath.Base(p); b == "index.md" || p == ".ai/kenkeep/GRAPH.md" || p == ".ai/kenkeep/ENTRY.md" {
					if err := os.Remove(filepath.Join(s.dir, p)); err != nil {
						t.Fatal(err)
					}
				}
			}
		} else {
			// Warm: the person edits descriptions here and there.
			s.logf("round %d: 30 descriptions edited", round)
			for range 30 {
				p := leaves[s.rng.IntN(len(leaves))]
				data := s.read(p)
				data = bytes.Replace(data, []byte("\ndescription: "), []byte(fmt.Sprintf("\ndescription: edited in round %d, ", round)), 1)
				if err := os.WriteFile(filepath.Join(s.dir, p), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		before := s.tree(s.dir)
		cmd := s.command(s.dir, "", "kk", "index", "rebuild")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		var delay time.Duration
		if took > 0 {
			delay = time.Duration(s.rng.Int64N(int64(took) * 6 / 5))
		}
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if took > 0 {
			time.Sleep(delay)
			_ = cmd.Process.Signal(syscall.SIGKILL)
		}
		err := cmd.Wait()
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ws.Signaled() {
			if err != nil {
				s.fatalf("round %d: kk index rebuild: %v\n%s", round, err, out.String())
			}
			took = time.Since(start)
			s.logf("round %d: kk index rebuild ran to its end in %s", round, took)
		} else {
			killed++
			s.logf("round %d: kk index rebuild killed after %s", round, delay)
			if s.rng.IntN(2) == 0 {
				s.killRecovery = true
			}
			s.recoverKilled(fmt.Sprintf("round %d", round))
			s.killRecovery = false
		}
		got := s.tree(s.dir)
		for p, v := range before {
			if strings.Contains(p, "/nodes/") && filepath.Base(p) != "index.md" && got[p] != v {
				s.fatalf("round %d: %s changed", round, p)
			}
		}
		s.checkAll(fmt.Sprintf("round %d", round))
		after := s.tree(s.dir)
		switch {
		case maps.Equal(got, after):
			if ws.Signaled() {
				applied++
			}
		case maps.Equal(got, before):
			rolledBack++
		default:
			s.fatalf("round %d: the kill left the knowledge base neither as before the rebuild nor as after it:\nas before:\n%s\nas after:\n%s", round, soakDiff(before, before, got), soakDiff(after, after, got))
		}
		s.git("add", "-A")
		if out, err := s.tryIn("", "git", "commit", "-qm", fmt.Sprintf("round %d", round)); err != nil && !strings.Contains(out, "nothing to commit") {
			s.fatalf("round %d: git commit: %v\n%s", round, err, out)
		}
	}
	t.Logf("%d rounds, %d rebuilds killed: %d left the knowledge base as before, %d as after", rounds, killed, rolledBack, applied)
}
