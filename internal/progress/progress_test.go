package progress

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a fake clock that moves only when told to.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestNoTerminalNoTask(t *testing.T) {
	task := Start(context.Background(), "work", 1000)
	if task != nil {
		t.Fatalf("Start without a Terminal returned %v", task)
	}
	task.Add(5) // a nil task does nothing
	task.Done()
}

func TestTerminal(t *testing.T) {
	const erase = "\r\x1b[K"
	for _, tc := range []struct {
		name  string
		total int
		steps []int           // Add arguments
		ticks []time.Duration // clock advance before each Add
		want  string
	}{
		{
			name: "small work is never drawn", total: 10,
			steps: []int{5, 5}, ticks: []time.Duration{time.Second, time.Second},
			want: "",
		},
		{
			name: "large work is drawn at once, then at most every Interval", total: 400,
			steps: []int{1, 1, 1, 100}, ticks: []time.Duration{0, 10 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond},
			want: erase + "work 1/400 (0%)" + erase + "work 103/400 (25%)" + erase,
		},
		{
			name: "an unknown total is drawn once MinSteps steps are done", total: 0,
			steps: []int{150, 50, 10}, ticks: []time.Duration{0, time.Second, time.Second},
			want: erase + "work 200" + erase + "work 210" + erase,
		},
		{
			name: "steps past the total are not counted", total: 200,
			steps: []int{300}, ticks: []time.Duration{0},
			want: erase + "work 200/200 (100%)" + erase,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			ctx := With(context.Background(), NewTerminal(&buf, c.now))
			task := Start(ctx, "work", tc.total)
			for i, n := range tc.steps {
				c.t = c.t.Add(tc.ticks[i])
				task.Add(n)
			}
			task.Done()
			task.Done() // a second Done erases nothing more
			if got := buf.String(); got != tc.want {
				t.Errorf("drew %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestAddAfterDoneDrawsNothing(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{t: time.Now()}
	task := Start(With(context.Background(), NewTerminal(&buf, c.now)), "work", 1000)
	task.Done()
	task.Add(500)
	if buf.Len() != 0 {
		t.Errorf("drew %q after Done", buf.String())
	}
}

func TestLongLabelFitsTheLine(t *testing.T) {
	got := line(strings.Repeat("é", 200), 5, 10)
	if n := len([]rune(got)); n > maxWidth {
		t.Errorf("line of %d runes: %q", n, got)
	}
	if !strings.HasSuffix(got, "… 5/10 (50%)") {
		t.Errorf("line %q", got)
	}
}

// TestConcurrentAdd counts every step from many goroutines (run with -race).
func TestConcurrentAdd(t *testing.T) {
	var buf bytes.Buffer
	task := Start(With(context.Background(), NewTerminal(&buf, time.Now)), "work", 0)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				task.Add(1)
			}
		}()
	}
	wg.Wait()
	if got := task.done.Load(); got != 800 {
		t.Errorf("counted %d steps, want 800", got)
	}
	task.Done()
	if !strings.HasSuffix(buf.String(), "\r\x1b[K") {
		t.Errorf("the line was not erased: %q", buf.String())
	}
}
