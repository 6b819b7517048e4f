package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

func TestCaptureWritesAndKeeps(t *testing.T) {
	k := newKB(t)
	ctx := context.Background()
	o := CaptureOptions{SessionID: sid, CapturedBy: CapturedByStop, Transcript: "[USER]: one\n\n[AGENT]: two\n", Now: fixedNow, Command: "test"}
	res, err := Capture(ctx, k, o)
	if err != nil || res.Action != CaptureCreated || res.Status != StatusPending || res.Path != ".ai/kenkeep/_sessions/20260523-1200-"+sid+".md" {
		t.Fatalf("%+v %v", res, err)
	}
	path := filepath.Join(k.Root, res.Path)
	sum := sha256.Sum256([]byte(o.Transcript))
	want := "---\nschema_version: 1\nsession_id: " + sid + "\ncaptured_by: stop\ncaptured_at: '2026-05-23T12:00:00.000Z'\n" +
		"transcript_hash: 'sha256:" + hex.EncodeToString(sum[:]) + "'\nproposal_status: pending\nproposal_completed_at: null\n" +
		"proposal_error: null\nproposal_log: null\nproposals:\n  practice: []\n  map: []\n" +
		"---\n## Transcript\n\n[USER]: one\n\n[AGENT]: two\n\n## Proposal\n\n(populated by proposal worker)\n"
	got := string(mustRead(t, path))
	if got != want {
		t.Fatalf("log:\n%s\nwant:\n%s", got, want)
	}
	l, err := Read(path)
	if err != nil || l.Transcript() != "[USER]: one\n\n[AGENT]: two" {
		t.Fatalf("transcript %q %v", l.Transcript(), err)
	}

	// Same transcript: nothing changes, whatever the clock says.
	o.Now = fixedNow.Add(3600e9)
	if res, err := Capture(ctx, k, o); err != nil || res.Action != CaptureUnchanged {
		t.Fatalf("%+v %v", res, err)
	}
	if string(mustRead(t, path)) != got {
		t.Fatal("an unchanged capture rewrote the log")
	}

	// A log that no longer parses is replaced by the capture.
	if err := os.WriteFile(path, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err := Capture(ctx, k, o); err != nil || res.Action != CaptureUpdated || res.Status != StatusPending {
		t.Fatalf("%+v %v", res, err)
	}
	if _, err := Read(path); err != nil {
		t.Fatal(err)
	}

	// Cursory: skipped, with the reason and the time.
	o.SessionID, o.Cursory = "1d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e7f", true
	res, err = Capture(ctx, k, o)
	if err != nil || res.Status != StatusSkipped {
		t.Fatalf("%+v %v", res, err)
	}
	l, err = Read(filepath.Join(k.Root, res.Path))
	if err != nil || l.ProposalStatus != StatusSkipped || l.ProposalError != CursoryError {
		t.Fatalf("%+v %v", l, err)
	}
}

func TestCaptureRejects(t *testing.T) {
	k := newKB(t)
	for _, o := range []CaptureOptions{
		{SessionID: "", CapturedBy: CapturedByStop, Transcript: "x"},
		{SessionID: "../x", CapturedBy: CapturedByStop, Transcript: "x"},
		{SessionID: ".hidden", CapturedBy: CapturedByStop, Transcript: "x"},
		{SessionID: sid, CapturedBy: CapturedByManual, Transcript: "x"},
		{SessionID: sid, CapturedBy: CapturedByStop, Transcript: " \n"},
	} {
		if _, err := Capture(context.Background(), k, o); err == nil {
			t.Errorf("%+v was accepted", o)
		}
	}
	if _, err := os.Stat(k.SessionsDir()); !os.IsNotExist(err) {
		t.Fatal("a rejected capture created _sessions")
	}
}
