package web_test

import (
	"net/http"
	"testing"
)

// TestNamesRefuseControlCharacters: every name and label field answers 422
// control_character for NUL, line breaks and the other control characters
// (Unicode Cc), bidirectional overrides and invisible formatting characters
// (store.NameRefuses), on create and on update, and stores nothing.
func TestNamesRefuseControlCharacters(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	numberID := ce.callerID(ce.keyA, s.configID, "+14155550199")
	cid := id(t, ce.createCampaign(ce.keyA, campBody("c", s.workflowID, ce.upload(ce.keyA, campCSV(1)))), "id")
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "cancel"), nil), http.StatusOK)
	draft := id(t, ce.createCampaign(ce.keyA, campBody("d", s.workflowID, ce.upload(ce.keyA, campCSV(1)))), "id")

	bad := []struct {
		value, char string
		pos         float64
	}{
		{"nul\x00byte", "U+0000", 3},
		{"line\nbreak", "U+000A", 4},
		{"\rcarriage", "U+000D", 0},
		{"tab\there", "U+0009", 3},
		{"del\x7f", "U+007F", 3},
		{"é c1\u0085", "U+0085", 4},
		{"escape\x1b[31m", "U+001B", 6},
		{"invoice\u202Efdp.exe", "U+202E", 7},
		{"\u2066isolated\u2069", "U+2066", 0},
		{"zero\u200Bwidth", "U+200B", 4},
		{"\uFEFFbom", "U+FEFF", 0},
		{"mark\u200F", "U+200F", 4},
		{"é\u202Aembed", "U+202A", 1},
		{"arabic\u061C", "U+061C", 6},
		{"line\u2028sep", "U+2028", 4},
	}
	requests := []struct {
		name, method, path, field string
		body                      func(v string) map[string]any
	}{
		{"workflow create", http.MethodPost, "/api/v1/workflow", "name",
			func(v string) map[string]any {
				return map[string]any{"name": v, "workflow_definition": map[string]any{}}
			}},
		{"workflow update", http.MethodPut, "/api/v1/workflow/" + itoa(s.workflowID), "name",
			func(v string) map[string]any { return map[string]any{"name": v} }},
		{"campaign create", http.MethodPost, campaignsPath, "name",
			func(v string) map[string]any { return campBody(v, s.workflowID, "contacts.csv") }},
		{"campaign update", http.MethodPatch, campaignPath(draft), "name",
			func(v string) map[string]any { return map[string]any{"name": v} }},
		{"campaign redial", http.MethodPost, campaignOp(cid, "redial"), "name",
			func(v string) map[string]any { return map[string]any{"name": v} }},
		{"telephony config create", http.MethodPost, configsPath, "name",
			func(v string) map[string]any { return configBody(v, false, validConfig("twilio")) }},
		{"telephony config update", http.MethodPut, configPath(s.configID), "name",
			func(v string) map[string]any { return map[string]any{"name": v} }},
		{"phone number create", http.MethodPost, numbersPath(s.configID), "label",
			func(v string) map[string]any { return map[string]any{"address": "+14155550198", "label": v} }},
		{"phone number update", http.MethodPut, numberPath(s.configID, numberID), "label",
			func(v string) map[string]any { return map[string]any{"label": v} }},
	}
	for _, rq := range requests {
		t.Run(rq.name, func(t *testing.T) {
			for _, b := range bad {
				ps := wantProblems(t, ce.a(rq.method, rq.path, rq.body(b.value)), "body."+rq.field+" control_character")
				p := ps[0]
				if p.Input != b.value || p.Ctx["character"] != b.char || p.Ctx["position"] != b.pos ||
					p.Msg != "Value error, "+rq.field+" must not contain control or invisible formatting characters" {
					t.Errorf("%q: msg %q, input %q, ctx %v; want character %s at %v", b.value, p.Msg, p.Input, p.Ctx, b.char, b.pos)
				}
			}
		})
	}
	// Nothing was stored or changed.
	if n := len(ce.a(http.MethodGet, "/api/v1/workflow", nil).obj(t)["workflows"].([]any)); n != 1 {
		t.Errorf("workflows = %d, want 1", n)
	}
	if got := ce.campaign(draft)["name"]; got != "d" {
		t.Errorf("campaign name = %v, want d", got)
	}
	if ids := ce.campaignIDs(ce.keyA); len(ids) != 2 {
		t.Errorf("campaigns = %v, want 2", ids)
	}
	if n := len(ce.a(http.MethodGet, configsPath, nil).obj(t)["configurations"].([]any)); n != 1 {
		t.Errorf("configurations = %d, want 1", n)
	}
	// Other Unicode (accents, CJK, right-to-left letters, emoji, the
	// zero-width joiner and non-joiner) is fine.
	r := ce.a(http.MethodPost, "/api/v1/workflow", map[string]any{"name": "Relance é 東京 👩\u200D💻 می\u200Cخواهم שלום", "workflow_definition": map[string]any{}})
	wantStatus(t, r, http.StatusOK)
}
