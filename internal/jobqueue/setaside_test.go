package jobqueue

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a log's output, safe for the worker's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDamagedRecordIsSetAside: a damaged file of the queue's folder (a
// record cut short by a crash or a full disk, garbage, a record of
// another job's name, a folder named like one) no longer stops Open, so
// no longer kk serve's start: it is moved, byte for byte, with the job's
// payload, into the folder beside the queue's (SetAsideDir), the log
// names it, says what is wrong with it and what to do, and the other jobs
// load and run. A record named after a job id leaves that job answerable:
// recovery looks for its commit (done when there is one) and otherwise
// puts its files back and fails it, saying where its payload went; never
// 404. Found by the serve red team, round 5: a truncated job record made
// kk serve refuse to start ("job record … is damaged …; move it out of …
// to start").
func TestDamagedRecordIsSetAside(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "queue")
	q := open(t, dir, Options{})
	done := enqueue(t, q, "store", "done", "")
	waitFinal(t, q, func(ctx context.Context, w *Work) (string, error) { return "done.md", nil }, done.ID)
	good := enqueue(t, q, "store", "good", "")
	cut := enqueue(t, q, "store", "cut short", "")
	committed := enqueue(t, q, "store", "committed", "")
	recordOf := func(id string) []byte {
		data, err := os.ReadFile(filepath.Join(dir, id+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	damaged := map[string][]byte{
		cut.ID + ".json":       recordOf(cut.ID)[:20],      // cut short
		committed.ID + ".json": []byte("\x00\x00\x00\x00"), // a full disk's hole
		"garbage.json":         []byte("garbage{"),
		"empty.json":           []byte("{}"),
		"other.json":           []byte(`{"id":"another","status":"queued"}`),
	}
	for name, data := range damaged {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "adir.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	var restored []string
	var mu sync.Mutex
	opts := Options{
		Logger: logger,
		Committed: func(_ context.Context, id string) (string, bool, error) {
			return "committed.md", id == committed.ID, nil
		},
		Restore: func(_ context.Context, j Job) error {
			mu.Lock()
			defer mu.Unlock()
			restored = append(restored, j.ID)
			return nil
		},
	}
	if _, err := Open(dir, opts); err != nil {
		t.Fatalf("a damaged record stopped the start: %v", err)
	}
	aside := SetAsideDir(dir)
	// Killed before its worker resolved the jobs set aside: the next
	// start still knows them.
	var again syncBuffer
	q, err := Open(dir, Options{Logger: slog.New(slog.NewTextHandler(&again, nil)), Committed: opts.Committed, Restore: opts.Restore})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{cut.ID, committed.ID} {
		if got, ok := q.Get(id); !ok || got.SetAside == "" {
			t.Errorf("the start after a kill does not know the job %s set aside: %+v", id, got)
		}
	}
	if strings.Contains(again.String(), "damaged") {
		t.Errorf("the start after a kill set aside again:\n%s", again.String())
	}
	if aside != filepath.Join(filepath.Dir(dir), "queue.damaged") {
		t.Errorf("set aside in %s", aside)
	}
	for name, data := range damaged {
		// Gone from the queue's folder, but for the new record of a job
		// named by it.
		if now, err := os.ReadFile(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) && (err != nil || bytes.Equal(now, data) || !bytes.Contains(now, []byte(`"set_aside"`))) {
			t.Errorf("%s is still in the queue's folder: %q, %v", name, now, err)
		}
		kept, err := os.ReadFile(filepath.Join(aside, name))
		if err != nil || !bytes.Equal(kept, data) {
			t.Errorf("%s was not kept as it was: %q, %v", name, kept, err)
		}
		if !strings.Contains(log.String(), name) {
			t.Errorf("the log does not name %s:\n%s", name, log.String())
		}
	}
	if fi, err := os.Stat(filepath.Join(aside, "adir.json")); err != nil || !fi.IsDir() {
		t.Errorf("the folder named like a record was not set aside: %v", err)
	}
	for _, id := range []string{cut.ID, committed.ID} {
		if data, err := os.ReadFile(filepath.Join(aside, id+".body")); err != nil || len(data) == 0 {
			t.Errorf("the payload of %s was not set aside with its record: %v", id, err)
		}
	}
	for _, want := range []string{"unexpected end of JSON input", `it names the job "another"`, "is a directory", "damaged", aside} {
		if !strings.Contains(unquoted(log.String()), want) {
			t.Errorf("the log does not say %q:\n%s", want, log.String())
		}
	}
	if strings.Contains(log.String(), "<nil>") {
		t.Errorf("the log says <nil>:\n%s", log.String())
	}
	if got, _ := q.Get(done.ID); got.Status != Done {
		t.Errorf("the job done before: %+v", got)
	}
	waitFinal(t, q, func(ctx context.Context, w *Work) (string, error) {
		return string(w.Payload) + ".md", nil
	}, good.ID, cut.ID, committed.ID)
	if got, _ := q.Get(good.ID); got.Status != Done || got.Path != "good.md" {
		t.Errorf("the intact job did not run: %+v", got)
	}
	if got, _ := q.Get(committed.ID); got.Status != Done || got.Path != "committed.md" {
		t.Errorf("the damaged job whose commit exists: %+v", got)
	}
	got, _ := q.Get(cut.ID)
	if got.Status != Failed || !strings.Contains(got.Error, aside) || !strings.Contains(got.Error, "post") {
		t.Errorf("the damaged job whose commit does not exist: %+v", got)
	}
	mu.Lock()
	if len(restored) != 1 || restored[0] != cut.ID {
		t.Errorf("restored %v; want the files of %s put back", restored, cut.ID)
	}
	mu.Unlock()
	// The next start finds the two ends recorded, and nothing to set aside.
	var log2 syncBuffer
	q = open(t, dir, Options{Logger: slog.New(slog.NewTextHandler(&log2, nil))})
	if got, _ := q.Get(cut.ID); got.Status != Failed {
		t.Errorf("after the next start: %+v", got)
	}
	if got, _ := q.Get(committed.ID); got.Status != Done {
		t.Errorf("after the next start: %+v", got)
	}
	if strings.Contains(log2.String(), "damaged") {
		t.Errorf("the next start warned again:\n%s", log2.String())
	}
}

// TestDamagedRecordThatCannotBeSetAside: when the damaged record cannot
// be moved (the folder beside the queue's cannot be made: a file holds
// its name), the start still goes on, without that record, and the log
// says so, naming it; the next start tries again.
func TestDamagedRecordThatCannotBeSetAside(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "queue")
	q := open(t, dir, Options{})
	good := enqueue(t, q, "store", "good", "")
	bad := enqueue(t, q, "store", "bad", "")
	if err := os.WriteFile(filepath.Join(dir, bad.ID+".json"), []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(SetAsideDir(dir), []byte("in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	q, err := Open(dir, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatalf("a damaged record stopped the start: %v", err)
	}
	for _, name := range []string{bad.ID + ".json", bad.ID + ".body"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s, of the record that could not be moved, is gone: %v", name, err)
		}
	}
	if !strings.Contains(log.String(), bad.ID+".json") || !strings.Contains(log.String(), "could not be set aside") {
		t.Errorf("the log does not say it:\n%s", log.String())
	}
	waitFinal(t, q, func(ctx context.Context, w *Work) (string, error) { return "good.md", nil }, good.ID)
	if got, _ := q.Get(good.ID); got.Status != Done {
		t.Errorf("the intact job: %+v", got)
	}
}

// unquoted is a text log with its quotes inside values unescaped.
func unquoted(log string) string { return strings.ReplaceAll(log, `\"`, `"`) }

// unprivileged reports whether the test may go on in this process: not
// as root, who reads a file whatever its mode. As root, it runs the test
// again in a process of its own as the user nobody (a copy of the test
// binary, which nobody may run) and reports false: that process ran the
// test. (As internal/index's tests do.)
func unprivileged(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return true
	}
	dir, err := os.MkdirTemp("", "kk-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	bin := filepath.Join(dir, "test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+os.TempDir(), "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s as the user nobody: %v\n%s", t.Name(), err, out)
	}
	return false
}

// TestUnreadableRecordStaysForTheNextStart: a record kk serve's user
// cannot read (chmod 000: a person's chmod, a file left by a run under
// another user) is not damaged: it is left where it is, with its
// payload, the log names it and says what to do, the other jobs run, and
// once it can be read the next start runs its job. A queue folder that
// cannot be read stops the start with an error naming it and saying what
// to do. Found by the serve red team, round 5 (as the user nobody).
func TestUnreadableRecordStaysForTheNextStart(t *testing.T) {
	if !unprivileged(t) {
		return
	}
	dir := filepath.Join(t.TempDir(), "queue")
	q := open(t, dir, Options{})
	locked := enqueue(t, q, "store", "locked", "")
	other := enqueue(t, q, "store", "other", "")
	record := filepath.Join(dir, locked.ID+".json")
	if err := os.Chmod(record, 0); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	q, err := Open(dir, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatalf("an unreadable record stopped the start: %v", err)
	}
	for _, name := range []string{locked.ID + ".json", locked.ID + ".body"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s of the unreadable record was moved or removed: %v", name, err)
		}
	}
	if got := log.String(); !strings.Contains(got, record) || !strings.Contains(got, "permission denied") || !strings.Contains(got, "readable") {
		t.Errorf("the log does not name the unreadable record and what to do:\n%s", got)
	}
	waitFinal(t, q, func(ctx context.Context, w *Work) (string, error) { return string(w.Payload) + ".md", nil }, other.ID)
	if got, _ := q.Get(other.ID); got.Status != Done {
		t.Errorf("the other job: %+v", got)
	}
	if err := os.Chmod(record, 0o644); err != nil {
		t.Fatal(err)
	}
	q = open(t, dir, Options{})
	waitFinal(t, q, func(ctx context.Context, w *Work) (string, error) { return string(w.Payload) + ".md", nil }, locked.ID)
	if got, _ := q.Get(locked.ID); got.Status != Done || got.Path != "locked.md" {
		t.Errorf("the job once its record can be read: %+v", got)
	}
	if err := os.Chmod(dir, 0); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.Chmod(dir, 0o755) }()
	_, err = Open(dir, Options{})
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "readable") {
		t.Errorf("an unreadable queue folder: %v; want an error naming it and what to do", err)
	}
}

// TestUnreadablePayloadIsWaitedOut: a job whose payload kk serve's user
// cannot read (chmod 000) is the environment's, as a record that cannot
// be written is: the job stays queued, Stats().Waiting names the file
// and what to do, and once it can be read the job runs. It failed for
// good before ("reading the job's payload: … permission denied"). Found
// by the serve red team, round 5 (as the user nobody).
func TestUnreadablePayloadIsWaitedOut(t *testing.T) {
	if !unprivileged(t) {
		return
	}
	dir := filepath.Join(t.TempDir(), "queue")
	q := open(t, dir, Options{})
	a := enqueue(t, q, "store", "a", "")
	body := filepath.Join(dir, a.ID+".body")
	if err := os.Chmod(body, 0); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- q.Run(ctx, func(ctx context.Context, w *Work) (string, error) { return string(w.Payload) + ".md", nil })
	}()
	for {
		if got, _ := q.Get(a.ID); got.Status.Final() {
			t.Fatalf("the job ended while its payload could not be read: %+v", got)
		}
		if w := q.Stats().Waiting; strings.Contains(w, body) && strings.Contains(w, "readable") {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := os.Chmod(body, 0o644); err != nil {
		t.Fatal(err)
	}
	for {
		if got, _ := q.Get(a.ID); got.Status.Final() {
			if got.Status != Done || got.Path != "a.md" {
				t.Errorf("the job once its payload could be read: %+v", got)
			}
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
