package httpapitest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/jobqueue"
)

// NewRepo makes a git repository with an empty knowledge tree, a README
// without front matter and one commit, and returns its root.
func NewRepo(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	ctx := context.Background()
	if _, err := gitx.Run(ctx, root, "init", "-q", "-b", "main"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(httpapi.TreePrefix)), 0o755); err != nil {
		t.Fatal(err)
	}
	// Ordinary markdown elsewhere in the repository breaks nothing.
	for name, content := range map[string]string{"README.md": "# A project\n", ".gitignore": ".ai/kenkeep/.state/\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := gitx.CommitPaths(ctx, root, Author, "init", []string{"README.md", ".gitignore"}); err != nil {
		t.Fatal(err)
	}
	return root
}

// Service is a server running over a test repository.
type Service struct {
	URL     string
	Root    string
	Backend *GitBackend
	Queue   *jobqueue.Queue
	// Stop shuts the server down (finishing the current job) and waits
	// for it; the test's end does it too.
	Stop func()
}

// Start runs a server over root with b (nil: an offline GitBackend) and
// the job queue under root's .ai/kenkeep/.state/queue, wired to git for
// crash recovery the way kk serve wires it, until the test ends.
func Start(t testing.TB, root string, b *GitBackend, token string) *Service {
	t.Helper()
	if b == nil {
		b = &GitBackend{}
	}
	b.Root = root
	q, err := jobqueue.Open(filepath.Join(root, ".ai", "kenkeep", ".state", "queue"), jobqueue.Options{
		Committed: func(ctx context.Context, id string) (string, bool, error) {
			c, ok, err := gitx.FindJobCommit(ctx, root, id, Author)
			return c.Path, ok, err
		},
		Restore: func(ctx context.Context, j jobqueue.Job) error { return gitx.RestorePaths(ctx, root, j.Touched) },
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := httpapi.New(httpapi.Options{Backend: b, Queue: q, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
	t.Cleanup(stop)
	return &Service{URL: "http://" + ln.Addr().String(), Root: root, Backend: b, Queue: q, Stop: stop}
}
