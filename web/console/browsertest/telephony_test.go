package browsertest_test

// The telephony pages in a real browser: a Twilio configuration and its
// caller id made through the forms, usable by a campaign, and edited
// without retyping the auth token.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// masked is v as the API masks a secret: all but the last 4 characters
// replaced by '*'.
func masked(v string) string {
	if len(v) <= 4 {
		return strings.Repeat("*", len(v))
	}
	return strings.Repeat("*", len(v)-4) + v[len(v)-4:]
}

// pageHTML returns the page's whole markup as the browser holds it now.
func (tb *tab) pageHTML() string {
	tb.t.Helper()
	return evalJS[string](tb, `document.documentElement.outerHTML`)
}

// selectOption picks value in the select of the CSS selector, as a person
// choosing it does (the change event fires).
func (tb *tab) selectOption(sel, value string) {
	tb.t.Helper()
	evalJS[bool](tb, fmt.Sprintf(`(() => { const s = document.querySelector(%s); s.value = %s;
		s.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`, jsString(sel), jsString(value)))
}

// The create form switches its fields with the provider select; a Twilio
// configuration (the simulator's credentials, default for outbound) and a
// caller id made through the forms are what the API then holds, the token
// stored and masked; an edit that does not retype the token keeps it: a
// campaign started afterwards dials through it.
func TestTelephonyFormsCreateTwilioAndCallerID(t *testing.T) {
	o := newOrg(t)
	tb := newTab(t)
	tb.signIn(o.key)
	tb.goTo("/console/telephony/new")
	tb.waitVisible(`#f-twilio-account_sid`)
	if shown := evalJS[bool](tb, `[...document.querySelectorAll('#provider-pick button')].some(b => b.getClientRects().length > 0)`); shown {
		t.Errorf("the no-script provider button is shown with the script")
	}

	// Switching the provider swaps the fields in place, without a reload.
	evalJS[bool](tb, `(window.notReloaded = true)`)
	tb.selectOption("#provider", "plivo")
	tb.waitVisible(`#f-plivo-auth_id`)
	if n := tb.count(`#f-twilio-account_sid`); n != 0 {
		t.Error("the Twilio fields stay after switching to Plivo")
	}
	tb.selectOption("#provider", "twilio")
	tb.waitVisible(`#f-twilio-account_sid`)
	if !evalJS[bool](tb, `window.notReloaded === true && document.getElementById('provider-value').value === 'twilio'`) {
		t.Error("switching the provider reloaded the page or left the provider field behind")
	}

	tb.fill("Name", "simulated twilio")
	tb.fill("Account SID", srv.sim.AccountSID())
	tb.fill("Auth token", srv.sim.AuthToken())
	tb.click("#is_default_outbound")
	tb.clickButton("Create configuration")
	tb.waitText("main", "The configuration was created.")

	tb.fill("Phone number or SIP address", o.number(19))
	tb.fill("Label", "main line")
	tb.click("#is_default_caller_id")
	tb.clickButton("Add number")
	tb.waitText(".notice", "The phone number was added.")
	tb.waitText("table.phone-numbers", o.number(19))

	list := o.call(http.MethodGet, "/api/v1/organizations/telephony-configs", nil, http.StatusOK)["configurations"].([]any)
	if len(list) != 1 {
		t.Fatalf("configurations: %v", list)
	}
	id := idOf(t, list[0].(map[string]any), "id")
	if want := fmt.Sprintf("/console/telephony/%d", id); tb.path() != want {
		t.Errorf("the browser is at %s, want %s", tb.path(), want)
	}
	cfgPath := fmt.Sprintf("/api/v1/organizations/telephony-configs/%d", id)
	cfg := o.call(http.MethodGet, cfgPath, nil, http.StatusOK)
	creds, _ := cfg["credentials"].(map[string]any)
	if cfg["name"] != "simulated twilio" || cfg["provider"] != "twilio" || cfg["is_default_outbound"] != true ||
		cfg["phone_number_count"] != 1.0 || creds["account_sid"] != srv.sim.AccountSID() ||
		creds["auth_token"] != masked(srv.sim.AuthToken()) || creds["machine_detection"] != false {
		t.Fatalf("the configuration made through the forms: %v", cfg)
	}
	nums := o.call(http.MethodGet, cfgPath+"/phone-numbers", nil, http.StatusOK)["phone_numbers"].([]any)
	if len(nums) != 1 {
		t.Fatalf("phone numbers: %v", nums)
	}
	if n := nums[0].(map[string]any); n["address_normalized"] != o.number(19) || n["is_active"] != true ||
		n["is_default_caller_id"] != true || n["label"] != "main line" {
		t.Errorf("the caller id: %v", n)
	}
	if strings.Contains(tb.pageHTML(), srv.sim.AuthToken()) {
		t.Error("the edit page holds the auth token")
	}
	tb.waitText(`[data-masked]`, masked(srv.sim.AuthToken()))
	tb.screenshot(filepath.Join(screenshotDir(t), "telephony-form.png"))

	// Edit the name and machine detection; the token is left as it is.
	tb.fill("Name", "simulated twilio (edited)")
	tb.click("#f-twilio-machine_detection")
	tb.clickButton("Save changes")
	tb.waitText(".notice", "The configuration was saved.")
	cfg = o.call(http.MethodGet, cfgPath, nil, http.StatusOK)
	creds, _ = cfg["credentials"].(map[string]any)
	if cfg["name"] != "simulated twilio (edited)" || creds["auth_token"] != masked(srv.sim.AuthToken()) ||
		creds["machine_detection"] != true || cfg["is_default_outbound"] != true {
		t.Fatalf("the configuration after the edit: %v", cfg)
	}
	if strings.Contains(tb.pageHTML(), srv.sim.AuthToken()) {
		t.Error("the page after the edit holds the auth token")
	}

	// A campaign dials through it: the simulator accepts only its own
	// credentials, so the stored token is still the one typed at creation.
	wf := o.call(http.MethodPost, "/api/v1/workflow",
		map[string]any{"name": "greeting", "workflow_definition": json.RawMessage(workflowDefinition)}, http.StatusOK)
	c := o.createCampaign(dialSetup{configID: id, workflowID: idOf(t, wf, "id")}, "through the form's config", 2)
	campaignID := idOf(t, c, "id")
	o.call(http.MethodPost, fmt.Sprintf("/api/v1/campaign/%d/start", campaignID), nil, http.StatusOK)
	done := o.waitCampaign(campaignID, "completed", func(c map[string]any) bool { return c["state"] == "completed" })
	if done["executed_count"] != 2.0 || done["failed_rows"] != 0.0 {
		t.Errorf("the campaign: executed_count %v, failed_rows %v, want 2 and 0", done["executed_count"], done["failed_rows"])
	}
	for i := range 2 {
		if n := srv.sim.CreatesTo(o.number(i)); n != 1 {
			t.Errorf("the simulator got %d calls to %s, want 1", n, o.number(i))
		}
	}
}

// At a phone's width (390 px) the telephony, suppressions and compliance
// pages never scroll sideways (wide tables scroll inside their frame).
func TestSettingsPagesFitPhone(t *testing.T) {
	o := newOrg(t)
	s := o.readyToDial()
	o.call(http.MethodPost, "/api/v1/suppressions", map[string]any{"numbers": []string{o.number(5)}, "reason": "asked not to be called again"}, http.StatusOK)
	tb := newTab(t)
	tb.setViewport(phoneView)
	tb.signIn(o.key)
	dir := t.TempDir()
	if os.Getenv("OUTDIAL_SCREENSHOTS_ALL") != "" {
		dir = screenshotDir(t)
	}
	for name, path := range map[string]string{
		"telephony-list-phone": "/console/telephony",
		"telephony-new-phone":  "/console/telephony/new",
		"telephony-edit-phone": fmt.Sprintf("/console/telephony/%d", s.configID),
		"suppressions-phone":   "/console/suppressions",
		"compliance-phone":     "/console/compliance",
	} {
		tb.goTo(path)
		tb.waitVisible("main h1")
		// A phone widens its layout viewport to content that overflows:
		// compare with the device's width, not innerWidth.
		if scroll := evalJS[int64](tb, `document.documentElement.scrollWidth`); scroll > phoneView.width {
			t.Errorf("%s: the page is %d px wide on a %d px phone", path, scroll, phoneView.width)
		}
		tb.screenshot(filepath.Join(dir, name+".png"))
	}
}
