package lock

import (
	"context"
	"errors"
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
