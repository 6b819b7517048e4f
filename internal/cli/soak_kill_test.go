//go:build unix

package cli

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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
// After every step: the person's uncommitted bytes are as they left them;
// a killed write's leaves (every note and the redirect ledger) are as
// before it or as the same command leaves them run to its end (in a copy
// of the repository); after the next kk command (kk check, which must
// pass: a hand edit of a note's body or description is no finding of
// kk check, only of kk index rebuild --check, see below) no journal is
// left; after kk index rebuild nothing of a killed writer is left and kk
// index rebuild --check passes; git fsck is clean.
//
// It runs 3 iterations of 20 steps by default. KK_SOAK_ITERATIONS sets
// how many, KK_SOAK_SEED the first iteration's seed (each iteration's
// seed is logged, and KK_SOAK_SEED=<it> KK_SOAK_ITERATIONS=1 runs that
// one again); KK_SOAK_STEPS the steps per iteration.
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
	s.t.Logf("%d steps, %d writers killed: %d left the leaves as before, %d as after", steps, s.kills, s.rolledBack, s.applied)
}

// kkWrite runs one random kk write, killed or not.
func (s *soak) kkWrite(step string) {
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range s.kkNotes {
			if !yield(id) {
				return
			}
		}
	})
	var kind, stdin string
	var args []string
	var after func()  // what the write does to s once it applied
	var target string // the person's note the write changes, if any
	switch r := s.rng.IntN(6); {
	case r == 0 || len(ids) < 3:
		kind = "write"
		id := fmt.Sprintf("practice-k%d", s.next)
		s.next++
		folder := []string{"alpha", "beta", "beta/deep", "gamma"}[s.rng.IntN(4)]
		args = []string{"node", "write", "practice", id, "--description", "a new kk note", "--folder", folder}
		if len(ids) > 0 {
			args = append(args, "--relates-to", ids[s.rng.IntN(len(ids))])
		}
		stdin = soakBody(id, 0)
		after = func() { s.kkNotes[id] = folder }
	case r == 1:
		kind = "update"
		id := ids[s.rng.IntN(len(ids))]
		args = []string{"node", "write", "practice", id, "--update", "--description", fmt.Sprintf("updated at %s", step)}
		stdin = soakBody(id, s.rng.IntN(1000)+1)
	case r == 2 && s.stashed == nil:
		kind = "update-person"
		p := s.personNotes[s.rng.IntN(len(s.personNotes))]
		target = p
		id := strings.TrimSuffix(filepath.Base(p), ".md")
		args = []string{"node", "write", "map", id, "--update", "--description", fmt.Sprintf("person note described at %s", step)}
		after = func() {
			// kk changed the description and kept the rest: the person's
			// bytes are now the file as kk left it, whose body must still
			// hold the person's edit (checked by checkPerson's caller).
			if old, ok := s.want[p]; ok {
				cur := s.read(p)
				if !bytes.Equal(soakBodyOf(cur), soakBodyOf(old)) {
					s.fatalf("%s: kk node write --update --description changed the body the person edited:\nbefore:\n%s\nafter:\n%s", step, old, cur)
				}
				s.want[p] = cur
			}
		}
	case r == 3:
		kind = "delete"
		id := ids[s.rng.IntN(len(ids))]
		args = []string{"node", "delete", id}
		after = func() { delete(s.kkNotes, id) }
	case r == 4:
		kind = "rename"
		id := ids[s.rng.IntN(len(ids))]
		nid := fmt.Sprintf("practice-k%d", s.next)
		s.next++
		args = []string{"node", "rename", id, nid}
		after = func() { s.kkNotes[nid] = s.kkNotes[id]; delete(s.kkNotes, id) }
	default:
		kind = "rebuild"
		args = []string{"index", "rebuild"}
	}
	kill := s.rng.IntN(3) != 0 && s.took[kind] > 0
	var delay time.Duration
	if kill {
		delay = time.Duration(s.rng.Int64N(int64(s.took[kind]) * 6 / 5))
	}
	s.logf("%s: kk %s%s", step, strings.Join(args, " "), map[bool]string{true: fmt.Sprintf(" (killed after %s)", delay)}[kill])

	var ref string // a copy of the repository, to run the write to its end
	before := s.leaves(s.dir)
	if kill {
		ref = filepath.Join(s.t.TempDir(), "ref")
		if out, err := exec.Command("cp", "-a", s.dir, ref).CombinedOutput(); err != nil {
			s.fatalf("cp: %v\n%s", err, out)
		}
	}
	cmd := s.command(s.dir, stdin, "kk", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		s.fatalf("%v", err)
	}
	if kill {
		time.Sleep(delay)
		_ = cmd.Process.Signal(syscall.SIGKILL)
	}
	err := cmd.Wait()
	killed := false
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		killed = true
		s.kills++
	}
	if !killed {
		if err != nil {
			s.fatalf("%s: kk %s: %v\n%s", step, strings.Join(args, " "), err, out.String())
		}
		s.took[kind] = time.Since(start)
		if after != nil {
			after()
		}
		return
	}
	// The person's bytes must hold before any other kk runs: the kill
	// must not have touched them.
	s.checkPerson(step+" (right after the kill)", target)
	// The next kk command recovers; the leaves are then as before the
	// write or as after it.
	s.kk("check")
	got := s.leaves(s.dir)
	if soakSame(got, before) {
		s.logf("  rolled back (or never started)")
		s.rolledBack++
		return
	}
	rcmd := s.command(ref, stdin, "kk", args...)
	if rout, err := rcmd.CombinedOutput(); err != nil {
		s.fatalf("%s: kk %s in the reference copy: %v\n%s", step, strings.Join(args, " "), err, rout)
	}
	want := s.leaves(ref)
	if !soakSame(got, want) {
		s.fatalf("%s: kk %s killed after %s left the leaves neither as before nor as after:\n%s", step, strings.Join(args, " "), delay, soakDiff(before, want, got))
	}
	s.logf("  applied before the kill")
	s.applied++
	if after != nil {
		after()
	}
	_ = os.RemoveAll(ref)
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
	out, err := s.tryIn("", "git", "commit", "-qam", "person's commit")
	if err != nil && !strings.Contains(out, "nothing to commit") && !strings.Contains(out, "no changes added") {
		s.fatalf("git commit -am: %v\n%s", err, out)
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
	s.kkWrite(step)
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
	if out, err := s.tryIn("", "kk", "check"); err != nil {
		s.fatalf("%s: kk check: %v\n%s", when, err, out)
	}
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
	if out, err := s.tryIn("", "kk", "index", "rebuild", "--check"); err != nil {
		s.fatalf("%s: kk index rebuild --check after a rebuild: %v\n%s", when, err, out)
	}
	s.checkPerson(when + " (after kk index rebuild)")
	if out, err := s.tryIn("", "git", "fsck", "--no-progress"); err != nil || strings.TrimSpace(out) != "" && !soakOnlyDangling(out) {
		s.fatalf("%s: git fsck: %v\n%s", when, err, out)
	}
	if _, err := os.Stat(filepath.Join(s.dir, ".git", "index.lock")); err == nil {
		s.fatalf("%s: .git/index.lock is left", when)
	}
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

// leaves returns every file under the repository's nodes/ and conflicts/
// that a person or kk writes (all but the generated index.md files and
// temporary files), by repository-relative path.
func (s *soak) leaves(repo string) map[string]string {
	out := map[string]string{}
	k := store.New(repo)
	for _, top := range []string{k.NodesDir(), k.ConflictsDir()} {
		err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			if d.IsDir() || d.Name() == "index.md" || store.IsTempName(d.Name()) {
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
	}
	return out
}

func soakSame(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
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
