package web_test

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
)

// A workflow is held by draft, running and paused campaigns only: once the
// campaign is cancelled the workflow can go, and the campaign keeps its copy.

func TestDeleteWorkflowUsedByCampaign(t *testing.T) {
	t.Parallel()
	oe := newObjEnv(t, testMaxUpload)
	wid := oe.createWorkflow(oe.keyA, "w", validDefinition)
	oe.createConfig(oe.keyA, "main", true, validConfig("twilio"))
	csv := []byte("phone_number,first_name\n+14155550100,Ada\n")
	p := oe.presign(oe.keyA, "c.csv", len(csv))
	if status, raw := put(t, p.URL, "text/csv", bytes.NewReader(csv)); status != http.StatusOK {
		t.Fatalf("PUT: %d %s", status, raw)
	}
	r := oe.a(http.MethodPost, "/api/v1/campaign", map[string]any{"name": "c", "workflow_id": wid, "source_id": p.Key})
	cid := id(t, r.obj(t), "id")
	wantDetail(t, oe.a(http.MethodDelete, workflowPath(wid), nil), http.StatusConflict,
		fmt.Sprintf("workflow %d is used by 1 draft, running or paused campaign", wid))
	wantDetail(t, oe.b(http.MethodDelete, workflowPath(wid), nil), http.StatusNotFound, fmt.Sprintf("workflow %d not found", wid))
	wantStatus(t, oe.a(http.MethodPost, fmt.Sprintf("/api/v1/campaign/%d/cancel", cid), nil), http.StatusOK)

	wantStatus(t, oe.a(http.MethodDelete, workflowPath(wid), nil), http.StatusNoContent)
	got := oe.a(http.MethodGet, fmt.Sprintf("/api/v1/campaign/%d", cid), nil).obj(t)
	if got["workflow_id"] != float64(wid) || got["workflow_name"] != "w" || got["state"] != "cancelled" {
		t.Fatalf("campaign after its workflow was deleted = %v", got)
	}
}
