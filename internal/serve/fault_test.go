package serve

// The fault suite of kk serve, in process, with real git: each case is
// one fault a team meets when it leaves kk serve running beside people
// who use git in the same work tree. The cases that need real processes
// (signals to the process group, kill -9, the push tick stopped) are in
// internal/cli/serve_fault_test.go.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/lock"
	"github.com/kk-project/kk/internal/service"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// health is GET /healthz.
type health struct {
	Status     string `json:"status"`
	QueueDepth int    `json:"queue_depth"`
	Processing int    `json:"processing"`
	WaitingFor string `json:"waiting_for"`
}

func (s *server) health(t *testing.T) health {
	t.Helper()
	resp, err := http.Get(s.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var h health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return h
}

// waitHealth waits (bounded) until /healthz says the worker waits for
// something containing want.
func (s *server) waitHealth(t *testing.T, want string) health {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		h := s.health(t)
		if h.Status == "waiting" && strings.Contains(h.WaitingFor, want) {
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz never said the worker waits for %q: %+v", want, h)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitJob waits for job id's end, failing the test after d.
func (s *server) waitJob(t *testing.T, id string, d time.Duration) httpapi.JobStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	j, err := s.Client.Wait(ctx, id, 10*time.Millisecond)
	if err != nil {
		t.Fatalf("job %s did not end within %s: %v", id, d, err)
	}
	return j
}

func (s *server) postAsync(t *testing.T, title string) string {
	t.Helper()
	j, err := s.Client.Post(ctx, httpapi.PostRequest{Title: title, Content: "About " + title + ".\n"})
	if err != nil {
		t.Fatal(err)
	}
	return j.JobID
}

// headChecks that HEAD's generated index files are exactly those of its
// leaves: a clone of the branch passes kk index rebuild --check.
func headChecks(t *testing.T, k *store.KB) {
	t.Helper()
	clone := filepath.Join(t.TempDir(), "clone")
	if _, err := gitx.Run(ctx, k.Root, "clone", "-q", k.Root, clone); err != nil {
		t.Fatal(err)
	}
	res, err := indexfiles.Check(ctx, store.New(clone))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changed) > 0 || len(res.Removed) > 0 {
		t.Errorf("HEAD's index files are not those of its leaves: changed %v, removed %v", res.Changed, res.Removed)
	}
}

// A leaf that does not parse (a colleague's, committed or pulled in) is
// skipped with a warning: posts beside it are done and committed, the
// index files list every other leaf, the server goes on.
func TestFaultUnreadableLeafIsSkipped(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	first := s.post(t, httpapi.PostRequest{Title: "x", Content: "A note.\n"})
	data, err := os.ReadFile(k.NodePath(first.Path))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), "title: x\n", "title: x\ntitle: y\n", 1)
	if bad == string(data) {
		t.Fatal("no title line to repeat")
	}
	if err := os.WriteFile(k.NodePath(first.Path), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, k, "commit", "-qam", "a colleague's broken leaf")
	for _, title := range []string{"hello", "world"} {
		j := s.post(t, httpapi.PostRequest{Title: title, Content: "Beside a broken leaf.\n"})
		if j.Status != "done" {
			t.Fatalf("post beside an unreadable leaf: %+v", j)
		}
		jobCommit(t, k, "store", j)
	}
	if got, _ := os.ReadFile(k.NodePath(first.Path)); string(got) != bad {
		t.Error("the unreadable leaf was changed")
	}
	e := s.edit(t, httpapi.EditRequest{Path: first.Path, Title: "z"})
	if e.Status != "failed" || !strings.Contains(e.Error, "appears twice") {
		t.Errorf("an edit of the unreadable leaf: %+v", e)
	}
	if h := s.health(t); h.Status != "ok" {
		t.Errorf("health: %+v", h)
	}
	clean(t, k)
}

// A job whose undo cannot run (its commit refused, then its files
// cannot be put back: a full disk) fails with both reasons, its files as
// it left them; the worker goes on, and the next job is done.
func TestFaultUndoThatCannotRunFailsTheJobAlone(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	// The repository refuses the commit, and what the undo needs (the
	// originals kept for it) is damaged meanwhile.
	hook := filepath.Join(k.Root, ".git", "hooks", "reference-transaction")
	kept := filepath.Join(txn.JournalDir(k), "kept")
	script := "#!/bin/sh\n[ \"$1\" = prepared ] && { for f in " + kept + "/*.journal; do echo damaged > \"$f\"; done; echo refused by policy >&2; exit 1; }\nexit 0\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	j := s.post(t, httpapi.PostRequest{Title: "Doomed", Content: "Its commit is refused.\n"})
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	if j.Status != "failed" || !strings.Contains(j.Error, "refused by policy") || !strings.Contains(j.Error, "damaged") {
		t.Fatalf("job: %+v", j)
	}
	if _, err := os.Stat(k.NodePath("inbox/map-doomed.md")); err != nil {
		t.Errorf("the failed job's leaf is not as the job left it: %v", err)
	}
	next := s.post(t, httpapi.PostRequest{Title: "Next", Content: "After a failed undo.\n"})
	if next.Status != "done" {
		t.Fatalf("the next job: %+v", next)
	}
	jobCommit(t, k, "store", next)
	if h := s.health(t); h.Status != "ok" {
		t.Errorf("health: %+v", h)
	}
}

// A restart always comes up: a job a crash left in processing whose
// files cannot be put back fails with the reason, and the server serves.
func TestFaultRestartAlwaysComesUp(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	s.post(t, httpapi.PostRequest{Title: "Before", Content: "Before.\n"})
	s.stop()
	// A job written and not committed, as a kill between the two leaves
	// it: the queue's record in processing, its originals kept.
	q, err := jobqueue.Open(filepath.Join(k.StateDir(), "queue"), jobqueue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(service.JobRequest{Title: "Half done", Content: "Half.\n"})
	queued, _, err := q.Enqueue(jobqueue.Request{Op: service.OpStore, Payload: payload})
	if err != nil {
		t.Fatal(err)
	}
	b := New(Options{KB: k})
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		_ = q.Run(context.Background(), func(ctx context.Context, w *jobqueue.Work) (string, error) {
			job := &service.Job{ID: w.Job.ID, Op: w.Job.Op, Request: service.JobRequest{Title: "Half done", Content: "Half.\n"}, Created: w.Job.Created}
			job.OnTouch(w.Touch)
			// Killed before its commit: the worker's goroutine ends there
			// (its deferred releases run, as a process's end frees its
			// locks).
			job.OnDefer(func(func(context.Context) error) { runtime.Goexit() })
			return b.Apply(ctx, job)
		})
	}()
	<-killed
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if j, _ := q.Get(queued.ID); j.Status != jobqueue.Processing || !txn.HasOriginals(k, queued.ID) {
		t.Fatalf("the simulated kill left %+v", j)
	}
	// The undo cannot write.
	var full atomic.Bool
	full.Store(true)
	faulty := txn.WithFaults(context.Background(), txn.Faults{Write: func(string) error {
		if full.Load() {
			return errors.New("no space left on device")
		}
		return nil
	}})
	s = startWith(t, faulty, k, nil)
	j := s.waitJob(t, queued.ID, 30*time.Second)
	full.Store(false)
	if j.Status != "failed" || !strings.Contains(j.Error, "no space left") {
		t.Fatalf("the interrupted job: %+v", j)
	}
	next := s.post(t, httpapi.PostRequest{Title: "After the restart", Content: "Served.\n"})
	if next.Status != "done" {
		t.Fatalf("after the restart: %+v", next)
	}
}

// A lock another git process holds for long (a person's git commit with
// its editor open; or one a crashed git left) is the environment's: jobs
// stay queued, /healthz says what the worker waits for, no job fails;
// once the lock goes, every job is done with one commit.
func TestFaultHeldIndexLockKeepsJobsQueued(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	lock := filepath.Join(k.Root, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 3 {
		ids = append(ids, s.postAsync(t, fmt.Sprintf("Held %d", i)))
	}
	h := s.waitHealth(t, "index.lock")
	time.Sleep(300 * time.Millisecond)
	for _, id := range ids {
		if j, _ := s.Client.Job(ctx, id); j.Status == "failed" || j.Status == "done" {
			t.Fatalf("job %s ended while the lock was held: %+v (health %+v)", id, j, h)
		}
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		j := s.waitJob(t, id, 30*time.Second)
		if j.Status != "done" {
			t.Fatalf("job after the lock went: %+v", j)
		}
		jobCommit(t, k, "store", j)
	}
	if h := s.health(t); h.Status != "ok" {
		t.Errorf("health after: %+v", h)
	}
	clean(t, k)
}

// A git lock kk itself created, left by a kk serve that was killed, is
// removed when the next one starts (kk serve's own lock being free says
// its owner is dead); a job is then done at once.
func TestFaultOwnStaleLockIsRemovedAtStart(t *testing.T) {
	k := newRepo(t, 0)
	lock := filepath.Join(k.Root, ".git", "index.lock")
	if err := os.WriteFile(lock, []byte(gitx.LockMarker+" session=0123456789ab pid=999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := start(t, k, nil)
	if _, err := os.Stat(lock); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("kk's own stale index.lock is still there")
	}
	j := s.waitJob(t, s.postAsync(t, "After a kill"), 8*time.Second)
	if j.Status != "done" {
		t.Fatalf("job: %+v", j)
	}
	jobCommit(t, k, "store", j)
	clean(t, k)
}

// A second kk serve of the same work tree is refused, naming the first.
func TestFaultOneServerPerWorkTree(t *testing.T) {
	k := newRepo(t, 0)
	start(t, k, nil)
	b := New(Options{KB: k, LockWait: 200 * time.Millisecond})
	if err := b.Open(ctx); !errors.Is(err, ErrServing) || !strings.Contains(err.Error(), "pid") || !strings.Contains(err.Error(), "waited 200ms") {
		t.Fatalf("a second server: %v", err)
	}
}

// git clean -fdx while kk serve runs deletes .state/, serve.lock with
// it: a second kk serve of the work tree is still refused, by the lock's
// guard under the git folder.
func TestFaultGitCleanKeepsOneServerPerWorkTree(t *testing.T) {
	k := newRepo(t, 0)
	start(t, k, nil)
	git(t, k, "clean", "-fdxq", "--", store.DirName)
	if _, err := os.Stat(filepath.Join(k.StateDir(), LockFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("git clean -fdx left serve.lock (%v); the test needs it gone", err)
	}
	b := New(Options{KB: k, LockWait: 200 * time.Millisecond})
	if err := b.Open(ctx); !errors.Is(err, ErrServing) || !strings.Contains(err.Error(), "pid") {
		if err == nil {
			_ = b.Close()
		}
		t.Fatalf("a second server after git clean -fdx: %v, want it refused", err)
	}
}

// A restart right after a kill -9 finds kk serve's lock still held for a
// moment (a git command the dead server was starting holds a copy of its
// files until it has started, which a busy machine delays): the start
// waits for it, and serves, where it said another server was serving.
func TestFaultStartWaitsForALockLetGoSoon(t *testing.T) {
	k := newRepo(t, 0)
	path := filepath.Join(k.StateDir(), LockFile)
	held, err := lock.Acquire(ctx, path, time.Second, "kk serve")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = held.Release()
	}()
	b := New(Options{KB: k})
	if err := b.Open(ctx); err != nil {
		t.Fatalf("a start while the lock was let go within 300 ms: %v", err)
	}
	_ = b.Close()
}

// done means exactly one commit, failed means none, whatever fails after
// the branch moved: git update-ref is killed after moving the branch (a
// reference-transaction hook kills it in its committed state), and the
// job is done, with its commit, once.
func TestFaultFailureAfterTheBranchMovedIsDone(t *testing.T) {
	k := newRepo(t, 0)
	hook := filepath.Join(k.Root, ".git", "hooks", "reference-transaction")
	if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hook, []byte("#!/bin/sh\n[ \"$1\" = committed ] && kill -9 $PPID\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := start(t, k, nil)
	var jobs []httpapi.JobStatus
	for i := range 3 {
		jobs = append(jobs, s.post(t, httpapi.PostRequest{Title: fmt.Sprintf("Moved %d", i), Content: "The update is killed after the move.\n"}))
	}
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Status != "done" {
			t.Fatalf("job: %+v", j)
		}
		jobCommit(t, k, "store", j)
	}
	clean(t, k)
}

// A person commits in the same work tree while jobs commit (git commit,
// which takes index.lock first, and plumbing that moves the branch with
// git update-ref): no job fails, none is reverted by a person's commit,
// each has exactly one commit, and every leaf is in HEAD.
func TestFaultPersonCommitsBesideJobs(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	stop := make(chan struct{})
	var commits atomic.Int64
	var wg sync.WaitGroup
	person := func(plumbing bool) {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			name := fmt.Sprintf("person-%v-%d.txt", plumbing, i)
			if err := os.WriteFile(filepath.Join(k.Root, name), []byte(name), 0o644); err != nil {
				t.Error(err)
				return
			}
			var cmd *exec.Cmd
			if plumbing {
				// A commit of the tip's tree, made without the index.
				cmd = exec.Command("sh", "-c", `set -e; h=$(git rev-parse HEAD); c=$(git commit-tree -p $h -m plumbing $h^{tree}); git update-ref HEAD $c $h`)
				_ = os.Remove(filepath.Join(k.Root, name))
			} else {
				cmd = exec.Command("sh", "-c", "git add "+name+" && git commit -q -m by-hand")
			}
			// A person whose command meets a lock runs it again, until it
			// goes through.
			for {
				c := exec.Command(cmd.Args[0], cmd.Args[1:]...)
				c.Dir = k.Root
				c.Env = append(os.Environ(), "GIT_AUTHOR_NAME=p", "GIT_AUTHOR_EMAIL=p@p", "GIT_COMMITTER_NAME=p", "GIT_COMMITTER_EMAIL=p@p")
				if c.Run() == nil {
					commits.Add(1)
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
	wg.Add(2)
	go person(false)
	go person(true)
	// Jobs until the person has committed beside them a few times (a
	// faster server, or a slower git, needs more than the first 20).
	var jobs []jobqueue.Job
	for round := 0; round < 5 && (round == 0 || commits.Load() < 5); round++ {
		jobs = append(jobs, s.postMany(t, 20, fmt.Sprintf("Beside a person %d", round))...)
	}
	close(stop)
	wg.Wait()
	if commits.Load() < 5 {
		t.Fatalf("only %d person commits: the test needs them beside the jobs", commits.Load())
	}
	head := git(t, k, "ls-tree", "-r", "--name-only", "HEAD")
	for _, j := range jobs {
		jobCommit(t, k, "store", httpapi.JobStatus{JobID: j.ID, Path: j.Path})
		if !strings.Contains(head, store.DirName+"/nodes/"+j.Path+"\n") {
			t.Errorf("HEAD lost job %s's leaf %s", j.ID, j.Path)
		}
	}
	headChecks(t, k)
	clean(t, k)
	t.Logf("%d person commits beside the jobs", commits.Load())
}

// Recovery puts back the bytes that were there before the job, never
// HEAD's: a person's uncommitted hand edit of a leaf a job edited, and a
// leaf written by kk node write and not committed that a job edited,
// both come back as they were after a kill between the job's write and
// its commit.
func TestFaultRecoveryRestoresTheBytesBeforeTheJob(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	committed := s.post(t, httpapi.PostRequest{Title: "Committed note", Content: "Committed.\n"})
	s.stop()
	// A hand edit of the committed leaf, and an uncommitted leaf.
	hand, _ := os.ReadFile(k.NodePath(committed.Path))
	hand = append(hand, "A person's line, not committed.\n"...)
	if err := os.WriteFile(k.NodePath(committed.Path), hand, 0o644); err != nil {
		t.Fatal(err)
	}
	in := contracts.NodeInput{Type: "map", Title: "Uncommitted note", Description: "d", Body: "Written by kk node write.\n", Folder: "inbox"}
	if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "kk node write"}); err != nil {
		t.Fatal(err)
	}
	uncommitted := "inbox/map-uncommitted-note.md"
	written, _ := os.ReadFile(k.NodePath(uncommitted))
	b := New(Options{KB: k})
	defer func() { _ = b.Close() }()
	for _, target := range []string{committed.Path, uncommitted} {
		var touched []string
		job := &service.Job{ID: "job-" + filepath.Base(target), Op: service.OpEdit, Request: service.JobRequest{Path: target, Title: "Edited by the job"}, Created: time.Now()}
		withTouch(job, &touched)
		job.OnDefer(func(func(context.Context) error) {}) // killed before its commit
		if _, err := b.Apply(ctx, job); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(k.NodePath(target)); !strings.Contains(string(got), "Edited by the job") {
			t.Fatalf("the job did not write %s", target)
		}
		if _, found, err := b.Committed(ctx, job.ID); err != nil || found {
			t.Fatalf("committed: %v %v", found, err)
		}
		if err := b.Restore(ctx, jobFrom(job, touched)); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(k.NodePath(committed.Path)); string(got) != string(hand) {
		t.Errorf("the hand-edited leaf after recovery:\n%s\nwant\n%s", got, hand)
	}
	if got, err := os.ReadFile(k.NodePath(uncommitted)); err != nil || string(got) != string(written) {
		t.Errorf("the uncommitted leaf after recovery: %q %v", got, err)
	}
}

// A commit's generated files describe exactly the leaves in that commit:
// with leaves in the work tree no commit holds (written by kk node write
// and not committed), the jobs' commits carry ENTRY.md, GRAPH.md and the
// folders' index.md of their own leaves; a clone passes kk index rebuild
// --check. Once the person commits theirs, the jobs go on as before.
func TestFaultGeneratedFilesDescribeTheCommit(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	s.post(t, httpapi.PostRequest{Title: "First committed", Content: "First.\n"})
	for i := range 3 {
		in := contracts.NodeInput{Type: "map", Title: fmt.Sprintf("Not committed %d", i), Description: "d", Body: "Uncommitted.\n", Folder: "inbox"}
		if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "kk node write"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		j := s.post(t, httpapi.PostRequest{Title: fmt.Sprintf("Job beside %d", i), Content: "Beside uncommitted leaves.\n"})
		if j.Status != "done" {
			t.Fatalf("job: %+v", j)
		}
		jobCommit(t, k, "store", j)
		headChecks(t, k)
	}
	for _, f := range []string{"ENTRY.md", "GRAPH.md", "nodes/inbox/index.md"} {
		if out := git(t, k, "show", "HEAD:"+store.DirName+"/"+f); strings.Contains(out, "not-committed") {
			t.Errorf("HEAD's %s names an uncommitted leaf", f)
		}
	}
	// The person commits their leaves (and the work tree's index files).
	git(t, k, "add", store.DirName)
	git(t, k, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-qm", "my notes")
	j := s.post(t, httpapi.PostRequest{Title: "After theirs", Content: "All committed.\n"})
	if j.Status != "done" {
		t.Fatalf("job: %+v", j)
	}
	headChecks(t, k)
	if out := git(t, k, "show", "HEAD:"+store.DirName+"/nodes/inbox/index.md"); !strings.Contains(out, "not-committed-0") {
		t.Error("HEAD's inbox/index.md lost the person's committed leaf")
	}
	clean(t, k)
}

// kk serve commits to the branch checked out when it started: while a
// person has another branch checked out in its work tree, jobs stay
// queued and /healthz says why; back on the branch, they are done there,
// and the other branch has none of them.
func TestFaultBranchIsPinned(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	s.post(t, httpapi.PostRequest{Title: "On main", Content: "Main.\n"})
	git(t, k, "switch", "-q", "-c", "elsewhere")
	other := git(t, k, "rev-parse", "HEAD")
	id := s.postAsync(t, "While elsewhere")
	h := s.waitHealth(t, "elsewhere")
	if !strings.Contains(h.WaitingFor, "main") {
		t.Errorf("health does not name the served branch: %+v", h)
	}
	if j, _ := s.Client.Job(ctx, id); j.Status == "done" || j.Status == "failed" {
		t.Fatalf("a job ended while another branch was checked out: %+v", j)
	}
	git(t, k, "switch", "-q", "main")
	j := s.waitJob(t, id, 30*time.Second)
	if j.Status != "done" {
		t.Fatalf("job: %+v", j)
	}
	jobCommit(t, k, "store", j)
	if got := git(t, k, "rev-parse", "elsewhere"); got != other {
		t.Error("the other branch moved")
	}
	clean(t, k)
}

// The served branch deleted under the server (git update-ref -d, or git
// branch -D from another work tree), HEAD still naming it: found by an
// outside fault run, where the next job failed for good with "cannot
// lock ref 'HEAD': unable to resolve reference 'refs/heads/main'". A
// branch that is gone is the environment's, as one not checked out is:
// the jobs wait, /healthz says why, and once the branch is there again
// they are committed on it, one commit each.
func TestFaultBranchDeletedUnderTheServer(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	s.post(t, httpapi.PostRequest{Title: "Before the deletion", Content: "Committed.\n"})
	tip := git(t, k, "rev-parse", "HEAD")
	git(t, k, "update-ref", "-d", "refs/heads/main")
	id := s.postAsync(t, "While the branch is gone")
	h := s.waitHealth(t, "no longer exists")
	if !strings.Contains(h.WaitingFor, "main") {
		t.Errorf("health does not name the served branch: %+v", h)
	}
	if j, _ := s.Client.Job(ctx, id); j.Status == "done" || j.Status == "failed" {
		t.Fatalf("a job ended while the branch was gone: %+v", j)
	}
	git(t, k, "update-ref", "refs/heads/main", tip)
	j := s.waitJob(t, id, 30*time.Second)
	if j.Status != "done" {
		t.Fatalf("job: %+v", j)
	}
	jobCommit(t, k, "store", j)
	if parent := git(t, k, "rev-parse", "HEAD^"); parent != tip {
		t.Errorf("the job's commit is on %s, want the branch's tip %s", parent, tip)
	}
	clean(t, k)
	headChecks(t, k)
}

// --push-every against a remote that another clone pushes to every half
// second (eight times): the server's rebase is followed at once by its
// push, tried again while the remote moves, so its jobs reach the remote.
func TestFaultPushAgainstABusyRemote(t *testing.T) {
	const busyPushes = 8
	k := newRepo(t, 0)
	busy := withOrigin(t, k, "busy")
	stop := make(chan struct{})
	var pushes atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A bounded number of pushes: a tick's retries (ten rounds) must
		// outlast them whatever the load, while the remote keeps moving
		// under the first rounds.
		for i := 0; pushes.Load() < busyPushes; i++ {
			select {
			case <-stop:
				return
			default:
			}
			cmd := exec.Command("sh", "-c", fmt.Sprintf(`git pull -q --rebase origin main && echo %d > busy.txt && git add busy.txt && git -c user.name=b -c user.email=b@b commit -qm busy && git push -q origin HEAD:main`, i))
			cmd.Dir = busy
			if cmd.Run() == nil {
				pushes.Add(1)
			}
			time.Sleep(500 * time.Millisecond) // the clone pushed every 0.5 s
		}
	}()
	s := start(t, k, nil)
	jobs := s.postMany(t, 5, "Shared while busy")
	for deadline := time.Now().Add(time.Minute); pushes.Load() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the other clone never pushed")
		}
	}
	// Three ticks at most: a tick retries at once against a remote that
	// moved (before, a tick that lost the race left it to the next, which
	// lost it again).
	for tick := 1; ; tick++ {
		s.Backend.Share(ctx)
		log, _ := gitx.Read(ctx, k.Root, "log", "--format=%s", "refs/remotes/origin/main")
		all := true
		for _, j := range jobs {
			if !strings.Contains(string(log), "("+j.ID+"): ") {
				all = false
			}
		}
		if all {
			break
		}
		if tick == 3 {
			t.Fatalf("the jobs did not reach the busy remote in %d ticks (%d pushes by the other clone)", tick, pushes.Load())
		}
	}
	close(stop)
	<-done

	if gitx.RebaseInProgress(filepath.Join(k.Root, ".git")) {
		t.Error("a rebase was left in progress")
	}
	clean(t, k)
}

// A server that starts on a work tree that is its branch's tip commits
// its first job from the files its transaction generated (the view is
// clean); one that starts beside uncommitted leaves does not, and
// generates the first commit's files from its leaves.
func TestViewIsCleanOnlyWhenTheWorkTreeIsTheTip(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	s.post(t, httpapi.PostRequest{Title: "Committed", Content: "Committed.\n"})
	s.stop()
	s = start(t, k, nil)
	if v := s.Backend.view; v == nil || !v.clean {
		t.Errorf("the view of a clean work tree: %+v", v)
	}
	s.stop()
	in := contracts.NodeInput{Type: "map", Title: "Uncommitted", Description: "d", Body: "b\n", Folder: "inbox"}
	if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "kk node write"}); err != nil {
		t.Fatal(err)
	}
	s = start(t, k, nil)
	if v := s.Backend.view; v == nil || v.clean {
		t.Errorf("the view beside an uncommitted leaf: %+v", v != nil && v.clean)
	}
}

// A post that cannot be queued because the disk is full (ENOSPC, or
// EDQUOT: the user's quota), or because a file would pass kk serve's
// file-size limit (EFBIG), is answered 503 with Retry-After and an
// error saying the disk is full, not 500; nothing of it is left in the
// queue's folder, and once there is room again a post is queued and
// committed. Found by a QA run, which got 500 "failed to enqueue".
func TestFaultFullDiskAtPostIs503(t *testing.T) {
	for _, tc := range []struct {
		errno syscall.Errno
		at    string // the file that finds the disk full
		says  string
	}{{syscall.ENOSPC, ".json", "the disk is full"}, {syscall.EDQUOT, ".body", "disk quota"}, {syscall.EFBIG, ".body", "file-size limit"}} {
		t.Run(tc.errno.Error(), func(t *testing.T) {
			k := newRepo(t, 0)
			var full atomic.Bool
			s := startQueue(t, context.Background(), Options{KB: k}, func(o *jobqueue.Options) {
				o.WriteFault = func(path string) error {
					// The payload lands and its record finds the disk
					// full, or the payload does.
					if full.Load() && strings.HasSuffix(path, tc.at) {
						return tc.errno
					}
					return nil
				}
			})
			queueDir := filepath.Join(k.StateDir(), "queue")
			before := listDir(t, queueDir)
			full.Store(true)
			body := postUnavailable(t, s.URL, `{"title":"Full","content":"On a full disk.\n"}`)
			if !strings.Contains(body.Error, tc.says) || strings.Contains(body.Error, "\n") {
				t.Errorf("error %q: want one line saying %q", body.Error, tc.says)
			}
			if after := listDir(t, queueDir); !slices.Equal(after, before) {
				t.Errorf("the queue's folder was %v before the post, %v after: the refused job left files", before, after)
			}
			full.Store(false)
			j := s.post(t, httpapi.PostRequest{Title: "Room again", Content: "After the disk had room again.\n"})
			if j.Status != "done" {
				t.Fatalf("a post once there is room: %+v", j)
			}
			jobCommit(t, k, "store", j)
			if st := s.Queue.Stats(); st.ByStatus[jobqueue.Done] != 1 || st.Depth != 0 {
				t.Errorf("queue: %+v", st)
			}
		})
	}
}

// listDir lists the names in dir, sorted.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// While a job's commit waits for a lock git reports (the branch's, taken
// by another git process a moment ago), /healthz gives the reason on one
// line, saying what is wrong and what to do, with git's message cut to
// its meaningful line; the server's log keeps git's whole message. Found
// by a QA run: waiting_for held git's seven lines of advice.
func TestFaultHealthReasonIsOneLine(t *testing.T) {
	k := newRepo(t, 0)
	logs := &syncBuffer{}
	s := startOpts(t, context.Background(), Options{KB: k, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	// The branch's lock, as a git command holding it now leaves it (its
	// time ahead, so that the worker does not hold the job before its
	// commit: it is a lock taken a moment ago).
	lock := filepath.Join(k.Root, ".git", "refs", "heads", "main.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ahead := time.Now().Add(time.Hour)
	if err := os.Chtimes(lock, ahead, ahead); err != nil {
		t.Fatal(err)
	}
	id := s.postAsync(t, "Behind a branch lock")
	h := s.waitHealth(t, "main.lock")
	if strings.Contains(h.WaitingFor, "\n") || strings.Contains(h.WaitingFor, "seems to be running") {
		t.Errorf("waiting_for is git's whole message, not one line:\n%s", h.WaitingFor)
	}
	if !strings.Contains(h.WaitingFor, "File exists") || !strings.Contains(h.WaitingFor, "remove") {
		t.Errorf("waiting_for %q does not say what is wrong (the lock exists) and what to do (remove it if no git runs)", h.WaitingFor)
	}
	if !strings.Contains(logs.String(), "seems to be running") {
		t.Errorf("the server's log does not keep git's whole message:\n%s", logs)
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if j := s.waitJob(t, id, 30*time.Second); j.Status != "done" {
		t.Fatalf("the job once the lock went: %+v", j)
	}
	if h := s.health(t); h.Status != "ok" || h.WaitingFor != "" {
		t.Errorf("health after: %+v", h)
	}
}

// postUnavailable posts body to /content at url and checks the answer is
// 503 with Retry-After; it returns the answer's error.
func postUnavailable(t *testing.T, url, body string) (answer struct {
	Error string `json:"error"`
}) {
	t.Helper()
	resp, err := http.Post(url+"/content", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("status %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	return answer
}

// A job waiting, at each stop, for a lock another git process holds (a
// lock a crashed git left, until the person removes it) is resumed by
// each next start, however many: a stop while it waits is not a crash
// during its run. It failed at the third start ("the server stopped during
// each of its 3 runs"), a post lost to a stale lock and three restarts
// (found by killing kk serve's git children, a git update-ref killed
// holding HEAD.lock, under a stream of posts and restarts).
func TestFaultStopsWhileALockIsHeldNeverFailTheJob(t *testing.T) {
	k := newRepo(t, 0)
	lock := filepath.Join(k.Root, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := start(t, k, nil)
	id := s.postAsync(t, "Held across restarts")
	for i := range 5 {
		s.waitHeld(t, id, "index.lock")
		s.stop()
		s = start(t, k, nil)
		t.Logf("start %d", i+2)
	}
	s.waitHeld(t, id, "index.lock")
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	j := s.waitJob(t, id, 30*time.Second)
	if j.Status != "done" {
		t.Fatalf("job after the lock went: %+v", j)
	}
	jobCommit(t, k, "store", j)
	clean(t, k)
}

// waitHeld waits (bounded) until /healthz says the worker waits for
// something containing want, failing at once when job id ends meanwhile.
func (s *server) waitHeld(t *testing.T, id, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if j, err := s.Client.Job(ctx, id); err != nil || j.Status == "failed" || j.Status == "done" {
			t.Fatalf("job %s while the lock is held: %+v (%v)", id, j, err)
		}
		h := s.health(t)
		if h.Status == "waiting" && strings.Contains(h.WaitingFor, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz never said the worker waits for %q: %+v", want, h)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A note whose body holds CRLF line ends (a client that posts them) is
// hashed as the index files take it (CRLF read as LF): after a restart,
// every job made commits whose ENTRY.md and GRAPH.md named another
// nodes_hash than their leaves' (a clone failed kk index rebuild --check)
// and left both files changed in the work tree, since the commit's
// generated files were planned from the committed leaf under the hash of
// its raw bytes.
func TestFaultACRLFNoteKeepsTheCommitsGeneratedFiles(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	j := s.post(t, httpapi.PostRequest{Title: "Windows lines", Content: "First line.\r\nSecond line.\r\n"})
	if j.Status != "done" {
		t.Fatalf("post: %+v", j)
	}
	s.stop()
	s = start(t, k, nil)
	for _, title := range []string{"After a restart", "And another"} {
		j := s.post(t, httpapi.PostRequest{Title: title, Content: "Beside a note with CRLF.\n"})
		if j.Status != "done" {
			t.Fatalf("post: %+v", j)
		}
		jobCommit(t, k, "store", j)
		headChecks(t, k)
		clean(t, k)
	}
}
