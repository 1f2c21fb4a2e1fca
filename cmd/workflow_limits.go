package cmd

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/outdial/outdial/store"
)

// addWorkflowLimitFlags registers serve's per-organization workflow limits
// (API.md 8.1, docs/api.md 5).
func addWorkflowLimitFlags(f *pflag.FlagSet) {
	f.Int("max-workflows", store.DefaultWorkflowLimits.MaxCount,
		"workflows an organization may have; a create beyond is 409")
	f.Int("max-workflow-bytes", store.DefaultWorkflowLimits.MaxDefinitionBytes,
		"largest workflow definition accepted, in bytes; a larger one is 422 definition_too_large")
}

// applyWorkflowLimits gives the store the limits of the flags.
func applyWorkflowLimits(f *pflag.FlagSet, db *store.DB) error {
	count, _ := f.GetInt("max-workflows")
	size, _ := f.GetInt("max-workflow-bytes")
	if count < 1 {
		return fmt.Errorf("--max-workflows must be at least 1, not %d", count)
	}
	if size < len("{}") {
		return fmt.Errorf("--max-workflow-bytes must be at least 2 (an empty definition, {}), not %d", size)
	}
	db.SetWorkflowLimits(store.WorkflowLimits{MaxCount: count, MaxDefinitionBytes: size})
	return nil
}
