package cmd

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildBinary builds the outdial binary into a temporary directory, for
// the tests that run it as a subprocess (exported for package cmd_test).
func BuildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "outdial")
	// go test puts its toolchain's bin directory first on PATH.
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
