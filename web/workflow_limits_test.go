package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/outdial/outdial/store"
)

// sizedDefinition is a JSON object of exactly n bytes.
func sizedDefinition(n int) string {
	return `{"nodes":[],"pad":"` + strings.Repeat("x", n-len(`{"nodes":[],"pad":""}`)) + `"}`
}

// TestWorkflowDefinitionLimit: a definition of 1 MiB is accepted; one byte
// more is 422 definition_too_large at body.workflow_definition, on create
// and on update, without echoing the definition, and nothing changes.
func TestWorkflowDefinitionLimit(t *testing.T) {
	t.Parallel()
	e, _ := newWorkflowEnv(t)
	const limit = 1 << 20
	at, over := sizedDefinition(limit), sizedDefinition(limit+1)
	if len(at) != limit || len(over) != limit+1 {
		t.Fatalf("sizes %d %d", len(at), len(over))
	}
	// White space around the object is not stored, so it does not count.
	wid := e.createWorkflow(e.keyA, "at the limit", "\n  "+at+"  \n")

	wantTooLarge := func(r response) {
		t.Helper()
		ps := wantProblems(t, r, "body.workflow_definition definition_too_large")
		p := ps[0]
		if p.Input != nil || p.Ctx["max_bytes"] != float64(limit) || p.Ctx["actual_bytes"] != float64(limit+1) ||
			p.Msg != fmt.Sprintf("Value error, the workflow definition is %d bytes; at most %d are allowed", limit+1, limit) {
			t.Errorf("problem = %+v", p)
		}
		if len(r.Raw) > 1000 {
			t.Errorf("the 422 body is %d bytes: the definition was echoed", len(r.Raw))
		}
	}
	wantTooLarge(e.a(http.MethodPost, workflowsPath, wfBody("over", over)))
	wantTooLarge(e.a(http.MethodPut, workflowPath(wid), wfBody("renamed", over)))
	r := e.a(http.MethodGet, workflowPath(wid), nil)
	if got := definitionOf(t, r.Raw); got != at {
		t.Errorf("definition after a refused update: %d bytes, want %d", len(got), len(at))
	}
	if name := r.obj(t)["name"]; name != "at the limit" {
		t.Errorf("name after a refused update = %v", name)
	}
	if n := len(e.a(http.MethodGet, workflowsPath, nil).obj(t)["workflows"].([]any)); n != 1 {
		t.Errorf("workflows = %d, want 1", n)
	}
}

// TestWorkflowCountLimit: an organization has at most --max-workflows
// workflows; the next create is 409 naming the limit, another organization
// is not affected, and a delete frees a place.
func TestWorkflowCountLimit(t *testing.T) {
	t.Parallel()
	e, _ := newWorkflowEnv(t)
	e.db.SetWorkflowLimits(store.WorkflowLimits{MaxCount: 3})
	var ids []int64
	for i := range 3 {
		ids = append(ids, e.createWorkflow(e.keyA, fmt.Sprint("w", i), `{}`))
	}
	wantDetail(t, e.a(http.MethodPost, workflowsPath, wfBody("fourth", `{}`)), http.StatusConflict,
		"this organization has 3 workflows and the limit is 3; delete one to create another")
	e.createWorkflow(e.keyB, "other organization", `{}`)
	wantStatus(t, e.a(http.MethodDelete, workflowPath(ids[0]), nil), http.StatusNoContent)
	e.createWorkflow(e.keyA, "fourth", `{}`)
}
