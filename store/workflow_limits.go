package store

// WorkflowLimits bound each organization's workflows (API.md 8.1): a list
// of them stays cheap and no tenant fills the database with definitions.
type WorkflowLimits struct {
	// MaxCount is the number of workflows an organization may have; a
	// create beyond it is ECONFLICT.
	MaxCount int
	// MaxDefinitionBytes bounds a definition as stored (the JSON text as
	// sent, without surrounding white space); a larger one is EINVALID
	// (the web layer answers it 422 definition_too_large first).
	MaxDefinitionBytes int
}

// DefaultWorkflowLimits are the limits of a DB until SetWorkflowLimits:
// 1,000 workflows of at most 1 MiB each per organization, far above any
// real use (a workflow of a few dozen nodes is a few KiB).
var DefaultWorkflowLimits = WorkflowLimits{MaxCount: 1000, MaxDefinitionBytes: 1 << 20}

// SetWorkflowLimits replaces the workflow limits; a field that is not
// positive keeps its default.
func (db *DB) SetWorkflowLimits(l WorkflowLimits) {
	if l.MaxCount <= 0 {
		l.MaxCount = DefaultWorkflowLimits.MaxCount
	}
	if l.MaxDefinitionBytes <= 0 {
		l.MaxDefinitionBytes = DefaultWorkflowLimits.MaxDefinitionBytes
	}
	db.workflowLimits.Store(&l)
}

// WorkflowLimits returns the workflow limits in force.
func (db *DB) WorkflowLimits() WorkflowLimits {
	if l := db.workflowLimits.Load(); l != nil {
		return *l
	}
	return DefaultWorkflowLimits
}

// checkDefinitionSize refuses a definition over the limit.
func (db *DB) checkDefinitionSize(definition []byte) error {
	if max := db.WorkflowLimits().MaxDefinitionBytes; len(definition) > max {
		return Errorf(EINVALID, "the workflow definition is %d bytes; at most %d are allowed", len(definition), max)
	}
	return nil
}
