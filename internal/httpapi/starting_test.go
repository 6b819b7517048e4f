package httpapi

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// startingGet asks url with the Host header host and the bearer token
// (none when ""), and returns the status and the body.
func startingGet(t *testing.T, url, host, token string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%s: %q is not JSON: %v", url, body, err)
	}
	return resp.StatusCode, m
}

// TestServeStartingSaysWhatTheStartWaitsFor: while kk serve starts (past
// the delay given: here none), its
// address answers /healthz with status starting and what it waits for
// (to a caller with the token, and not to a request addressed by
// another name to a server without one: DNS rebinding), every other
// request 503; once stopped, the listener is handed on, still open.
func TestServeStartingSaysWhatTheStartWaitsFor(t *testing.T) {
	for _, token := range []string{"", "a-token-of-sixteen-bytes"} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = ln.Close() }()
		url := "http://" + ln.Addr().String()
		stop := ServeStarting(ln, 0, token, func() string { return "waiting for git init" }, nil)
		code, h := startingGet(t, url+"/healthz", "", token)
		if code != http.StatusOK || h["status"] != "starting" || h["waiting_for"] != "waiting for git init" {
			t.Errorf("token %q: /healthz %d %v", token, code, h)
		}
		if token != "" {
			if _, h := startingGet(t, url+"/healthz", "", ""); h["waiting_for"] != nil {
				t.Errorf("without the token: %v; want no reason", h)
			}
		} else if _, h := startingGet(t, url+"/healthz", "evil.example", ""); h["waiting_for"] != nil {
			t.Errorf("addressed as evil.example: %v; want no reason", h)
		}
		if code, h := startingGet(t, url+"/search?query=x", "", token); code != http.StatusServiceUnavailable || !strings.Contains(h["error"].(string), "starting") {
			t.Errorf("a read while starting: %d %v; want 503", code, h)
		}
		stop()
		// The listener still takes connections, for the API's server.
		done := make(chan error, 1)
		go func() {
			c, err := ln.Accept()
			if err == nil {
				_ = c.Close()
			}
			done <- err
		}()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
		if err := <-done; err != nil {
			t.Errorf("accepting after the start: %v", err)
		}
	}
}
