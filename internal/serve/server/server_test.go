package server

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/store"
)

// An address kk serve cannot listen on (a port that does not exist, one
// another process listens on) is refused before anything is written: the
// folder to serve is not made, nor its repository, knowledge base or
// first commit. Found by the QA run: kk serve --root NEW --addr
// 127.0.0.1:99999 made NEW, ran git init and kk init and committed
// "init: bootstrap knowledge base", then failed with "listen tcp:
// address 99999: invalid port", naming neither the flag nor the address.
func TestAddressRefusedBeforeAnythingIsWritten(t *testing.T) {
	needGit(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Close() }()
	for _, addr := range []string{"127.0.0.1:99999", busy.Addr().String()} {
		root := filepath.Join(t.TempDir(), "kb")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := Run(ctx, Options{Root: root, Addr: addr, ListenWait: 100 * time.Millisecond, Init: store.InitOptions{Version: "test", Now: time.Now()}, Getenv: func(string) string { return "" }})
		cancel()
		if err == nil || !strings.Contains(err.Error(), addr) {
			t.Errorf("--addr %s: %v; want an error naming the address", addr, err)
		}
		if _, err := os.Lstat(root); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("--addr %s: the folder to serve was made (%v)", addr, err)
		}
	}
}

// A model the environment names that cannot be set up (KK_LLM_PROVIDER
// naming no provider) is refused before a new folder is set up, as an
// address is: found by the QA run, where kk serve made the folder, its
// repository and knowledge base and their first commit, then failed with
// "llm: unknown provider".
func TestModelRefusedBeforeANewFolderIsSetUp(t *testing.T) {
	needGit(t)
	root := filepath.Join(t.TempDir(), "kb")
	env := map[string]string{"KK_LLM_PROVIDER": "bogus"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := Run(ctx, Options{Root: root, Addr: "127.0.0.1:0", Init: store.InitOptions{Version: "test", Now: time.Now()}, Getenv: func(k string) string { return env[k] }})
	if err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("KK_LLM_PROVIDER=bogus: %v; want an error naming it", err)
	}
	if _, err := os.Lstat(root); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the folder to serve was made (%v)", err)
	}
}

// needGit skips a test that drives git when git, an external tool, is not
// installed.
func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
}
