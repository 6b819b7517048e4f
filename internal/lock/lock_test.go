package lock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAcquireExcludesAndNamesHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".state", "lock")
	l, err := Acquire(context.Background(), path, time.Second, "kk node write")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(context.Background(), path, 50*time.Millisecond, "kk index rebuild")
	var held *HeldError
	if !errors.As(err, &held) {
		t.Fatalf("second acquire: got %v, want HeldError", err)
	}
	if held.Holder == nil || held.Holder.Command != "kk node write" {
		t.Fatalf("holder = %+v", held.Holder)
	}
	if !strings.Contains(err.Error(), "kk node write") || !strings.Contains(err.Error(), "pid") {
		t.Fatalf("message does not name the holder: %s", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := Acquire(context.Background(), path, time.Second, "kk index rebuild")
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	if err := l2.Release(); err != nil {
		t.Fatal(err)
	}
}

func TestAcquireSerialisesGoroutines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	var mu sync.Mutex
	inside, maxInside, total := 0, 0, 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := Acquire(context.Background(), path, 10*time.Second, "test")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			inside++
			total++
			maxInside = max(maxInside, inside)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
			mu.Lock()
			inside--
			mu.Unlock()
			if err := l.Release(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if maxInside != 1 || total != 8 {
		t.Fatalf("max holders at once = %d, total = %d", maxInside, total)
	}
}

func TestAcquireHonoursCancel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	l, err := Acquire(context.Background(), path, time.Second, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := l.Release(); err != nil {
			t.Error(err)
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Acquire(ctx, path, time.Second, "b"); err == nil {
		t.Fatal("acquire with a cancelled context succeeded")
	}
}

// A Set takes its guard then its file; a process holding either one
// keeps another out, and the error names the file it found held and who
// holds it, as recorded in that file.
func TestSetExcludesThroughEitherFile(t *testing.T) {
	dir := t.TempDir()
	s := Set{Guard: filepath.Join(dir, "git", "kenkeep", "lock"), Path: filepath.Join(dir, ".state", "lock")}
	ctx := context.Background()

	l, err := s.Acquire(ctx, time.Second, "kk node write")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{s.Guard, s.Path} {
		if h := ReadHolder(p); h == nil || h.Command != "kk node write" {
			t.Errorf("%s records %+v, want the holder", p, h)
		}
	}
	// git clean deletes .state/ while the lock is held: the guard still
	// keeps the next process out, and the error names it.
	if err := os.RemoveAll(filepath.Dir(s.Path)); err != nil {
		t.Fatal(err)
	}
	_, err = s.Acquire(ctx, 50*time.Millisecond, "kk index rebuild")
	var held *HeldError
	if !errors.As(err, &held) || held.Path != s.Guard || held.Holder == nil || held.Holder.Command != "kk node write" {
		t.Fatalf("acquire with .state/ deleted: %v (%+v), want the guard named held by kk node write", err, held)
	}
	if l2, err := s.TryAcquire("kk (recovery)"); l2 != nil || err != nil {
		t.Fatalf("TryAcquire with the guard held: %v %v", l2, err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}

	// An older kk locks .state/lock alone: a Set waits for it too, and
	// lets the guard go again when it gives up.
	old, err := Acquire(ctx, s.Path, time.Second, "kk serve (older kk)")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Acquire(ctx, 50*time.Millisecond, "kk node write")
	if !errors.As(err, &held) || held.Path != s.Path || held.Holder == nil || held.Holder.Command != "kk serve (older kk)" {
		t.Fatalf("acquire while an older kk holds .state/lock: %v, want that file named", err)
	}
	if l2, err := s.TryAcquire("kk (recovery)"); l2 != nil || err != nil {
		t.Fatalf("TryAcquire while an older kk holds .state/lock: %v %v", l2, err)
	}
	if g, err := Acquire(ctx, s.Guard, 50*time.Millisecond, "probe"); err != nil {
		t.Fatalf("the guard stayed held after the Set gave up: %v", err)
	} else if err := g.Release(); err != nil {
		t.Fatal(err)
	}
	if err := old.Release(); err != nil {
		t.Fatal(err)
	}
	l, err = s.TryAcquire("kk node write")
	if err != nil || l == nil {
		t.Fatalf("TryAcquire of a free Set: %v %v", l, err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}

// Where the guard cannot be made (the git folder read-only, or, here, a
// file where its folder should be) the Set is its file alone, as kk
// locked before guards.
func TestSetWithoutItsGuard(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "git")
	if err := os.WriteFile(blocker, []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Set{Guard: filepath.Join(blocker, "kenkeep", "lock"), Path: filepath.Join(dir, ".state", "lock")}
	l, err := s.Acquire(context.Background(), time.Second, "kk node write")
	if err != nil {
		t.Fatalf("acquire with an impossible guard: %v", err)
	}
	_, err = Acquire(context.Background(), s.Path, 50*time.Millisecond, "kk index rebuild")
	var held *HeldError
	if !errors.As(err, &held) {
		t.Fatalf("the file was not locked: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}

// Goroutines taking one Set, and others taking its file alone (an older
// kk), never hold it at once.
func TestSetSerialisesWithFileAlone(t *testing.T) {
	dir := t.TempDir()
	s := Set{Guard: filepath.Join(dir, "git", "lock"), Path: filepath.Join(dir, "state", "lock")}
	var mu sync.Mutex
	inside, maxInside, total := 0, 0, 0
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var l *Lock
			var err error
			if i%2 == 0 {
				l, err = s.Acquire(context.Background(), 10*time.Second, "new")
			} else {
				l, err = Acquire(context.Background(), s.Path, 10*time.Second, "old")
			}
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			inside++
			total++
			maxInside = max(maxInside, inside)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
			mu.Lock()
			inside--
			mu.Unlock()
			if err := l.Release(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if maxInside != 1 || total != 8 {
		t.Fatalf("max holders at once = %d, total = %d", maxInside, total)
	}
}

// TestHeldByAnother: a lock file another holder has locked is held; one
// free, or missing, is not, and asking creates no file.
func TestHeldByAnother(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serve.lock")
	if held, err := HeldByAnother(path); held || err != nil {
		t.Fatalf("missing file: %v, %v", held, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("asking created the file: %v", err)
	}
	l, err := TryAcquire(path, "test")
	if err != nil || l == nil {
		t.Fatalf("TryAcquire: %v, %v", l, err)
	}
	if held, err := HeldByAnother(path); !held || err != nil {
		t.Fatalf("held file: %v, %v", held, err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if held, err := HeldByAnother(path); held || err != nil {
		t.Fatalf("released file: %v, %v", held, err)
	}
}
