package console_test

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The compliance page through the real router: the policy and its
// version, a save through the form and its change log entry, problems
// beside their fields with the values kept, CSRF, signed out.

func TestComplianceViewAndSave(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	csrf := b.csrf()
	page := b.get("/console/compliance")
	wantStatus(t, "page", page, http.StatusOK)
	for _, want := range []string{`data-field="version">1<`, `id="hours_enabled" name="hours_enabled" value="true" checked`,
		`id="start" name="start" value="08:00"`, `value="21:00"`, `id="day-6" name="days" value="6" checked`,
		`id="max_attempts" name="max_attempts" type="number" min="1" max="100" step="1" value="3"`, "No change yet"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}

	a := b.postForm("/console/compliance", url.Values{"csrf_token": {csrf}, "hours_enabled": {"true"}, "start": {"09:00"},
		"end": {"24:00"}, "days": {"0", "1", "2", "3", "4"}, "cap_enabled": {"true"}, "max_attempts": {"5"}, "window_hours": {"48"}})
	wantStatus(t, "save", a, http.StatusSeeOther)
	p := e.keyCall(e.key, http.MethodGet, "/api/v1/organizations/compliance", nil, http.StatusOK)
	hours, capd := p["calling_hours"].(map[string]any), p["attempt_cap"].(map[string]any)
	if hours["enabled"] != true || hours["start"] != "09:00" || hours["end"] != "24:00" || len(hours["days"].([]any)) != 5 ||
		capd["enabled"] != true || capd["max_attempts"] != 5.0 || capd["window_hours"] != 48.0 || p["version"] != 2.0 {
		t.Fatalf("policy after save: %v", p)
	}
	after := b.get(a.header.Get("Location"))
	body := html.UnescapeString(after.body)
	for _, want := range []string{"The policy was saved", `data-field="version">2<`, "<code>calling_hours.start</code>: 08:00 → 09:00",
		"<code>calling_hours.days</code>: Mon, Tue, Wed, Thu, Fri, Sat, Sun → Mon, Tue, Wed, Thu, Fri", "<code>attempt_cap.enabled</code>: false → true",
		"API key ", `id="day-5" name="days" value="5">`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page after the save lacks %s", want)
		}
	}

	// Turning both off keeps the other values.
	a = b.postForm("/console/compliance", url.Values{"csrf_token": {csrf}, "start": {"09:00"}, "end": {"24:00"},
		"days": {"0"}, "max_attempts": {"5"}, "window_hours": {"48"}})
	wantStatus(t, "turn off", a, http.StatusSeeOther)
	p = e.keyCall(e.key, http.MethodGet, "/api/v1/organizations/compliance", nil, http.StatusOK)
	if p["calling_hours"].(map[string]any)["enabled"] != false || p["attempt_cap"].(map[string]any)["enabled"] != false {
		t.Errorf("policy after turning off: %v", p)
	}
}

// A policy the API refuses is not saved: the form comes back (422) with
// the values sent and each problem beside its field.
func TestComplianceProblems(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	csrf := b.csrf()
	a := b.postForm("/console/compliance", url.Values{"csrf_token": {csrf}, "hours_enabled": {"true"}, "start": {"22:00"},
		"end": {"21:00"}, "max_attempts": {"0"}, "window_hours": {"lots"}})
	wantStatus(t, "refused", a, http.StatusUnprocessableEntity)
	for _, want := range []string{`id="hours-error">Start must be before end`, `id="days-error"`, `id="max_attempts-error"`,
		`id="window_hours-error"`, `value="22:00"`, `value="lots"`, `id="form-errors"`} {
		if !strings.Contains(a.body, want) {
			t.Errorf("the refused form lacks %s", want)
		}
	}
	if strings.Contains(a.body, `name="days" value="0" checked`) {
		t.Error("a day is checked that was not sent")
	}
	if p := e.keyCall(e.key, http.MethodGet, "/api/v1/organizations/compliance", nil, http.StatusOK); p["version"] != 1.0 {
		t.Errorf("policy changed: %v", p)
	}
}

func TestComplianceCSRFAndSignIn(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	f := url.Values{"hours_enabled": {"true"}, "start": {"09:00"}, "end": {"10:00"}, "days": {"0"}, "max_attempts": {"5"}, "window_hours": {"48"}}
	wantStatus(t, "no token", b.postForm("/console/compliance", f), http.StatusForbidden)
	f.Set("csrf_token", "wrong")
	wantStatus(t, "wrong token", b.postForm("/console/compliance", f), http.StatusForbidden)
	if p := e.keyCall(e.key, http.MethodGet, "/api/v1/organizations/compliance", nil, http.StatusOK); p["version"] != 1.0 {
		t.Errorf("policy changed: %v", p)
	}
	out := e.browser()
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		a := out.do(m, "/console/compliance", nil)
		if a.status != http.StatusSeeOther || a.header.Get("Location") != "/console/sign-in?next=%2Fconsole%2Fcompliance" {
			t.Errorf("signed out %s: %d %q", m, a.status, a.header.Get("Location"))
		}
	}
	if a := out.postForm("/console/compliance", f); a.status != http.StatusForbidden {
		t.Errorf("signed out POST: %d", a.status)
	}
	get, head := b.get("/console/compliance"), b.do(http.MethodHead, "/console/compliance", nil)
	if head.status != http.StatusOK || get.status != http.StatusOK || len(head.raw) != 0 {
		t.Errorf("GET %d, HEAD %d with %d bytes", get.status, head.status, len(head.raw))
	}
}
