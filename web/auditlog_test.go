package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/outdial/outdial/store"
)

const auditPath = "/api/v1/audit"

// auditEntries GETs the trail as organization A with query.
func (e *testEnv) auditEntries(query string) []map[string]any {
	e.t.Helper()
	r := e.a(http.MethodGet, auditPath+query, nil)
	wantStatus(e.t, r, http.StatusOK)
	return objects(e.t, r.obj(e.t)["entries"])
}

// byAction returns the entries of action.
func byAction(list []map[string]any, action string) []map[string]any {
	var out []map[string]any
	for _, en := range list {
		if en["action"] == action {
			out = append(out, en)
		}
	}
	return out
}

// changeOf returns entry en's change of field.
func changeOf(t *testing.T, en map[string]any, field string) map[string]any {
	t.Helper()
	ch, _ := en["changes"].(map[string]any)
	c, ok := ch[field].(map[string]any)
	if !ok {
		t.Fatalf("%v: no change of %s in %v", en["action"], field, en["changes"])
	}
	return c
}

// TestAuditTrail: every change through the API, refused ones included, is
// an entry with its actor, action, route, target, changed fields, status
// and address; admins read them oldest first, filtered and in pages, or as
// JSON Lines; nobody edits them.
func TestAuditTrail(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	ctx := context.Background()
	admin, err := ce.db.Authenticate(ctx, ce.keyA)
	if err != nil {
		t.Fatal(err)
	}
	viewer, viewerKey, err := ce.db.CreateOrgAPIKey(ctx, ce.orgA, "watcher", store.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	_, operatorKey, err := ce.db.CreateOrgAPIKey(ctx, ce.orgA, "runner", store.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	ce.addSecret(viewerKey.Reveal(), operatorKey.Reveal())

	s := ce.setup(false)
	wantStatus(t, ce.a(http.MethodPut, "/api/v1/workflow/"+itoa(s.workflowID), map[string]any{"name": "renamed"}), http.StatusOK)
	cid := ce.newCampaign(s, 2)
	started := ce.a(http.MethodPost, campaignOp(cid, "start"), nil)
	wantStatus(t, started, http.StatusOK)
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "pause"), nil), http.StatusOK)
	wantStatus(t, ce.a(http.MethodPut, compliancePath, map[string]any{"calling_hours": map[string]any{"start": "09:00"}}), http.StatusOK)
	wantStatus(t, ce.do(http.MethodPost, "/api/v1/workflow", viewerKey.Reveal(), rawBody(`{"name":"x","workflow_definition":`+campDefinition+`}`)),
		http.StatusForbidden)
	wantStatus(t, ce.a(http.MethodPut, compliancePath, map[string]any{"calling_hours": map[string]any{"start": "25:00"}}), http.StatusUnprocessableEntity)
	r := ce.a(http.MethodPost, apiKeysPath, map[string]any{"name": "new", "role": "viewer"})
	wantStatus(t, r, http.StatusOK)
	ce.addSecret(r.obj(t)["key"].(string))
	newKeyID := id(t, r.obj(t), "id")

	all := ce.auditEntries("?limit=1000")
	var last int64
	for _, en := range all {
		n := id(t, en, "id")
		if n <= last {
			t.Errorf("entries not oldest first: %d after %d", n, last)
		}
		last = n
		if en["address"] != "127.0.0.1" {
			t.Errorf("entry %d address = %v", n, en["address"])
		}
		if m, _ := en["method"].(string); m == http.MethodGet || m == http.MethodHead {
			t.Errorf("entry %d records a %s", n, m)
		}
	}
	wantActions := []string{"telephony_config.create", "phone_number.create", "workflow.create", "workflow.update", "upload.create",
		"campaign.create", "campaign.start", "campaign.pause", "compliance_policy.update", "workflow.create", "compliance_policy.update",
		"api_key.create"}
	var got []string
	for _, en := range all {
		got = append(got, en["action"].(string))
	}
	if strings.Join(got, " ") != strings.Join(wantActions, " ") {
		t.Fatalf("actions = %v, want %v", got, wantActions)
	}

	pause := byAction(all, "campaign.pause")[0]
	wantEntry := map[string]any{"actor": map[string]any{"type": "api_key", "id": float64(admin.APIKeyID), "name": "test a"},
		"method": "POST", "route": "/api/v1/campaign/:campaign_id/pause", "target": map[string]any{"type": "campaign", "id": float64(cid)},
		"status": float64(200)}
	for k, v := range wantEntry {
		if !equalJSON(pause[k], v) {
			t.Errorf("campaign.pause %s = %v, want %v", k, pause[k], v)
		}
	}
	if c := changeOf(t, pause, "state"); c["from"] != started.obj(t)["state"] || c["to"] != "paused" {
		t.Errorf("campaign.pause state change = %v", c)
	}
	if c := changeOf(t, byAction(all, "workflow.update")[0], "name"); c["from"] != "reminder" || c["to"] != "renamed" {
		t.Errorf("workflow.update name change = %v", c)
	}
	created := byAction(all, "campaign.create")[0]
	if id(t, created["target"].(map[string]any), "id") != cid {
		t.Errorf("campaign.create target = %v, want campaign %d", created["target"], cid)
	}
	if c := changeOf(t, created, "name"); c["to"] != "c" || len(c) != 1 {
		t.Errorf("campaign.create name change = %v, want only to", c)
	}
	policy := byAction(all, "compliance_policy.update")
	if c := changeOf(t, policy[0], "calling_hours.start"); c["from"] != "08:00" || c["to"] != "09:00" {
		t.Errorf("compliance_policy.update calling_hours.start = %v", c)
	}
	// A field that was null: its from is there, null (a create's fields
	// have no from at all, as above).
	if c := changeOf(t, policy[0], "updated_at"); c["from"] != nil || c["to"] == nil || len(c) != 2 {
		t.Errorf("compliance_policy.update updated_at = %v, want from null to a time", c)
	}
	if policy[1]["status"] != float64(422) || !equalJSON(policy[1]["changes"], map[string]any{}) {
		t.Errorf("refused policy change: status %v changes %v, want 422 and none", policy[1]["status"], policy[1]["changes"])
	}
	refused := byAction(all, "workflow.create")[1]
	if refused["status"] != float64(403) || !equalJSON(refused["actor"], map[string]any{"type": "api_key", "id": float64(viewer.ID), "name": "watcher"}) ||
		!equalJSON(refused["changes"], map[string]any{}) {
		t.Errorf("refused workflow.create = %v", refused)
	}
	keyEntry := byAction(all, "api_key.create")[0]
	if c := changeOf(t, keyEntry, "key"); c["to"] != "****" {
		t.Errorf("api_key.create key change = %v, want masked", c)
	}
	if c := changeOf(t, keyEntry, "role"); c["to"] != "viewer" {
		t.Errorf("api_key.create role change = %v", c)
	}
	if id(t, keyEntry["target"].(map[string]any), "id") != newKeyID {
		t.Errorf("api_key.create target = %v", keyEntry["target"])
	}

	// One entry by id; another organization's is 404.
	r = ce.a(http.MethodGet, auditPath+"/"+itoa(id(t, pause, "id")), nil)
	wantStatus(t, r, http.StatusOK)
	if !equalJSON(r.Body, pause) {
		t.Errorf("GET entry = %s, want %v", r.Raw, pause)
	}
	wantStatus(t, ce.b(http.MethodGet, auditPath+"/"+itoa(id(t, pause, "id")), nil), http.StatusNotFound)
	if list := objects(t, ce.b(http.MethodGet, auditPath, nil).obj(t)["entries"]); len(list) != 0 {
		t.Errorf("organization B sees %d entries of A", len(list))
	}

	// Filters.
	filters := []struct {
		query string
		want  []string
	}{
		{"?actor=api_key:" + itoa(viewer.ID), []string{"workflow.create"}},
		{"?action=campaign.pause", []string{"campaign.pause"}},
		{"?target_type=campaign", []string{"campaign.create", "campaign.start", "campaign.pause"}},
		{"?target_type=campaign&target_id=" + itoa(cid), []string{"campaign.create", "campaign.start", "campaign.pause"}},
		{"?target_type=workflow&target_id=" + itoa(s.workflowID), []string{"workflow.create", "workflow.update"}},
		{"?actor=user:1", nil},
	}
	for _, f := range filters {
		var got []string
		for _, en := range ce.auditEntries(f.query) {
			got = append(got, en["action"].(string))
		}
		if strings.Join(got, " ") != strings.Join(f.want, " ") {
			t.Errorf("%s: actions %v, want %v", f.query, got, f.want)
		}
	}

	// Pages of 5 give the whole list.
	var paged []map[string]any
	for after := int64(0); ; {
		page := ce.auditEntries("?limit=5&after_id=" + itoa(after))
		if len(page) > 5 {
			t.Fatalf("page of %d entries, limit 5", len(page))
		}
		if len(page) == 0 {
			break
		}
		paged = append(paged, page...)
		after = id(t, page[len(page)-1], "id")
	}
	if !equalJSON(paged, all) {
		t.Errorf("pages differ from the whole list")
	}
	if n := len(ce.auditEntries("")); n != len(all) {
		t.Errorf("default page has %d entries, want all %d", n, len(all))
	}

	for _, q := range []string{"?limit=0", "?limit=1001", "?limit=x"} {
		ps := problems(t, ce.a(http.MethodGet, auditPath+q, nil))
		findProblem(t, ps, "query.limit")
	}
	wantProblems(t, ce.a(http.MethodGet, auditPath+"?actor=robot:1", nil), "query.actor string_pattern_mismatch")
	wantProblems(t, ce.a(http.MethodGet, auditPath+"?actor=user:x", nil), "query.actor string_pattern_mismatch")

	// JSON Lines: the same entries, all of them without a limit.
	for _, q := range []string{"", "?after_id=" + itoa(id(t, all[1], "id")), "?limit=3"} {
		lines := ce.auditNDJSON(q)
		want := all
		switch q {
		case "?limit=3":
			want = all[:3]
		case "":
		default:
			want = all[2:]
		}
		if !equalJSON(lines, want) {
			t.Errorf("JSON Lines %q: %d entries, want %d equal to the list", q, len(lines), len(want))
		}
	}

	// Read only, for admins only.
	for _, p := range []string{auditPath, auditPath + "/" + itoa(id(t, pause, "id"))} {
		for _, m := range []string{http.MethodPut, http.MethodPost, http.MethodPatch, http.MethodDelete} {
			wantDetail(t, ce.a(m, p, map[string]any{}), http.StatusMethodNotAllowed, "Method Not Allowed")
		}
	}
	wantDetail(t, ce.do(http.MethodGet, auditPath, viewerKey.Reveal(), nil), http.StatusForbidden,
		"role viewer cannot read the audit trail; it needs admin")
	wantDetail(t, ce.do(http.MethodGet, auditPath+"/"+itoa(id(t, pause, "id")), operatorKey.Reveal(), nil), http.StatusForbidden,
		"role operator cannot read the audit trail; it needs admin")
	if n := len(ce.auditEntries("?limit=1000")); n != len(all) {
		t.Errorf("reads and 405s added entries: %d, want %d", n, len(all))
	}
}

// auditNDJSON reads the trail as JSON Lines.
func (e *testEnv) auditNDJSON(query string) []map[string]any {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.srv.URL+auditPath+query, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("X-API-Key", e.keyA)
	req.Header.Set("Accept", "application/x-ndjson")
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/x-ndjson" {
		e.t.Fatalf("JSON Lines: status %d, Content-Type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	out := []map[string]any{}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			e.t.Fatalf("JSON Lines: line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}
