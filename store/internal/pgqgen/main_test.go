package main

import (
	"bytes"
	"os"
	"testing"
)

// TestPGQuerierFresh fails when store/pgquerier.go is not what the
// generator makes of the sqlc packages (run go generate ./store).
func TestPGQuerierFresh(t *testing.T) {
	got, err := genPGQuerier("../..")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../pgquerier.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("store/pgquerier.go is stale: run go generate ./store (after go tool sqlc generate)")
	}
}
