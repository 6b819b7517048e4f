package node

import (
	"strings"
	"testing"
)

func TestSetExtra(t *testing.T) {
	src := "---\ntype: map\ntitle: T\ndescription: d\ntags: []\nkk_schema_version: 3\nkk_id: map-t\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\nkk_a: [x,  y]\nkk_b: 1\n---\nbody\n"
	n, err := Parse("map-t.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.SetExtra("kk_a", []string{"x", "y"}); err != nil { // same value: bytes kept
		t.Fatal(err)
	}
	if err := n.SetExtra("kk_m", []any{map[string]any{"id": "a"}}); err != nil {
		t.Fatal(err)
	}
	if err := n.SetExtra("kk_b", 2); err != nil {
		t.Fatal(err)
	}
	if err := n.DeleteExtra("kk_missing"); err != nil {
		t.Fatal(err)
	}
	out, err := n.Render(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "kk_a: [x,  y]\nkk_b: 2\nkk_m:\n  - id: a\n---\n") {
		t.Fatalf("got:\n%s", out)
	}
	if err := n.DeleteExtra("kk_b"); err != nil {
		t.Fatal(err)
	}
	if v, ok := n.Extra("kk_b"); ok {
		t.Fatalf("kk_b still there: %v", v)
	}
	if err := n.SetExtra(KeyTitle, "x"); err == nil {
		t.Fatal("a modelled key was accepted")
	}
}
