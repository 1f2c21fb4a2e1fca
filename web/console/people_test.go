package console_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/outdial/outdial/store"
)

// The admins' pages through the real router: users (invite with the
// one-time link, role, disable and enable, delete after a confirmation,
// the two-factor toggle), API keys (created and shown once, revoked) and
// the audit trail (filters, changes as from → to, pages, the JSON Lines
// export).

// users returns the organization's users by email, as the API lists them.
func (e *env) users() map[string]map[string]any {
	e.t.Helper()
	out := map[string]map[string]any{}
	for _, u := range e.keyCall(e.key, http.MethodGet, "/api/v1/users", nil, http.StatusOK)["users"].([]any) {
		m := u.(map[string]any)
		out[m["email"].(string)] = m
	}
	return out
}

var setPasswordLink = regexp.MustCompile(`data-field="set_password_url">([^<]+)</code>`)

func TestUsersPage(t *testing.T) {
	e := newEnv(t)
	b := e.roleBrowser(store.RoleAdmin)
	csrf := b.csrf()

	page := b.get("/console/users")
	wantStatus(t, "users", page, http.StatusOK)
	wantIn(t, page.body, `id="invite-form"`, `id="security-form"`, "Require two-factor authentication", `aria-current="page">Users`)

	a := b.postForm("/console/users", form(csrf, "email", "ana@example.com", "role", "operator"))
	wantStatus(t, "invite", a, http.StatusOK)
	m := setPasswordLink.FindStringSubmatch(a.body)
	if m == nil || !strings.Contains(html.UnescapeString(m[1]), "/console/set-password?token=") {
		t.Fatalf("the invite shows no set-password link: %s", a.body)
	}
	wantIn(t, a.body, `data-copy="set-password-url"`, "ana@example.com was invited as operator")
	ana := e.users()["ana@example.com"]
	if ana == nil || ana["role"] != "operator" || ana["disabled"] != false {
		t.Fatalf("the invited user: %v", ana)
	}
	if again := b.get("/console/users"); setPasswordLink.MatchString(again.body) {
		t.Error("the set-password link is shown again")
	}

	// A used email and a bad one are shown at the form, as typed.
	dup := b.postForm("/console/users", form(csrf, "email", "ana@example.com", "role", "viewer"))
	wantStatus(t, "invite again", dup, http.StatusConflict)
	wantIn(t, dup.body, `value="ana@example.com"`, `role="alert"`)
	bad := b.postForm("/console/users", form(csrf, "email", "nope", "role", "viewer"))
	wantStatus(t, "bad email", bad, http.StatusUnprocessableEntity)
	wantIn(t, bad.body, `id="email-error"`)

	id := int64(ana["id"].(float64))
	path := fmt.Sprintf("/console/users/%d", id)
	wantStatus(t, "role", b.postForm(path, form(csrf, "role", "viewer")), http.StatusSeeOther)
	if got := e.users()["ana@example.com"]["role"]; got != "viewer" {
		t.Errorf("role after the change = %v", got)
	}
	disabled := b.postForm(path, form(csrf, "disabled", "true"))
	wantStatus(t, "disable", disabled, http.StatusSeeOther)
	if got := e.users()["ana@example.com"]["disabled"]; got != true {
		t.Errorf("disabled = %v", got)
	}
	listed := b.get(disabled.header.Get("Location"))
	wantIn(t, listed.body, "Disabled", `aria-label="Enable ana@example.com"`, "The user was changed.")
	wantStatus(t, "enable", b.postForm(path, form(csrf, "disabled", "false")), http.StatusSeeOther)
	if got := e.users()["ana@example.com"]["disabled"]; got != false {
		t.Errorf("disabled after enable = %v", got)
	}

	confirm := b.get(path + "/delete")
	wantStatus(t, "delete confirm", confirm, http.StatusOK)
	wantIn(t, confirm.body, "Delete ana@example.com?", fmt.Sprintf(`action="/console/users/%d/delete"`, id))
	wantStatus(t, "delete", b.postForm(path+"/delete", form(csrf)), http.StatusSeeOther)
	if e.users()["ana@example.com"] != nil {
		t.Error("the user was not deleted")
	}
	wantStatus(t, "delete confirm of a deleted user", b.get(path+"/delete"), http.StatusNotFound)

	// The organization's second-factor toggle.
	wantStatus(t, "require totp", b.postForm("/console/users/security", form(csrf, "require_totp", "true")), http.StatusSeeOther)
	if got := e.keyCall(e.key, http.MethodGet, "/api/v1/organizations/security", nil, http.StatusOK)["require_totp"]; got != true {
		t.Errorf("require_totp = %v", got)
	}
	wantIn(t, b.get("/console/users").body, `name="require_totp" value="true" checked`)
	wantStatus(t, "optional totp", b.postForm("/console/users/security", form(csrf)), http.StatusSeeOther)
	if got := e.keyCall(e.key, http.MethodGet, "/api/v1/organizations/security", nil, http.StatusOK)["require_totp"]; got != false {
		t.Errorf("require_totp after unchecking = %v", got)
	}

	// An operator is refused by the API, through the console too.
	op := e.roleBrowser(store.RoleOperator)
	wantStatus(t, "operator invite", op.postForm("/console/users", form(op.csrf(), "email", "eve@example.com", "role", "admin")),
		http.StatusForbidden)
	if e.users()["eve@example.com"] != nil {
		t.Error("an operator's invite created a user")
	}
}

var newKey = regexp.MustCompile(`data-field="key">([^<]+)</code>`)

func TestAPIKeysPage(t *testing.T) {
	e := newEnv(t)
	b := e.roleBrowser(store.RoleAdmin)
	csrf := b.csrf()
	wantIn(t, b.get("/console/api-keys").body, `id="create-key-form"`, "admin key", "this session")

	a := b.postForm("/console/api-keys", form(csrf, "name", "reporting <bot>", "role", "viewer"))
	wantStatus(t, "create", a, http.StatusOK)
	m := newKey.FindStringSubmatch(a.body)
	if m == nil {
		t.Fatalf("the new key is not shown: %s", a.body)
	}
	key := m[1]
	wantIn(t, a.body, "reporting &lt;bot&gt;", `data-copy="new-key"`)
	// The key works, with its role, and is never shown again.
	e.keyCall(key, http.MethodGet, "/api/v1/campaign", nil, http.StatusOK)
	e.keyCall(key, http.MethodPost, "/api/v1/suppressions", map[string]any{"numbers": []string{"+14155550100"}}, http.StatusForbidden)
	list := b.get("/console/api-keys")
	if strings.Contains(list.body, key) {
		t.Error("the list shows the whole key")
	}
	wantIn(t, list.body, key[:8])

	wantStatus(t, "no name", b.postForm("/console/api-keys", form(csrf, "name", "", "role", "viewer")), http.StatusUnprocessableEntity)

	var id int64
	for _, k := range e.keyCall(e.key, http.MethodGet, "/api/v1/api-keys", nil, http.StatusOK)["api_keys"].([]any) {
		if k.(map[string]any)["name"] == "reporting <bot>" {
			id = int64(k.(map[string]any)["id"].(float64))
		}
	}
	path := fmt.Sprintf("/console/api-keys/%d/revoke", id)
	wantIn(t, b.get(path).body, "Revoke the key reporting &lt;bot&gt;", fmt.Sprintf(`action="%s"`, path))
	wantStatus(t, "revoke", b.postForm(path, form(csrf)), http.StatusSeeOther)
	e.keyCall(key, http.MethodGet, "/api/v1/campaign", nil, http.StatusUnauthorized)
	wantStatus(t, "revoke confirm of a revoked key", b.get(path), http.StatusNotFound)
}

var auditRow = regexp.MustCompile(`(?s)<tr data-audit-id="\d+".*?</tr>`)

func TestAuditPage(t *testing.T) {
	e := newEnv(t)
	admin := e.roleBrowser(store.RoleAdmin)
	op := e.browser()
	_, opKey, err := e.db.CreateAPIKey(context.Background(), "acme", "night shift", store.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	op.signIn(opKey.Reveal())
	cfg := e.twilioConfig(e.key, "main line") // the campaigns' configuration 1
	e.keyCall(e.key, http.MethodPost, fmt.Sprintf("/api/v1/organizations/telephony-configs/%d/phone-numbers", cfg),
		map[string]any{"address": "+14155550100"}, http.StatusOK)
	id := e.campaign(e.p.OrganizationID, "Spring", 2)
	other := e.campaign(e.p.OrganizationID, "Autumn", 2)
	csrf := op.csrf()
	for _, c := range []int64{id, other} {
		wantStatus(t, "start", op.postForm(fmt.Sprintf("/console/campaigns/%d/start", c), form(csrf)), http.StatusSeeOther)
	}
	wantStatus(t, "pause", op.postForm(fmt.Sprintf("/console/campaigns/%d/pause", id), form(csrf)), http.StatusSeeOther)

	all := admin.get("/console/audit")
	wantStatus(t, "audit", all, http.StatusOK)
	if n := len(auditRow.FindAllString(all.body, -1)); n != 5 { // with the configuration and number
		t.Errorf("%d entries, want 5", n)
	}
	wantIn(t, all.body, `href="/console/audit/export" download`, `>API key night shift</option>`)

	// Who paused campaign id?
	who := admin.get(fmt.Sprintf("/console/audit?target_type=campaign&target_id=%d&action=campaign.pause", id))
	wantStatus(t, "filtered", who, http.StatusOK)
	rows := auditRow.FindAllString(who.body, -1)
	if len(rows) != 1 {
		t.Fatalf("%d entries for the pause, want 1: %s", len(rows), who.body)
	}
	wantIn(t, rows[0], "night shift", "<code>campaign.pause</code>", fmt.Sprintf("target_id=%d", id),
		`<strong>state</strong>: <span class="from">running</span> → <span class="to">paused</span>`)
	wantIn(t, who.body, `value="campaign.pause"`, fmt.Sprintf(`id="target_id" name="target_id" type="number" min="1" step="1" value="%d"`, id))

	bad := admin.get("/console/audit?target_id=x")
	wantStatus(t, "bad filter", bad, http.StatusUnprocessableEntity)
	wantIn(t, bad.body, `id="filter-error"`)

	// The export streams the filtered entries as JSON Lines.
	exp := admin.get(fmt.Sprintf("/console/audit/export?target_type=campaign&target_id=%d", id))
	wantStatus(t, "export", exp, http.StatusOK)
	if ct := exp.header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("export Content-Type = %q", ct)
	}
	if cd := exp.header.Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="outdial-audit-`) {
		t.Errorf("export Content-Disposition = %q", cd)
	}
	lines := strings.Split(strings.TrimSpace(exp.body), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"action":"campaign.start"`) || !strings.Contains(lines[1], `"action":"campaign.pause"`) {
		t.Errorf("export: %s", exp.body)
	}
	wantStatus(t, "export of a bad filter", admin.get("/console/audit/export?actor=nobody"), http.StatusUnprocessableEntity)
}

// The audit page pages oldest first with "Next page", keeping the filters.
func TestAuditPaging(t *testing.T) {
	e := newEnv(t)
	admin := e.roleBrowser(store.RoleAdmin)
	for i := range 51 {
		e.keyCall(e.key, http.MethodPost, "/api/v1/suppressions", map[string]any{"numbers": []string{fmt.Sprintf("+1415555%04d", i)}},
			http.StatusOK)
	}
	first := admin.get("/console/audit?target_type=suppression")
	wantStatus(t, "first page", first, http.StatusOK)
	if n := len(auditRow.FindAllString(first.body, -1)); n != 50 {
		t.Fatalf("first page has %d entries", n)
	}
	next := regexp.MustCompile(`<a href="([^"]+)" rel="next">`).FindStringSubmatch(first.body)
	if next == nil || !strings.Contains(next[1], "target_type=suppression") {
		t.Fatalf("no next link keeping the filter: %s", first.body)
	}
	second := admin.get(html.UnescapeString(next[1]))
	if n := len(auditRow.FindAllString(second.body, -1)); n != 1 {
		t.Errorf("second page has %d entries", n)
	}
	wantIn(t, second.body, "First page")
}
