//go:build unix

package jobqueue

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/nobodytest"
)

// TestUnreadableRecordStaysForTheNextStart: a record kk serve's user
// cannot read (chmod 000: a person's chmod, a file left by a run under
// another user) is not damaged: it is left where it is, with its
// payload, the log names it and says what to do, the other jobs run, and
// once it can be read the next start runs its job. A queue folder that
// cannot be read stops the start with an error naming it and saying what
// to do. Found by the serve red team, round 5 (as the user nobody).
func TestUnreadableRecordStaysForTheNextStart(t *testing.T) {
	if !nobodytest.Unprivileged(t) {
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
	if !nobodytest.Unprivileged(t) {
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

// TestNamedPipeRecordIsSetAside: a named pipe named like a record (whose
// open would wait for a writer for ever, and the start with it) is set
// aside as damaged, and the start goes on.
func TestNamedPipeRecordIsSetAside(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "queue")
	q := open(t, dir, Options{})
	good := enqueue(t, q, "store", "good", "")
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	q, err := Open(dir, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(SetAsideDir(dir), "pipe.json")); err != nil || fi.Mode().Type() != os.ModeNamedPipe {
		t.Errorf("the named pipe named like a record was not set aside: %v\n%s", err, log.String())
	}
	waitFinal(t, q, func(ctx context.Context, w *Work) (string, error) { return "good.md", nil }, good.ID)
	if got, _ := q.Get(good.ID); got.Status != Done {
		t.Errorf("the other job: %+v", got)
	}
}
