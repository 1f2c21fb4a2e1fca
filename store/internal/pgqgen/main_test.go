package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestPGQuerierFresh fails when store/pgquerier*.go are not what the
// generator makes of the sqlc packages (run go generate ./store).
func TestPGQuerierFresh(t *testing.T) {
	files, err := genPGQuerier("../..")
	if err != nil {
		t.Fatal(err)
	}
	have, _ := filepath.Glob("../../pgquerier*.go")
	if len(have) != len(files) {
		t.Fatalf("%d pgquerier files, the generator makes %d: run go generate ./store", len(have), len(files))
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join("../..", name))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("store/%s is stale: run go generate ./store (after go tool sqlc generate)", name)
		}
	}
}
