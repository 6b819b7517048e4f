package server

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/store"
)

// freeAddr returns a loopback address no one listens on now: kk serve
// writes its URL only once the setup of a new folder is done, and the
// test must reach /healthz during it.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// health asks addr's /healthz once, with a client that gives up after a
// second (a server that accepts no connection answers nothing).
func health(addr string) (map[string]any, error) {
	c := &http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + addr + "/healthz")
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	var h map[string]any
	err = json.NewDecoder(resp.Body).Decode(&h)
	return h, err
}

// TestSetupThatHangsInGitSaysSoAndEndsWithTheStop: the setup of a new
// folder runs git (git init, git add and git commit of the scaffold), and
// a git command that never ends there (a clean filter of the person's
// global attributes that hangs, a stalled network file system) held kk
// serve's start for ever: /healthz answered nothing (the server did not
// accept a connection yet), and SIGTERM could not stop it (the setup was
// never cut short). Now /healthz says, while the setup runs, that kk
// serve is starting and which git step it waits for; a stop ends the
// hanging git command (after the grace a setup gets) and undoes the
// setup done so far, so that kk serve exits as stopped and the next
// start, git working again, sets the folder up whole.
func TestSetupThatHangsInGitSaysSoAndEndsWithTheStop(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	// Bounded, so that a failing run ends; far past the test's waits.
	stall := filepath.Join(dir, "stall")
	if err := os.WriteFile(stall, []byte("#!/bin/sh\nexec sleep 300\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	attrs := filepath.Join(dir, "attributes")
	if err := os.WriteFile(attrs, []byte("*.md filter=stall\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	global := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(global, []byte("[core]\n\tattributesFile = "+attrs+"\n[filter \"stall\"]\n\tclean = "+stall+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")

	root := filepath.Join(dir, "kb")
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() {
		ran <- Run(ctx, Options{Root: root, Addr: addr, Init: store.InitOptions{Version: "test", Now: time.Now()}, Getenv: func(string) string { return "" }})
	}()
	var h map[string]any
	for i := 0; ; i++ {
		select {
		case err := <-ran:
			t.Fatalf("kk serve ended during the hanging setup: %v", err)
		default:
		}
		var err error
		h, err = health(addr)
		if err == nil && strings.Contains(h["waiting_for"].(string), "git") {
			break
		}
		if i == 60 {
			t.Fatalf("/healthz during the hanging setup: %v %v; want what the setup waits for", h, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if h["status"] != "starting" || !strings.Contains(h["waiting_for"].(string), root) {
		t.Errorf("/healthz %v; want status starting, naming the folder set up", h)
	}
	cancel()
	select {
	case err := <-ran:
		if err != nil {
			t.Errorf("stopped during the hanging setup: %v; want a stop (nil)", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the stop did not end the setup's hanging git command")
	}
	if entries, err := os.ReadDir(root); err != nil || len(entries) != 0 {
		t.Errorf("after the stop the folder holds %v (%v); want the setup undone, the folder empty", entries, err)
	}

	// git works again: the next start sets the folder up whole.
	if err := os.WriteFile(global, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if j, err := serveOnce(t, root); err != nil || j.Status != "done" {
		t.Fatalf("the next start: %+v %v", j, err)
	}
	out, err := exec.Command("git", "-C", root, "log", "--format=%s").Output()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "init: bootstrap knowledge base") || strings.Count(string(out), "init:") != 1 {
		t.Errorf("history %q, %v; want one bootstrap commit, then the job's", out, err)
	}
}
