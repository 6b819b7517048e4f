package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi/httpapitest"
	"github.com/kk-project/kk/internal/serve"
	"github.com/kk-project/kk/internal/store"
)

// TestClientIgnoresAPlantedRemoteServeURL: a serve.url naming a server
// off this machine while no kk serve runs over the repository (a file a
// hostile repository committed with git add -f, or copied with it) is not
// followed: kk client says so, naming the file, and sends nothing there
// (neither the note posted, nor KK_SERVE_TOKEN, nor a search whose
// answers an agent would read). Before, kk client sent every request
// to it.
func TestClientIgnoresAPlantedRemoteServeURL(t *testing.T) {
	root := httpapitest.NewRepo(t)
	state := filepath.Join(root, ".ai", "kenkeep", ".state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, serve.URLFile), []byte("http://kk-planted.invalid:9090\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"KK_SERVE_TOKEN": "a-token-for-my-own-server-only"}
	code, _, errs := runClient(t, "", env, "secret note\n", "post", "--title", "Secret", "--root", root)
	if code == 0 || strings.Contains(errs, "kk-planted.invalid:9090/") || !strings.Contains(errs, "no kk serve runs over this repository") {
		t.Fatalf("kk client post with a planted serve.url: exit %d\n%s", code, errs)
	}
	if !strings.Contains(errs, filepath.Join(".ai", "kenkeep", ".state", serve.URLFile)) {
		t.Errorf("the error does not name the file: %s", errs)
	}

	// A kk serve running over the repository (its lock held) wrote the
	// URL: it is followed, wherever it listens.
	k := store.New(root)
	l, err := k.Locks(serve.LockFile).Acquire(context.Background(), time.Second, "kk serve")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Release() }()
	if code, _, errs := runClient(t, "", nil, "", "tags", "--root", root); code == 0 || !strings.Contains(errs, "kk-planted.invalid") {
		t.Fatalf("kk client tags with a kk serve holding its lock: exit %d\n%s", code, errs)
	}
}
