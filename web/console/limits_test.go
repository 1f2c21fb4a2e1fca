package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/outdial/outdial/store"
)

// The organization's limit on calls in flight (API.md 19) on the compliance
// page: an admin sets and clears it; a refused value comes back with the
// API's message; a viewer sees it without a form.
func TestComplianceLimitsForm(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	csrf := b.csrf()
	page := b.get("/console/compliance")
	wantStatus(t, "page", page, http.StatusOK)
	if !strings.Contains(page.body, `id="limits-form"`) || !strings.Contains(page.body, `name="max_concurrent_calls" type="number" min="1" max="100000" step="1" value=""`) {
		t.Fatalf("the page lacks the empty limit form")
	}
	limit := func() any {
		return e.keyCall(e.key, http.MethodGet, "/api/v1/organizations/limits", nil, http.StatusOK)["max_concurrent_calls"]
	}

	a := b.postForm("/console/limits", url.Values{"csrf_token": {csrf}, "max_concurrent_calls": {"200"}})
	wantStatus(t, "save", a, http.StatusSeeOther)
	if got := limit(); got != 200.0 {
		t.Fatalf("limit after save = %v, want 200", got)
	}
	after := b.get(a.header.Get("Location"))
	if !strings.Contains(after.body, "limit was saved") || !strings.Contains(after.body, `step="1" value="200"`) {
		t.Errorf("the page after the save lacks the notice or the value")
	}

	refused := b.postForm("/console/limits", url.Values{"csrf_token": {csrf}, "max_concurrent_calls": {"0"}})
	wantStatus(t, "refused", refused, http.StatusUnprocessableEntity)
	if !strings.Contains(refused.body, `id="max_concurrent_calls-error"`) || !strings.Contains(refused.body, `step="1" value="0"`) {
		t.Errorf("the refused form lacks its problem or the value sent")
	}
	if got := limit(); got != 200.0 {
		t.Fatalf("limit after a refused save = %v, want 200 still", got)
	}

	cleared := b.postForm("/console/limits", url.Values{"csrf_token": {csrf}, "max_concurrent_calls": {""}})
	wantStatus(t, "clear", cleared, http.StatusSeeOther)
	if got := limit(); got != nil {
		t.Fatalf("limit after clearing = %v, want none", got)
	}

	v := e.roleBrowser(store.RoleViewer)
	vp := v.get("/console/compliance")
	wantStatus(t, "viewer page", vp, http.StatusOK)
	if strings.Contains(vp.body, `id="limits-form"`) || !strings.Contains(vp.body, `id="limits-value">No limit.`) {
		t.Errorf("a viewer's page shows the limit form or lacks the value")
	}
}
