// Command kk-fakemodel runs kk's fake model server (internal/fakemodel)
// on loopback for the end-to-end tests of the real harness CLIs:
//
//	kk-fakemodel -log requests.jsonl -addr-file addr
//	kk-fakemodel -json '{"folder":"go","title":"T","description":"","type":"map","tags":[]}' -fail 2
//
// It listens on 127.0.0.1 (a free port unless -addr names one), writes
// its base URL (http://127.0.0.1:<port>) to -addr-file once it accepts
// connections, appends one JSON line per request to -log, and runs until
// it is interrupted.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/kk-project/kk/internal/fakemodel"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on")
	logPath := flag.String("log", "", "append one JSON line per request to this file")
	addrFile := flag.String("addr-file", "", "write the base URL to this file once listening")
	reply := flag.String("reply", "", "the answer text (default: "+fakemodel.DefaultReply+")")
	jsonReply := flag.String("json", "", "the answer to requests that ask for JSON (default: an object the harnesses' side requests read)")
	fail := flag.Int("fail", 0, "fail the first N requests with -fail-status (-1: every request), as a provider that is down")
	failStatus := flag.Int("fail-status", http.StatusServiceUnavailable, "the HTTP status of a failed request")
	flag.Parse()
	srv := &fakemodel.Server{}
	if *reply != "" {
		srv.Reply = func([]byte) string { return *reply }
	}
	if *jsonReply != "" {
		srv.JSON = func([]byte) string { return *jsonReply }
	}
	if *fail != 0 {
		srv.Fail = func(n int) int {
			if *fail < 0 || n <= *fail {
				return *failStatus
			}
			return 0
		}
	}
	if err := run(srv, *addr, *logPath, *addrFile); err != nil {
		fmt.Fprintln(os.Stderr, "kk-fakemodel:", err)
		os.Exit(1)
	}
}

func run(srv *fakemodel.Server, addr, logPath, addrFile string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s is not a loopback address", addr)
	}
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		srv.Log = f
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String()
	if addrFile != "" {
		if err := os.WriteFile(addrFile, []byte(url+"\n"), 0o644); err != nil {
			return err
		}
	}
	fmt.Println(url)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hs := &http.Server{Handler: srv}
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	if err := hs.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}
