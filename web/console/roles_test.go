package console_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/outdial/outdial/store"
)

// Every page shows only the controls the session's role may use (API.md
// 17): the template function can asks web/roles, the table the API
// enforces. The console's forms still go to the API, which refuses a role
// that may not (403) and changes nothing.

// roleKey creates an API key of the test's organization with role.
func (e *env) roleKey(role store.Role) string {
	e.t.Helper()
	_, key, err := e.db.CreateAPIKey(context.Background(), "acme", string(role)+" key", role)
	if err != nil {
		e.t.Fatal(err)
	}
	return key.Reveal()
}

// roleBrowser is a browser signed in with a new key of role.
func (e *env) roleBrowser(role store.Role) *browser {
	e.t.Helper()
	b := e.browser()
	b.signIn(e.roleKey(role))
	return b
}

// organization holds one of each thing a page has controls for.
type organization struct {
	campaign, config, number, workflow, suppression int64
}

func (e *env) populate() organization {
	e.t.Helper()
	var o organization
	o.campaign = e.campaign(e.p.OrganizationID, "Spring", 2)
	o.config = e.twilioConfig(e.key, "main line")
	n := e.keyCall(e.key, http.MethodPost, fmt.Sprintf("/api/v1/organizations/telephony-configs/%d/phone-numbers", o.config),
		map[string]any{"address": "+14155550100"}, http.StatusOK)
	o.number = int64(n["id"].(float64))
	o.workflow = e.createWorkflowAs(e.key, "greeting", wfDefinition)
	e.keyCall(e.key, http.MethodPost, "/api/v1/suppressions", map[string]any{"numbers": []string{"+14155550199"}}, http.StatusOK)
	o.suppression = int64(e.suppressed(e.key)[0].(map[string]any)["id"].(float64))
	return o
}

// pages returns every page of o a role may open, by name.
func (o organization) pages() map[string]string {
	return map[string]string{
		"campaigns":     "/console/campaigns",
		"campaign":      fmt.Sprintf("/console/campaigns/%d", o.campaign),
		"new campaign":  "/console/campaigns/new",
		"telephony":     "/console/telephony",
		"configuration": fmt.Sprintf("/console/telephony/%d", o.config),
		"config delete": fmt.Sprintf("/console/telephony/%d/delete", o.config),
		"number delete": fmt.Sprintf("/console/telephony/%d/numbers/%d/delete", o.config, o.number),
		"new config":    "/console/telephony/new",
		"workflows":     "/console/workflows",
		"workflow":      fmt.Sprintf("/console/workflows/%d", o.workflow),
		"wf delete":     fmt.Sprintf("/console/workflows/%d/delete", o.workflow),
		"new workflow":  "/console/workflows/new",
		"suppressions":  "/console/suppressions",
		"compliance":    "/console/compliance",
	}
}

// formTag matches a form's opening tag and its action.
var formTag = regexp.MustCompile(`<form[^>]*action="([^"]*)"[^>]*>`)

// writeForms returns the actions of the page's forms that post (the
// sign-out form of every page left out).
func writeForms(body string) []string {
	var out []string
	for _, m := range formTag.FindAllStringSubmatch(body, -1) {
		if strings.Contains(m[0], `method="post"`) && m[1] != "/console/sign-out" {
			out = append(out, m[1])
		}
	}
	return out
}

func TestViewerPagesHaveNoWriteControls(t *testing.T) {
	e := newEnv(t)
	o := e.populate()
	b := e.roleBrowser(store.RoleViewer)
	for name, path := range o.pages() {
		a := b.get(path)
		wantStatus(t, name, a, http.StatusOK)
		if forms := writeForms(a.body); len(forms) > 0 {
			t.Errorf("%s: a viewer's page has forms posting to %v", name, forms)
		}
		for _, control := range []string{`href="/console/campaigns/new"`, `href="/console/telephony/new"`, `href="/console/workflows/new"`,
			`/delete"`, `<button type="submit">Save`, `id="wf-save"`, `id="wf-validate"`, "Make default",
			`href="/console/users"`, `href="/console/api-keys"`, `href="/console/audit"`} {
			if strings.Contains(a.body, control) {
				t.Errorf("%s: a viewer's page has %s", name, control)
			}
		}
	}
	// What it shows it still shows: the campaign, the policy, the list.
	wantIn(t, b.get(fmt.Sprintf("/console/campaigns/%d", o.campaign)).body, "Spring", "Download report")
	wantIn(t, b.get("/console/compliance").body, `id="read-only"`, `<fieldset disabled class="read-only">`)
	wantIn(t, b.get("/console/suppressions").body, "14155550199")
	wantIn(t, b.get(fmt.Sprintf("/console/workflows/%d", o.workflow)).body, `id="wf-name" name="name" value="greeting"`, "readonly")

	// The admins' pages are refused by the API, and the console says so.
	for _, path := range []string{"/console/users", "/console/api-keys", "/console/audit", "/console/audit/export"} {
		wantStatus(t, path, b.get(path), http.StatusForbidden)
	}
	// A form posted anyway is the API's to refuse: 403, nothing changed.
	csrf := b.csrf()
	wantStatus(t, "viewer start", b.postForm(fmt.Sprintf("/console/campaigns/%d/start", o.campaign), form(csrf)), http.StatusForbidden)
	if got := e.getCampaign(b, o.campaign)["state"]; got != "draft" {
		t.Errorf("after a viewer's start the campaign is %v", got)
	}
	wantStatus(t, "viewer suppression delete",
		b.postForm(fmt.Sprintf("/console/suppressions/%d/delete", o.suppression), form(csrf)), http.StatusForbidden)
	if len(e.suppressed(e.key)) != 1 {
		t.Error("a viewer's delete removed the suppression")
	}
}

func TestOperatorSeesCampaignControlsOnly(t *testing.T) {
	e := newEnv(t)
	o := e.populate()
	b := e.roleBrowser(store.RoleOperator)

	campaigns := b.get("/console/campaigns")
	wantIn(t, campaigns.body, `<a class="button" href="/console/campaigns/new">New campaign</a>`)
	page := b.get(fmt.Sprintf("/console/campaigns/%d", o.campaign))
	wantIn(t, page.body, fmt.Sprintf(`action="/console/campaigns/%d/start"`, o.campaign),
		fmt.Sprintf(`action="/console/campaigns/%d/settings"`, o.campaign), fmt.Sprintf(`action="/console/campaigns/%d/redial"`, o.campaign))
	wantIn(t, b.get("/console/campaigns/new").body, `id="new-campaign"`)
	wantIn(t, b.get("/console/workflows").body, `href="/console/workflows/new"`)
	wantIn(t, b.get(fmt.Sprintf("/console/workflows/%d", o.workflow)).body, `id="wf-save"`, `id="wf-validate"`, `id="wf-delete"`)

	// Adding to the suppression list, not removing from it.
	supp := b.get("/console/suppressions")
	wantIn(t, supp.body, `id="add-form"`, `id="import-form"`)
	if strings.Contains(supp.body, "/delete") {
		t.Error("an operator's suppression list has delete buttons")
	}
	// Telephony and compliance are read-only; no admin navigation.
	for _, path := range []string{"/console/telephony", fmt.Sprintf("/console/telephony/%d", o.config), "/console/compliance"} {
		a := b.get(path)
		wantStatus(t, path, a, http.StatusOK)
		if forms := writeForms(a.body); len(forms) > 0 {
			t.Errorf("%s: an operator's page has forms posting to %v", path, forms)
		}
		if strings.Contains(a.body, `href="/console/telephony/new"`) || strings.Contains(a.body, "/delete") {
			t.Errorf("%s: an operator's page has telephony controls", path)
		}
	}
	for _, link := range []string{`href="/console/users"`, `href="/console/api-keys"`, `href="/console/audit"`} {
		if strings.Contains(campaigns.body, link) {
			t.Errorf("an operator's navigation has %s", link)
		}
	}
	// The operator's start goes through.
	wantStatus(t, "operator start", b.postForm(fmt.Sprintf("/console/campaigns/%d/start", o.campaign), form(b.csrf())), http.StatusSeeOther)
}

func TestAdminSeesEveryControl(t *testing.T) {
	e := newEnv(t)
	o := e.populate()
	b := e.roleBrowser(store.RoleAdmin)
	nav := b.get("/console/campaigns").body
	wantIn(t, nav, `href="/console/users"`, `href="/console/api-keys"`, `href="/console/audit"`, `href="/console/campaigns/new"`)
	wantIn(t, b.get("/console/telephony").body, `href="/console/telephony/new"`, fmt.Sprintf(`action="/console/telephony/%d/default"`, o.config))
	wantIn(t, b.get(fmt.Sprintf("/console/telephony/%d", o.config)).body, `id="config-form"`, `id="number-form"`,
		fmt.Sprintf(`href="/console/telephony/%d/numbers/%d/delete"`, o.config, o.number))
	wantIn(t, b.get("/console/compliance").body, `<form method="post" action="/console/compliance"`)
	wantIn(t, b.get("/console/suppressions").body, fmt.Sprintf(`action="/console/suppressions/%d/delete"`, o.suppression))
	wantIn(t, b.get(fmt.Sprintf("/console/telephony/%d/delete", o.config)).body, fmt.Sprintf(`action="/console/telephony/%d/delete"`, o.config))
}
