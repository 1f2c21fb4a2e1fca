package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// Workflow is a stored workflow. Definition is the JSON text exactly as the
// client sent it.
type Workflow struct {
	ID             int64
	OrganizationID int64
	Name           string
	Definition     []byte
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func workflowFromRow(r sqlcdb.Workflow) *Workflow {
	return &Workflow{ID: r.ID, OrganizationID: r.OrganizationID, Name: r.Name, Definition: []byte(r.Definition),
		CreatedAt: fromMS(r.CreatedAt), UpdatedAt: fromMS(r.UpdatedAt)}
}

func workflowNameConflict(name string) error {
	return Errorf(ECONFLICT, "a workflow named %q already exists", name)
}

// CreateWorkflow stores a new workflow; a name already used in the
// organization is ECONFLICT, and so is a create beyond WorkflowLimits
// MaxCount; a definition over MaxDefinitionBytes is EINVALID.
func (db *DB) CreateWorkflow(ctx context.Context, orgID int64, name string, definition []byte) (*Workflow, error) {
	if err := db.checkDefinitionSize(definition); err != nil {
		return nil, err
	}
	var out *Workflow
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		taken, err := q.WorkflowNameTaken(ctx, sqlcdb.WorkflowNameTakenParams{OrganizationID: orgID, Name: name, ID: 0})
		if err != nil {
			return fmt.Errorf("check workflow name: %w", err)
		}
		if taken > 0 {
			return workflowNameConflict(name)
		}
		// Counted in the writer's transaction, after the organization's
		// lock: concurrent creates (on any node) cannot both take the last
		// place.
		if err := lockOrganization(ctx, q, orgID); err != nil {
			return err
		}
		n, err := q.CountWorkflows(ctx, orgID)
		if err != nil {
			return fmt.Errorf("count workflows: %w", err)
		}
		if max := int64(db.WorkflowLimits().MaxCount); n >= max {
			return Errorf(ECONFLICT, "this organization has %d workflows and the limit is %d; delete one to create another", n, max)
		}
		now := db.nowMS()
		r, err := q.InsertWorkflow(ctx, sqlcdb.InsertWorkflowParams{OrganizationID: orgID, Name: name,
			Definition: string(definition), CreatedAt: now, UpdatedAt: now})
		if db.eng.isUniqueViolation(err) {
			return workflowNameConflict(name)
		}
		if err != nil {
			return fmt.Errorf("insert workflow: %w", err)
		}
		out = workflowFromRow(r)
		return nil
	})
	return out, err
}

// GetWorkflow returns workflow id of organization orgID, or ENOTFOUND.
func (db *DB) GetWorkflow(ctx context.Context, orgID, id int64) (*Workflow, error) {
	r, err := db.rq.GetWorkflow(ctx, sqlcdb.GetWorkflowParams{ID: id, OrganizationID: orgID})
	if err != nil {
		return nil, notFound(err, "workflow", id)
	}
	return workflowFromRow(r), nil
}

// ListWorkflows returns the organization's workflows ordered by id, without
// their definitions.
func (db *DB) ListWorkflows(ctx context.Context, orgID int64) ([]Workflow, error) {
	rows, err := db.rq.ListWorkflows(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("list workflows: %w", err)
	}
	out := make([]Workflow, len(rows))
	for i, r := range rows {
		out[i] = Workflow{ID: r.ID, OrganizationID: orgID, Name: r.Name, CreatedAt: fromMS(r.CreatedAt), UpdatedAt: fromMS(r.UpdatedAt)}
	}
	return out, nil
}

// UpdateWorkflow changes the name (when name is not nil) and the definition
// (when definition is not nil) of workflow id. A name used by another
// workflow of the organization is ECONFLICT; a definition over
// WorkflowLimits MaxDefinitionBytes is EINVALID.
func (db *DB) UpdateWorkflow(ctx context.Context, orgID, id int64, name *string, definition []byte) (*Workflow, error) {
	if definition != nil {
		if err := db.checkDefinitionSize(definition); err != nil {
			return nil, err
		}
	}
	var out *Workflow
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		if _, err := q.GetWorkflow(ctx, sqlcdb.GetWorkflowParams{ID: id, OrganizationID: orgID}); err != nil {
			return notFound(err, "workflow", id)
		}
		if name != nil {
			taken, err := q.WorkflowNameTaken(ctx, sqlcdb.WorkflowNameTakenParams{OrganizationID: orgID, Name: *name, ID: id})
			if err != nil {
				return fmt.Errorf("check workflow name: %w", err)
			}
			if taken > 0 {
				return workflowNameConflict(*name)
			}
		}
		// Only what this update changes is written: a rename wrote back the
		// definition it had read, and so undid a definition change another
		// node committed meanwhile (TestRaceWorkflowUpdate). A name taken
		// meanwhile is the unique constraint's.
		r, err := q.UpdateWorkflow(ctx, sqlcdb.UpdateWorkflowParams{Name: toNullString(name),
			Definition: sql.NullString{String: string(definition), Valid: definition != nil},
			UpdatedAt:  db.nowMS(), ID: id, OrganizationID: orgID})
		if name != nil && db.eng.isUniqueViolation(err) {
			return workflowNameConflict(*name)
		}
		if errNoRows(err) {
			return notFound(err, "workflow", id)
		}
		if err != nil {
			return fmt.Errorf("update workflow: %w", err)
		}
		out = workflowFromRow(r)
		return nil
	})
	return out, err
}

// DeleteWorkflow deletes workflow id of organization orgID: ENOTFOUND when
// there is none, ECONFLICT while a draft, running or paused campaign uses it
// (API.md 5). Finished campaigns keep their own copy of the workflow's name
// and definition, so they do not hold it.
func (db *DB) DeleteWorkflow(ctx context.Context, orgID, id int64) error {
	return db.inTx(ctx, func(q sqlcdb.Querier) error {
		if _, err := q.GetWorkflow(ctx, sqlcdb.GetWorkflowParams{ID: id, OrganizationID: orgID}); err != nil {
			return notFound(err, "workflow", id)
		}
		n, err := q.CountUnfinishedCampaignsForWorkflow(ctx, id)
		if err != nil {
			return fmt.Errorf("count campaigns of workflow: %w", err)
		}
		if n > 0 {
			return Errorf(ECONFLICT, "workflow %d is used by %d draft, running or paused %s", id, n, pluralize(n, "campaign"))
		}
		deleted, err := q.DeleteWorkflow(ctx, sqlcdb.DeleteWorkflowParams{ID: id, OrganizationID: orgID})
		if err != nil {
			return fmt.Errorf("delete workflow: %w", err)
		}
		if deleted == 0 {
			return Errorf(ENOTFOUND, "workflow %d not found", id)
		}
		return nil
	})
}

// pluralize returns word with an "s" unless n is 1.
func pluralize(n int64, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
