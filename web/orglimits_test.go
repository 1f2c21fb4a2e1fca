package web_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/outdial/outdial/store"
)

const orgLimitsPath = "/api/v1/organizations/limits"

// API.md 19: GET|PUT /api/v1/organizations/limits: null by default,
// 1..100,000 or null, admins only, each organization its own.
func TestOrganizationLimitsEndpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, opKey, err := e.db.CreateOrgAPIKey(context.Background(), e.orgA, "op", store.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	e.addSecret(opKey.Reveal())
	get := func() any {
		r := e.a(http.MethodGet, orgLimitsPath, nil)
		wantStatus(t, r, http.StatusOK)
		return r.Body
	}
	none := map[string]any{"max_concurrent_calls": nil}
	if got := get(); !equalJSON(got, none) {
		t.Errorf("default = %v", got)
	}
	for _, v := range []any{200.0, 1.0, 100000.0, nil} {
		r := e.a(http.MethodPut, orgLimitsPath, map[string]any{"max_concurrent_calls": v})
		wantStatus(t, r, http.StatusOK)
		want := map[string]any{"max_concurrent_calls": v}
		if !equalJSON(r.Body, want) || !equalJSON(get(), want) {
			t.Errorf("after PUT %v: answer %s, GET %v", v, r.Raw, get())
		}
	}
	wantProblems(t, e.a(http.MethodPut, orgLimitsPath, map[string]any{"max_concurrent_calls": 0}), "body.max_concurrent_calls greater_than_equal")
	wantProblems(t, e.a(http.MethodPut, orgLimitsPath, map[string]any{"max_concurrent_calls": 100001}), "body.max_concurrent_calls less_than_equal")
	wantProblems(t, e.a(http.MethodPut, orgLimitsPath, map[string]any{"max_concurrent_calls": "many"}), "body.max_concurrent_calls int_parsing")
	wantProblems(t, e.a(http.MethodPut, orgLimitsPath, map[string]any{}), "body.max_concurrent_calls missing")
	if got := get(); !equalJSON(got, none) {
		t.Errorf("after refused PUTs: %v", got)
	}
	wantStatus(t, e.do(http.MethodGet, orgLimitsPath, opKey.Reveal(), nil), http.StatusOK)
	wantDetail(t, e.do(http.MethodPut, orgLimitsPath, opKey.Reveal(), map[string]any{"max_concurrent_calls": 5}), http.StatusForbidden,
		"role operator cannot change the organization's limits; it needs admin")
	if got := get(); !equalJSON(got, none) {
		t.Errorf("after the operator's refused PUT: %v", got)
	}
	wantStatus(t, e.a(http.MethodPut, orgLimitsPath, map[string]any{"max_concurrent_calls": 7}), http.StatusOK)
	if r := e.b(http.MethodGet, orgLimitsPath, nil); !equalJSON(r.Body, none) {
		t.Errorf("org B = %s", r.Raw)
	}
}
