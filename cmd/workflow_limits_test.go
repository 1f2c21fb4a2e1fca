package cmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/outdial/outdial/store"
)

// TestWorkflowLimitFlags: serve's --max-workflows and --max-workflow-bytes
// reach the store (defaults 1000 and 1 MiB); values that allow nothing are
// refused at start.
func TestWorkflowLimitFlags(t *testing.T) {
	clearEnv(t)
	dir := filepath.Join(t.TempDir(), "data")
	createKey(t, "--data", dir, "--org", "acme")
	db := openData(t, dir)

	f := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	addWorkflowLimitFlags(f)
	if err := applyWorkflowLimits(f, db); err != nil || db.WorkflowLimits() != store.DefaultWorkflowLimits {
		t.Fatalf("defaults: %v, %+v", err, db.WorkflowLimits())
	}
	if err := f.Parse([]string{"--max-workflows", "7", "--max-workflow-bytes", "4096"}); err != nil {
		t.Fatal(err)
	}
	if err := applyWorkflowLimits(f, db); err != nil {
		t.Fatal(err)
	}
	if got := db.WorkflowLimits(); got.MaxCount != 7 || got.MaxDefinitionBytes != 4096 {
		t.Fatalf("limits = %+v, want 7 and 4096", got)
	}

	for _, args := range [][]string{{"--max-workflows", "0"}, {"--max-workflow-bytes", "1"}} {
		_, _, err := run(t, append([]string{"serve", "--data", dir, "--addr", "127.0.0.1:0"}, args...)...)
		if err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("serve %v: err = %v, want one naming %s", args, err, args[0])
		}
	}
}

// TestAPIKeyNameControlCharacters: apikey create refuses an organization
// or key name holding a control character or a bidirectional override.
func TestAPIKeyNameControlCharacters(t *testing.T) {
	clearEnv(t)
	dir := filepath.Join(t.TempDir(), "data")
	for _, args := range [][]string{{"--org", "ac\x00me"}, {"--org", "acme", "--name", "line\nbreak"}, {"--org", "acme\u202Egro"}} {
		_, _, err := run(t, append([]string{"apikey", "create", "--data", dir}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "control or invisible formatting characters") {
			t.Errorf("apikey create %q: err = %v, want a refusal naming control or invisible formatting characters", args, err)
		}
	}
}
