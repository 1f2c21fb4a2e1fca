package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/outdial/outdial/store"
)

// TestWorkflowLimits: an organization has at most MaxCount workflows (a
// create beyond is ECONFLICT, even when creates race for the last place;
// other organizations are not affected; a delete frees a place), and a
// definition is at most MaxDefinitionBytes, on create and on update.
func TestWorkflowLimits(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	if got := db.WorkflowLimits(); got != store.DefaultWorkflowLimits || got.MaxCount != 1000 || got.MaxDefinitionBytes != 1<<20 {
		t.Fatalf("default limits = %+v", got)
	}
	db.SetWorkflowLimits(store.WorkflowLimits{MaxCount: 5, MaxDefinitionBytes: 64})
	a, b := newOrg(t, db.DB, "a"), newOrg(t, db.DB, "b")

	// Ten creates race for five places.
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = db.CreateWorkflow(ctx, a, fmt.Sprint("w", i), []byte("{}"))
		}()
	}
	wg.Wait()
	created, refused := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			created++
		case store.ErrorCode(err) == store.ECONFLICT && strings.Contains(store.ErrorMessage(err), "has 5 workflows and the limit is 5"):
			refused++
		default:
			t.Errorf("create: %v", err)
		}
	}
	if created != 5 || refused != 5 {
		t.Fatalf("created %d, refused %d; want 5 and 5", created, refused)
	}
	if _, err := db.CreateWorkflow(ctx, b, "other org", []byte("{}")); err != nil {
		t.Fatalf("another organization: %v", err)
	}
	list, err := db.ListWorkflows(ctx, a)
	if err != nil || len(list) != 5 {
		t.Fatalf("list = %d, %v", len(list), err)
	}
	if err := db.DeleteWorkflow(ctx, a, list[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateWorkflow(ctx, a, "after a delete", []byte("{}")); err != nil {
		t.Fatalf("create after a delete: %v", err)
	}

	// Definitions: 64 bytes pass, 65 do not.
	at := []byte(`{"x":"` + strings.Repeat("a", 64-8) + `"}`)
	over := []byte(`{"x":"` + strings.Repeat("a", 65-8) + `"}`)
	if len(at) != 64 || len(over) != 65 {
		t.Fatalf("sizes %d %d", len(at), len(over))
	}
	if _, err := db.CreateWorkflow(ctx, b, "big", over); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("create with 65 bytes = %v, want EINVALID", err)
	}
	w, err := db.CreateWorkflow(ctx, b, "fits", at)
	if err != nil {
		t.Fatalf("create with 64 bytes: %v", err)
	}
	if _, err := db.UpdateWorkflow(ctx, b, w.ID, nil, over); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("update with 65 bytes = %v, want EINVALID", err)
	}
	if got, err := db.GetWorkflow(ctx, b, w.ID); err != nil || string(got.Definition) != string(at) {
		t.Errorf("definition after a refused update = %s, %v", got.Definition, err)
	}

	// Non-positive fields keep their defaults.
	db.SetWorkflowLimits(store.WorkflowLimits{})
	if got := db.WorkflowLimits(); got != store.DefaultWorkflowLimits {
		t.Errorf("limits after SetWorkflowLimits(zero) = %+v, want the defaults", got)
	}
}
