package browsertest_test

// People, roles and the audit trail in a real browser (API.md 17): a
// viewer's pages without controls (and without script errors where they
// were), an admin inviting a user, changing its role and disabling it, and
// the audit page answering "who paused campaign N".

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// keyOf creates another API key of o with role and returns it in full.
func (o *org) keyOf(role store.Role, name string) string {
	o.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	k, secret, err := srv.db.CreateAPIKey(ctx, o.name, name, role)
	if err != nil {
		o.t.Fatalf("create API key: %v", err)
	}
	if k.OrganizationID != o.id {
		o.t.Fatalf("the %s key is of organization %d, not %d", role, k.OrganizationID, o.id)
	}
	return secret.Reveal()
}

// setValue sets the field of the CSS selector to value and says so with a
// change event, as choosing in a select does.
func (tb *tab) setValue(sel, value string) {
	tb.t.Helper()
	tb.waitVisible(sel)
	evalJS[bool](tb, fmt.Sprintf(`(() => { const e = document.querySelector(%s); e.value = %s;
		e.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`, jsString(sel), jsString(value)))
}

func TestViewerPagesWithoutControls(t *testing.T) {
	o := newOrg(t)
	s := o.readyToDial()
	id := idOf(t, o.createCampaign(s, "Watched", 2), "id")
	tb := newTab(t)
	tb.signIn(o.keyOf(store.RoleViewer, "supervisor"))

	if n := tb.count(`a[href="/console/campaigns/new"]`); n != 0 {
		t.Errorf("a viewer's campaigns list has %d links to a new campaign", n)
	}
	for _, link := range []string{"/console/users", "/console/api-keys", "/console/audit"} {
		if n := tb.count(fmt.Sprintf(`header nav a[href="%s"]`, link)); n != 0 {
			t.Errorf("a viewer's navigation links %s", link)
		}
	}
	tb.goTo(fmt.Sprintf("/console/campaigns/%d", id))
	tb.waitText(field("campaign_state"), "draft")
	// The live page follows the campaign without the sections it hides.
	o.call(http.MethodPost, fmt.Sprintf("/api/v1/campaign/%d/start", id), nil, http.StatusOK)
	tb.waitText(field("campaign_state"), "completed")
	for _, sel := range []string{"form[data-op]", "#settings", "#redial", `form[method="post"]:not(.sign-out)`} {
		if n := tb.count(sel); n != 0 {
			t.Errorf("a viewer's campaign page has %d of %s", n, sel)
		}
	}
	if n := tb.count(`a[download]`); n != 1 {
		t.Errorf("a viewer's campaign page has %d report links, want 1", n)
	}
	for _, path := range []string{"/console/telephony", fmt.Sprintf("/console/telephony/%d", s.configID), "/console/workflows",
		fmt.Sprintf("/console/workflows/%d", s.workflowID), "/console/suppressions", "/console/compliance"} {
		tb.goTo(path)
		if n := tb.count(`form[method="post"]:not(.sign-out)`); n != 0 {
			t.Errorf("%s: a viewer's page has %d forms that post", path, n)
		}
		if n := tb.count(`main button[type="submit"]`); n != 0 && path != "/console/suppressions" {
			t.Errorf("%s: a viewer's page has %d submit buttons", path, n)
		}
	}
	tb.checkClean()
}

func TestUserManagementInBrowser(t *testing.T) {
	o := newOrg(t)
	tb := newTab(t)
	tb.signIn(o.key)
	tb.clickButton("Users")
	tb.waitPath("/console/users")

	email := fmt.Sprintf("ana-%d@example.com", o.n)
	tb.fill("Email", email)
	tb.setValue("#invite-role", "operator")
	tb.clickButton("Invite")
	tb.waitText("#invited", email+" was invited as operator")
	if link := tb.text("#set-password-url"); !strings.Contains(link, "/console/set-password?token=") {
		t.Errorf("set-password link %q", link)
	}
	users := o.call(http.MethodGet, "/api/v1/users", nil, http.StatusOK)["users"].([]any)
	if len(users) != 1 || users[0].(map[string]any)["role"] != "operator" {
		t.Fatalf("users after the invite: %v", users)
	}
	uid := idOf(t, users[0].(map[string]any), "id")
	row := fmt.Sprintf(`tr[data-user-id="%d"]`, uid)

	tb.setValue(fmt.Sprintf("#role-%d", uid), "viewer")
	tb.click(fmt.Sprintf(`button[aria-label="Change the role of %s"]`, email))
	tb.waitText("#notice", "The user was changed.")
	tb.waitText(row+` [data-field="role"] option:checked`, "viewer")

	tb.click(fmt.Sprintf(`button[aria-label="Disable %s"]`, email))
	tb.waitText(row+` [data-field="status"]`, "Disabled")
	u := o.call(http.MethodGet, "/api/v1/users", nil, http.StatusOK)["users"].([]any)[0].(map[string]any)
	if u["role"] != "viewer" || u["disabled"] != true {
		t.Errorf("the user after the changes: %v", u)
	}
	tb.checkClean()
}

func TestAuditPageWhoPaused(t *testing.T) {
	o := newOrg(t)
	s := o.readyToDial()
	for i := range 3 {
		srv.setScript(o.number(i), twiliosim.Script{Outcome: twiliosim.Human, RingDelay: 2 * time.Second, TalkDuration: time.Second})
	}
	c := o.createCampaignFrom(s, "Spring", o.contactsCSV(3), map[string]any{"max_concurrency": 1, "rate_limit_per_second": 1})
	id := idOf(t, c, "id")
	tb := newTab(t)
	tb.signIn(o.keyOf(store.RoleOperator, "night shift"))
	tb.goTo(fmt.Sprintf("/console/campaigns/%d", id))
	tb.clickButton("Start")
	tb.waitText(field("campaign_state"), "running")
	tb.clickButton("Pause")
	tb.waitText(field("campaign_state"), "paused")
	t.Cleanup(func() { o.do(http.MethodPost, fmt.Sprintf("/api/v1/campaign/%d/cancel", id), nil) })

	admin := newTab(t)
	admin.signIn(o.key)
	admin.clickButton("Audit")
	admin.waitPath("/console/audit")
	// Who paused campaign id?
	admin.setValue("#target_type", "campaign")
	admin.fill("Target id", fmt.Sprint(id))
	admin.clickButton("Filter")
	if err := admin.waitFor(waitTimeout, "the filtered page", `() => location.search.includes('target_id=') &&
		document.querySelectorAll('tr[data-audit-id]').length === 3`); err != nil {
		t.Fatalf("%v (%d entries shown)", err, admin.count("tr[data-audit-id]"))
	}
	pause := `tr[data-audit-id]:last-child`
	admin.waitText(pause+` [data-field="action"]`, "campaign.pause")
	admin.waitText(pause+` [data-field="actor"]`, "night shift")
	admin.waitText(pause+` [data-field="changes"]`, "state: running → paused")
	// Oldest first: its creation (through the API, with the admin's key),
	// the start, the pause.
	admin.waitText(`tr[data-audit-id]:first-child [data-field="action"]`, "campaign.create")
	admin.waitText(`tr[data-audit-id]:nth-child(2) [data-field="action"]`, "campaign.start")
	if n := admin.count(`a#export[download][href*="target_id="]`); n != 1 {
		t.Errorf("%d export links keeping the filters", n)
	}
	admin.checkClean()
}
