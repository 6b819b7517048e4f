//go:build unix

package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
)

// soakIterations is how many iterations TestServeSoakKill9 runs:
// KK_SOAK_ITERATIONS, else 3 (CI's share).
func soakIterations(t *testing.T) int {
	if v := os.Getenv("KK_SOAK_ITERATIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("KK_SOAK_ITERATIONS=%q", v)
		}
		return n
	}
	return 3
}

// soakSeed is the soak's base seed: KK_SOAK_SEED, else 1, so that a run
// in CI draws the same choices each time (the kill's instant among the
// jobs still depends on the machine's timing).
func soakSeed(t *testing.T) uint64 {
	if v := os.Getenv("KK_SOAK_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("KK_SOAK_SEED=%q", v)
		}
		return n
	}
	return 1
}

// soakPerson is a person working in the served work tree by hand while
// kk serve runs, is killed and restarts: their edits of notes, a note
// of their own never committed, a change staged, commits of their own.
// It records what each of their files must hold at the end.
type soakPerson struct {
	root string
	rng  *rand.Rand // the person's own, drawn only by their goroutine
	// worktree is what each file the person wrote holds in the work
	// tree; staged what git's index holds for it; committed what the
	// branch holds for a file the person committed, by the commit's
	// subject.
	worktree, staged map[string][]byte
	committed        map[string]map[string][]byte
	errs             []string
	trace            []string // each git command the person ran, when, and how it ended
}

// git runs git as the person does, again while a git lock is held (kk
// serve's commit, or the lock a killed kk serve left until the next
// start removes it) or a commit of kk serve's moved HEAD under theirs,
// as a person runs their command again when git says so.
func (p *soakPerson) git(args ...string) ([]byte, error) {
	args = append([]string{"-c", "user.name=Person", "-c", "user.email=person@example.com", "-c", "commit.gpgsign=false"}, args...)
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Duration(5+p.rng.IntN(20)) * time.Millisecond) {
		cmd := exec.Command("git", args...)
		cmd.Dir = p.root
		at := time.Now()
		out, err := cmd.CombinedOutput()
		p.trace = append(p.trace, fmt.Sprintf("%s..%s git %s: %v %q", at.UTC().Format("15:04:05.000"), time.Now().UTC().Format("15:04:05.000"), strings.Join(args[6:], " "), err, out))
		// "cannot lock ref 'HEAD': is at … but expected …": git commit
		// reads HEAD before it takes index.lock, and a kk serve commit
		// landed between: git refuses, and the person commits again.
		again := bytes.Contains(out, []byte(".lock")) || bytes.Contains(out, []byte("cannot lock ref"))
		if err == nil || !again || time.Now().After(deadline) {
			if err != nil {
				err = fmt.Errorf("git %s: %v: %s", strings.Join(args[6:], " "), err, out)
			}
			return out, err
		}
	}
}

func (p *soakPerson) fail(format string, args ...any) {
	p.errs = append(p.errs, fmt.Sprintf(format, args...))
}

// write writes a file of the work tree as an editor saves it.
func (p *soakPerson) write(rel string, data []byte) {
	abs := filepath.Join(p.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		p.fail("mkdir for %s: %v", rel, err)
		return
	}
	if err := os.WriteFile(abs, data, 0o644); err != nil {
		p.fail("write %s: %v", rel, err)
		return
	}
	p.worktree[rel] = data
}

// editNote rewrites a note's description and body, as a person editing
// it by hand would.
func (p *soakPerson) editNote(rel, what string) {
	data, err := os.ReadFile(filepath.Join(p.root, filepath.FromSlash(rel)))
	if err != nil {
		p.fail("read %s: %v", rel, err)
		return
	}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "description: ") {
			lines[i] = "description: " + what
			break
		}
	}
	p.write(rel, []byte(strings.Join(lines, "\n")+what+"\n"))
}

// soakLeaf is a note a person writes by hand, in kenkeep's format.
func soakLeaf(id, title, body string) []byte {
	return []byte("---\ntype: map\ntitle: " + title + "\ndescription: " + body + "\ntags:\n  - person\nkk_schema_version: 3\nkk_id: " + id +
		"\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\nkk_created_at: '2026-12-01T10:00:00Z'\nkk_updated_at: '2026-12-01T10:00:00Z'\nkk_version: 1\n---\n" + body + "\n")
}

// rebaseInProgress reports whether a rebase of the person's stopped
// halfway.
func (p *soakPerson) rebaseInProgress() bool {
	for _, d := range []string{"rebase-merge", "rebase-apply"} {
		if _, err := os.Stat(filepath.Join(p.root, ".git", d)); err == nil {
			return true
		}
	}
	return false
}

// act runs the person's steps, each after a pause, in the order drawn:
// the four every iteration has, and those of more drawn among
// stashed (a note to edit and stash), a checkout of another branch and
// back, git commit --amend, git rebase and a hand edit of GRAPH.md.
func (p *soakPerson) act(edited, staged, stashed string, more []string) {
	steps := []func(){
		func() { p.editNote(edited, "A line the person typed by hand.") },
		func() {
			rel := ".ai/kenkeep/nodes/inbox/map-persons-own-note.md"
			p.write(rel, soakLeaf("map-persons-own-note", "Persons own note", "Written by hand and never committed."))
		},
		func() {
			p.editNote(staged, "A change the person staged.")
			if _, err := p.git("add", "--", staged); err != nil {
				p.fail("%v", err)
				return
			}
			p.staged[staged] = p.worktree[staged]
		},
		func() {
			rel := fmt.Sprintf("person/scratch-%d.txt", p.rng.IntN(1000))
			p.write(rel, []byte("A file of the person's code, committed by them.\n"))
			subject := "person: " + rel
			if _, err := p.git("add", "--", rel); err != nil {
				p.fail("%v", err)
				return
			}
			if _, err := p.git("commit", "-q", "-m", subject, "--", rel); err != nil {
				p.fail("%v", err)
				return
			}
			p.committed[subject] = map[string][]byte{rel: p.worktree[rel]}
			delete(p.worktree, rel)
		},
	}
	for _, m := range more {
		switch m {
		case "stash":
			steps = append(steps, func() {
				p.editNote(stashed, "A change the person stashed and popped.")
				if _, err := p.git("stash", "push", "--", stashed); err != nil {
					p.fail("%v", err)
					return
				}
				time.Sleep(time.Duration(p.rng.IntN(150)) * time.Millisecond)
				if _, err := p.git("stash", "pop", "-q"); err != nil {
					p.fail("%v", err)
				}
			})
		case "checkout":
			steps = append(steps, func() {
				branch := fmt.Sprintf("side-%d", p.rng.IntN(1000))
				if _, err := p.git("checkout", "-q", "-b", branch); err != nil {
					p.fail("%v", err)
					return
				}
				time.Sleep(time.Duration(p.rng.IntN(150)) * time.Millisecond)
				if _, err := p.git("checkout", "-q", "main"); err != nil {
					p.fail("%v", err)
				}
			})
		case "amend":
			steps = append(steps, func() {
				if _, err := p.git("commit", "-q", "--amend", "--only", "--no-edit"); err != nil {
					p.fail("%v", err)
				}
			})
		case "rebase":
			steps = append(steps, func() {
				_, err := p.git("rebase", "-q", "--autostash", "--force-rebase", "HEAD~2")
				for i := 0; err != nil && p.rebaseInProgress() && i < 100; i++ {
					time.Sleep(20 * time.Millisecond) // a lock held: go on
					_, err = p.git("-c", "core.editor=true", "rebase", "--continue")
				}
				if err != nil {
					p.fail("%v", err)
				}
				// git's autostash gives the stash back unstaged.
				clear(p.staged)
			})
		case "graph":
			steps = append(steps, func() {
				rel := ".ai/kenkeep/GRAPH.md"
				data, err := os.ReadFile(filepath.Join(p.root, rel))
				if err != nil {
					p.fail("%v", err)
					return
				}
				p.write(rel, append(data, "\nA line the person added by hand.\n"...))
				delete(p.worktree, rel) // generated: kk's to make again
			})
		}
	}
	p.rng.Shuffle(len(steps), func(i, j int) { steps[i], steps[j] = steps[j], steps[i] })
	for _, step := range steps {
		time.Sleep(time.Duration(p.rng.IntN(300)) * time.Millisecond)
		step()
	}
}

// soakJobs are the jobs accepted (202) by the servers of one iteration.
type soakJobs struct {
	mu  sync.Mutex
	ids []string
}

func (j *soakJobs) add(id string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !slices.Contains(j.ids, id) {
		j.ids = append(j.ids, id)
	}
}

// kkRun runs kk in dir and returns its combined output.
func kkRun(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("kk", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KK_ROOT=")
	return cmd.CombinedOutput()
}

// TestServeSoakKill9 is a seeded soak of kk serve under crashes and a
// person working beside it. Each iteration, on a new repository: a kk
// serve with a few committed notes takes concurrent posts, edits and a
// deletion from three clients, while a person in the same work tree
// edits a note by hand, writes a note of their own they never commit,
// stages a change and commits a file of their own; the server is killed
// with SIGKILL at a random instant, sometimes killed again while it
// recovers, and restarted; once it has drained, every job accepted ends
// done with exactly one commit or failed with none, the person's files
// hold their bytes (the work tree, the staged blob, the commit), the
// work tree holds no change but the person's, no lock and no journal of
// the transaction is left, git fsck --strict passes, kk check passes in
// the work tree, and kk check and kk index rebuild --check pass on a
// clone of the branch.
//
// Half the iterations share with a bare origin a colleague pushes to
// (--push-every 30ms, so that the kill lands in fetches, rebases, moves
// of the branch and pushes too; KK_SOAK_PUSH=0 turns that off). It was
// opt-in while the tick rebased in the person's work tree: a kill there
// left git's own .git/index.lock or .git/HEAD.lock and a rebase in
// progress, every job after the restart held (KK_SOAK_SEED=11 iteration
// 23, KK_SOAK_SEED=7 iteration 35), and a person's save in the middle of
// it left their changes in git stash list or unstaged (11 of 60
// iterations of KK_SOAK_SEED=11). The tick now replays in a work tree of
// kk's own and moves the branch in git's lock order, a move a kill cut
// in two set right by the next start (gitx.FinishMove; found here,
// KK_SOAK_SEED=7 iteration 35). With
// KK_SOAK_PERSON_GIT=1 the person also draws, each iteration, further
// steps among git stash push and pop, a checkout of another branch and
// back, git commit --amend, git rebase and a hand edit of GRAPH.md.
// Those fail often, and not yet understood as kk's: git stash and git
// rebase --autostash are several git steps, and one that meets the
// index.lock of a kk serve commit fails halfway ("Saved working
// directory and index state …" then "Unable to create …/index.lock";
// "Cannot autostash"), leaving the change in git stash list; some git
// stash push -- PATH also exit 1 saying nothing.
//
// It runs 3 iterations; KK_SOAK_ITERATIONS=N runs N, KK_SOAK_SEED
// changes the base seed (iteration i draws from the seed and i, and the
// log names both), and KK_SOAK_ONLY=i runs iteration i alone, e.g.
//
//	KK_SOAK_ITERATIONS=100 go test ./internal/cli -run '^TestServeSoakKill9$' -count=1 -v -timeout 60m
func TestServeSoakKill9(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	t.Parallel()
	seed := soakSeed(t)
	for iter := range soakIterations(t) {
		if only := os.Getenv("KK_SOAK_ONLY"); only != "" && only != strconv.Itoa(iter) {
			continue
		}
		if !soakIteration(t, seed, iter) {
			t.Errorf("seed %d iteration %d failed (KK_SOAK_SEED=%d reproduces its choices)", seed, iter, seed)
		}
	}
}

// soakIteration runs one iteration of TestServeSoakKill9 and reports
// whether every invariant held.
func soakIteration(t *testing.T, seed uint64, iter int) bool {
	ok := true
	t.Run(fmt.Sprintf("iter%d", iter), func(t *testing.T) {
		defer func() { ok = !t.Failed() }()
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(seed, uint64(iter)))
		root := filepath.Join(t.TempDir(), "kb")
		delay := time.Duration(rng.IntN(4)) * 10 * time.Millisecond
		s := startCrashServer(t, root, delay)
		logs := []fmt.Stringer{s.log}
		jobs := &soakJobs{}

		// Six committed notes: two for the clients to edit, one to
		// delete, three for the person.
		var paths []string
		for i := range 6 {
			j, err := s.client.Post(ctx, httpapi.PostRequest{
				Title:   fmt.Sprintf("Seed note %d", i),
				Content: fmt.Sprintf("Seed note %d of the soak, committed before the storm.\n", i),
				Tags:    []string{"seed"},
			})
			if err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithTimeout(ctx, time.Minute)
			j, err = s.client.Wait(wctx, j.JobID, 5*time.Millisecond)
			cancel()
			if err != nil || j.Status != "done" {
				t.Fatalf("seed note %d: %+v %v\n%s", i, j, err, s.log)
			}
			paths = append(paths, j.Path)
		}
		base := ".ai/kenkeep/nodes/"
		editA, editB, deleted, personEdited, personStaged, personStashed := paths[0], paths[1], paths[2], base+paths[3], base+paths[4], base+paths[5]
		var more []string
		for _, m := range []string{"stash", "checkout", "amend", "rebase", "graph"} {
			if rng.IntN(2) == 0 && os.Getenv("KK_SOAK_PERSON_GIT") == "1" {
				more = append(more, m)
			}
		}

		// At times, kk serve shares with a bare origin a colleague
		// pushes to meanwhile (--push-every: the kill may land in its
		// fetch, rebase, move of the branch or push).
		push := rng.IntN(2) == 0 && os.Getenv("KK_SOAK_PUSH") != "0"
		var serveArgs []string
		colleagueDone := make(chan struct{})
		var colleagueErrs []string
		if !push {
			close(colleagueDone)
		} else {
			if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if err := s.cmd.Wait(); err != nil {
				t.Fatalf("kk serve after SIGTERM: %v\n%s", err, s.log)
			}
			dir := filepath.Dir(root)
			origin, other := filepath.Join(dir, "origin.git"), filepath.Join(dir, "colleague")
			for _, args := range [][]string{{"-C", dir, "init", "-q", "--bare", "-b", "main", origin}, {"-C", root, "remote", "add", "origin", origin}, {"-C", root, "push", "-q", "origin", "main"}, {"-C", dir, "clone", "-q", origin, other}} {
				if out, err := gitx.Run(ctx, dir, args...); err != nil {
					t.Fatalf("git %v: %v %s", args, err, out)
				}
			}
			serveArgs = []string{"--push-every", "30ms"}
			s = startCrashServerWith(t, root, delay, func(cmd *exec.Cmd) { cmd.Args = append(cmd.Args, serveArgs...) })
			logs = append(logs, s.log)
			crng := rand.New(rand.NewPCG(seed, uint64(iter)<<32|2))
			go func() {
				defer close(colleagueDone)
				for n := range 3 {
					time.Sleep(time.Duration(crng.IntN(300)) * time.Millisecond)
					name := fmt.Sprintf("colleague-%d.txt", n)
					if err := os.WriteFile(filepath.Join(other, name), []byte("A colleague's file.\n"), 0o644); err != nil {
						colleagueErrs = append(colleagueErrs, err.Error())
						return
					}
					c := []string{"-c", "user.name=Colleague", "-c", "user.email=c@example.com"}
					for _, args := range [][]string{{"add", name}, append(c, "commit", "-qm", "colleague "+name)} {
						if out, err := gitx.Run(ctx, other, args...); err != nil {
							colleagueErrs = append(colleagueErrs, fmt.Sprintf("git %v: %v %s", args, err, out))
							return
						}
					}
					for try := 0; ; try++ {
						if _, err := gitx.Run(ctx, other, "push", "-q", "origin", "main"); err == nil {
							break
						} else if try == 20 {
							colleagueErrs = append(colleagueErrs, fmt.Sprintf("git push: %v", err))
							return
						}
						if out, err := gitx.Run(ctx, other, append(c, "pull", "-q", "--rebase", "origin", "main")...); err != nil {
							colleagueErrs = append(colleagueErrs, fmt.Sprintf("git pull: %v %s", err, out))
							return
						}
					}
				}
			}()
		}
		startSoak := func(delay time.Duration) *crashServer {
			s := startCrashServerWith(t, root, delay, func(cmd *exec.Cmd) { cmd.Args = append(cmd.Args, serveArgs...) })
			logs = append(logs, s.log)
			return s
		}

		person := &soakPerson{
			root: root, rng: rand.New(rand.NewPCG(seed, uint64(iter)<<32|1)),
			worktree: map[string][]byte{}, staged: map[string][]byte{}, committed: map[string]map[string][]byte{},
		}
		personDone := make(chan struct{})
		go func() {
			defer close(personDone)
			person.act(personEdited, personStaged, personStashed, more)
		}()

		// Three clients, each with its requests, stopping at the first
		// error (the server killed under them).
		requests := []func(c *httpapi.Client) (httpapi.JobStatus, error){
			func(c *httpapi.Client) (httpapi.JobStatus, error) {
				return c.Edit(ctx, httpapi.EditRequest{Path: editA, Content: "Seed note 0, rewritten by a client.\n"})
			},
			func(c *httpapi.Client) (httpapi.JobStatus, error) {
				return c.Edit(ctx, httpapi.EditRequest{Path: editB, Title: "Seed note 1 renamed", Description: "Its metadata edited by a client."})
			},
			func(c *httpapi.Client) (httpapi.JobStatus, error) { return c.Delete(ctx, deleted) },
		}
		for i := range 9 {
			requests = append(requests, func(c *httpapi.Client) (httpapi.JobStatus, error) {
				return c.Post(ctx, httpapi.PostRequest{
					Title:   fmt.Sprintf("Storm note %d", i),
					Content: fmt.Sprintf("Storm note %d, posted while kk serve may be killed.\n", i),
					Tags:    []string{"storm"},
				})
			})
		}
		rng.Shuffle(len(requests), func(i, j int) { requests[i], requests[j] = requests[j], requests[i] })
		var clients sync.WaitGroup
		for k := range 3 {
			mine := requests[k*len(requests)/3 : (k+1)*len(requests)/3]
			pause := rng.IntN(60)
			clients.Add(1)
			go func() {
				defer clients.Done()
				for _, r := range mine {
					time.Sleep(time.Duration(pause) * time.Millisecond)
					j, err := r(s.client)
					if err != nil {
						return
					}
					jobs.add(j.JobID)
				}
			}()
		}

		// Mostly while the jobs run, at times once the person alone is
		// left working.
		killAfter := time.Duration(rng.IntN(300)) * time.Millisecond
		if rng.IntN(3) == 0 {
			killAfter = time.Duration(rng.IntN(1200)) * time.Millisecond
		}
		time.Sleep(killAfter)
		s.kill(t)
		clients.Wait()
		t.Logf("seed %d iteration %d: delay %v, person also %v, push %v, killed after %v with %d jobs accepted", seed, iter, delay, more, push, killAfter, len(jobs.ids))

		// Killed again while it recovers, at times.
		if rng.IntN(3) == 0 {
			again := time.Duration(rng.IntN(300)) * time.Millisecond
			s = startSoak(delay)
			time.Sleep(again)
			s.kill(t)
			t.Logf("killed again %v after the restart", again)
		}
		s = startSoak(0)
		// Two more posts to the restarted server, beside its recovery.
		for i := range 2 {
			j, err := s.client.Post(ctx, httpapi.PostRequest{Title: fmt.Sprintf("After note %d", i), Content: "Posted to the restarted server.\n"})
			if err != nil {
				t.Fatalf("post after the restart: %v\n%s", err, s.log)
			}
			jobs.add(j.JobID)
		}
		<-personDone
		<-colleagueDone
		for _, e := range colleagueErrs {
			t.Errorf("the colleague: %s", e)
		}
		allLogs := func() string {
			var b strings.Builder
			for i, l := range logs {
				fmt.Fprintf(&b, "--- server %d ---\n%s", i, l)
			}
			return b.String()
		}
		defer func() {
			if t.Failed() {
				t.Logf("the person's git commands:\n%s", strings.Join(person.trace, "\n"))
				t.Logf("servers' logs:\n%s", allLogs())
			}
		}()
		for _, e := range person.errs {
			t.Errorf("the person: %s", e)
		}
		done, failed := waitAll(t, root, s.client, jobs.ids, s.log)
		t.Logf("%d jobs done, %d failed", done, failed)
		if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := s.cmd.Wait(); err != nil {
			t.Errorf("kk serve after SIGTERM: %v", err)
		}
		soakCheck(t, root, person)
		if push {
			if out, err := gitx.Run(ctx, filepath.Dir(root), "-C", filepath.Join(filepath.Dir(root), "origin.git"), "fsck", "--strict", "--no-dangling"); err != nil {
				t.Errorf("git fsck of origin: %v %s", err, out)
			}
		}
	})
	return ok
}

// soakCheck checks the invariants of an iteration, the server stopped.
func soakCheck(t *testing.T, root string, person *soakPerson) {
	t.Helper()
	ctx := context.Background()
	for rel, want := range person.worktree {
		if got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel))); err != nil || !bytes.Equal(got, want) {
			t.Errorf("the person's %s holds %q (%v), want %q", rel, got, err, want)
		}
	}
	for rel, want := range person.staged {
		if got, err := gitx.Read(ctx, root, "show", ":"+rel); err != nil || !bytes.Equal(got, want) {
			t.Errorf("git's index holds %q (%v) for the person's staged %s, want %q", got, err, rel, want)
		}
	}
	subjects, err := gitx.Read(ctx, root, "log", "--format=%s", "main")
	if err != nil {
		t.Fatal(err)
	}
	for subject, files := range person.committed {
		if !strings.Contains(string(subjects), subject+"\n") {
			t.Errorf("the person's commit %q is not on the branch", subject)
		}
		for rel, want := range files {
			if got, err := gitx.Read(ctx, root, "show", "main:"+rel); err != nil || !bytes.Equal(got, want) {
				t.Errorf("the branch holds %q (%v) for the person's committed %s, want %q", got, err, rel, want)
			}
		}
	}
	// Nothing changed in the work tree but the person's files and the
	// generated files.
	st, err := gitx.Read(ctx, root, "status", "--porcelain", "--untracked-files=all", "--no-renames")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimRight(string(st), "\n"), "\n") {
		if line == "" {
			continue
		}
		rel := line[3:]
		_, wt := person.worktree[rel]
		_, sg := person.staged[rel]
		// The generated files of the work tree are made from its
		// leaves, the person's included.
		gen := rel == ".ai/kenkeep/ENTRY.md" || rel == ".ai/kenkeep/GRAPH.md" || strings.HasSuffix(rel, "/index.md")
		if !wt && !sg && !gen {
			t.Errorf("git status: %q is not the person's", line)
			// What the file went through, to tell whose write it was.
			diff, _ := gitx.Read(ctx, root, "diff", "HEAD", "--", rel)
			log, _ := gitx.Read(ctx, root, "log", "--format=%h %ci %s", "-n", "8", "main", "--", rel)
			t.Logf("git diff HEAD -- %s:\n%s\nits commits:\n%s", rel, diff, log)
		}
	}
	// A git command the killed server started runs on in its own
	// process group (a fetch or push: it ends as it would have), its
	// locks held until it ends: a lock is left only once none runs.
	gitsEnded(t, root)
	noLocks(t, root)
	for _, d := range []string{"rebase-merge", "rebase-apply"} {
		if _, err := os.Stat(filepath.Join(root, ".git", d)); err == nil {
			t.Errorf("a rebase is left in progress (.git/%s)", d)
		}
	}
	if out, err := gitx.Read(ctx, root, "symbolic-ref", "--short", "HEAD"); err != nil || strings.TrimSpace(string(out)) != "main" {
		t.Errorf("HEAD is not on main: %q %v", out, err)
	}
	if out, err := gitx.Read(ctx, root, "stash", "list"); err != nil || len(out) > 0 {
		t.Errorf("git stash list: %s %v", out, err)
	}
	stateDir := filepath.Join(root, ".ai", "kenkeep", ".state")
	_ = filepath.WalkDir(filepath.Join(stateDir, "txn"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("left in the transaction's folder: %s", p)
		}
		return nil
	})
	for _, name := range []string{"serve.rebasing", "serve.rebasing.staged"} {
		if _, err := os.Stat(filepath.Join(stateDir, name)); err == nil {
			t.Errorf(".state/%s is left", name)
		}
	}
	if ents, err := os.ReadDir(filepath.Join(stateDir, "queue.damaged")); err == nil && len(ents) > 0 {
		t.Errorf("job records set aside as damaged: %d", len(ents))
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Error(err)
	}
	if out, err := gitx.Run(ctx, root, "fsck", "--strict", "--no-dangling"); err != nil {
		t.Errorf("git fsck: %v %s", err, out)
	}
	if out, err := kkRun(root, "check"); err != nil {
		t.Errorf("kk check in the work tree: %v\n%s", err, out)
	}
	clone := filepath.Join(filepath.Dir(root), "clone")
	if out, err := gitx.Run(ctx, filepath.Dir(root), "clone", "-q", "--no-hardlinks", root, clone); err != nil {
		t.Fatalf("git clone: %v %s", err, out)
	}
	if out, err := kkRun(clone, "index", "rebuild", "--check"); err != nil {
		t.Errorf("kk index rebuild --check on a clone of the branch: %v\n%s", err, out)
	}
	if out, err := kkRun(clone, "check"); err != nil {
		t.Errorf("kk check on a clone of the branch: %v\n%s", err, out)
	}
}

// gitsEnded waits, for at most 10 s, until no git process works in the
// repository at root (its working directory in it), where the system
// says (Linux's /proc; elsewhere it returns at once).
func gitsEnded(t *testing.T, root string) {
	t.Helper()
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		real = root
	}
	running := func() []string {
		procs, _ := os.ReadDir("/proc")
		var found []string
		for _, p := range procs {
			if _, err := strconv.Atoi(p.Name()); err != nil {
				continue
			}
			comm, err := os.ReadFile(filepath.Join("/proc", p.Name(), "comm"))
			if err != nil || !strings.HasPrefix(strings.TrimSpace(string(comm)), "git") {
				continue
			}
			cwd, err := os.Readlink(filepath.Join("/proc", p.Name(), "cwd"))
			if err == nil && (cwd == real || strings.HasPrefix(cwd, real+string(filepath.Separator))) {
				found = append(found, p.Name()+" "+strings.TrimSpace(string(comm)))
			}
		}
		return found
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := running()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("git processes still work in the repository 10 s after the drain: %v", left)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
