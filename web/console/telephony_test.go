package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/outdial/outdial/store"
)

// The telephony pages through the real router: the forms built from the
// providers' field list, secrets kept masked and never on a page, phone
// numbers, the default toggle, deletion behind a confirmation, another
// organization's ids, CSRF.

// twilioSID and twilioToken are a configuration's credentials in these
// tests; the token must never be on a page.
const (
	twilioSID   = "AC0123456789abcdef0123456789abcdef"
	twilioToken = "tok-secret-5f2a9c1e7b3d4a60"
)

// keyCall calls the API with an API key and decodes the JSON object it
// answers, failing the test unless the status is want.
func (e *env) keyCall(key, method, path string, body any, want int) map[string]any {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("X-API-Key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		e.t.Fatalf("%s %s: status = %d, want %d: %s", method, path, res.StatusCode, want, raw)
	}
	var out map[string]any
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			e.t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
	return out
}

// otherKey creates an API key of another organization.
func (e *env) otherKey() string {
	e.t.Helper()
	_, key, err := e.db.CreateAPIKey(context.Background(), "other org", "console test", store.RoleAdmin)
	if err != nil {
		e.t.Fatal(err)
	}
	return key.Reveal()
}

// twilioConfig creates a Twilio configuration named name through the API
// with key and returns its id.
func (e *env) twilioConfig(key, name string) int64 {
	e.t.Helper()
	cfg := e.keyCall(key, http.MethodPost, "/api/v1/organizations/telephony-configs", map[string]any{
		"name": name, "config": map[string]any{"provider": "twilio", "account_sid": twilioSID, "auth_token": twilioToken},
	}, http.StatusOK)
	return int64(cfg["id"].(float64))
}

// storedToken reads configuration id's auth_token from the store, unsealed.
func (e *env) storedToken(id int64) string {
	e.t.Helper()
	cfg, err := e.db.GetTelephonyConfig(context.Background(), e.p.OrganizationID, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return cfg.Credentials.String("auth_token")
}

// noSecret fails the test when a page holds the Twilio token.
func noSecret(t *testing.T, what string, a answer) {
	t.Helper()
	if strings.Contains(a.body, twilioToken) || strings.Contains(a.body, twilioToken[:len(twilioToken)-4]) {
		t.Errorf("%s: the page holds the secret", what)
	}
}

// form returns the values with the CSRF token.
func form(csrf string, kv ...string) url.Values {
	v := url.Values{"csrf_token": {csrf}}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

var configLocation = regexp.MustCompile(`^/console/telephony/(\d+)\?notice=created$`)

// The create form lists every provider's fields from the providers' list;
// a Twilio configuration made through it has the fields typed, its secret
// stored and masked; the edit form shows it masked, and saving without
// retyping it keeps it.
func TestTelephonyCreateAndEditKeepSecret(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	csrf := b.csrf()

	page := b.get("/console/telephony/new")
	wantStatus(t, "new form", page, http.StatusOK)
	for _, want := range []string{`id="f-twilio-account_sid"`, `name="config.auth_token"`, `type="password"`,
		`<template data-provider="plivo">`, `<template data-provider="vonage">`, `>Account SID<`, `value="telnyx"`} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the new form lacks %s", want)
		}
	}
	if n := strings.Count(page.body, `<fieldset class="provider-fields" data-provider="twilio">`); n != 1 {
		t.Errorf("%d Twilio fieldsets, want 1 (live)", n)
	}
	if plivo := b.get("/console/telephony/new?provider=plivo"); !strings.Contains(plivo.body, `<input type="hidden" name="provider" value="plivo"`) {
		t.Error("?provider=plivo does not select Plivo")
	}

	a := b.postForm("/console/telephony/new", form(csrf, "provider", "twilio", "name", "main line",
		"is_default_outbound", "true", "config.account_sid", twilioSID, "config.auth_token", twilioToken,
		"config.machine_detection", "true"))
	wantStatus(t, "create", a, http.StatusSeeOther)
	m := configLocation.FindStringSubmatch(a.header.Get("Location"))
	if m == nil {
		t.Fatalf("create went to %q", a.header.Get("Location"))
	}
	path := "/api/v1/organizations/telephony-configs/" + m[1]
	cfg := e.keyCall(e.key, http.MethodGet, path, nil, http.StatusOK)
	creds := cfg["credentials"].(map[string]any)
	masked := strings.Repeat("*", len(twilioToken)-4) + twilioToken[len(twilioToken)-4:]
	if cfg["name"] != "main line" || cfg["provider"] != "twilio" || cfg["is_default_outbound"] != true ||
		creds["account_sid"] != twilioSID || creds["auth_token"] != masked || creds["machine_detection"] != true {
		t.Fatalf("created configuration: %v", cfg)
	}
	var id int64
	fmt.Sscan(m[1], &id)
	if got := e.storedToken(id); got != twilioToken {
		t.Fatalf("stored token %q, want the one typed", got)
	}

	edit := b.get(a.header.Get("Location"))
	wantStatus(t, "edit page", edit, http.StatusOK)
	noSecret(t, "edit page", edit)
	if !strings.Contains(edit.body, masked) || !strings.Contains(edit.body, `value="`+twilioSID+`"`) {
		t.Errorf("the edit page does not show the masked token and the SID: %s", edit.body)
	}

	a = b.postForm("/console/telephony/"+m[1], form(csrf, "name", "renamed", "config.account_sid", twilioSID,
		"config.auth_token", ""))
	wantStatus(t, "update", a, http.StatusSeeOther)
	cfg = e.keyCall(e.key, http.MethodGet, path, nil, http.StatusOK)
	creds = cfg["credentials"].(map[string]any)
	if cfg["name"] != "renamed" || cfg["is_default_outbound"] != false || creds["auth_token"] != masked || creds["machine_detection"] != false {
		t.Errorf("updated configuration: %v", cfg)
	}
	if got := e.storedToken(id); got != twilioToken {
		t.Errorf("stored token after an edit without it: %q, want it kept", got)
	}

	// A new token typed in replaces it.
	a = b.postForm("/console/telephony/"+m[1], form(csrf, "name", "renamed", "config.account_sid", twilioSID,
		"config.auth_token", "another-token-9999"))
	wantStatus(t, "update with a new token", a, http.StatusSeeOther)
	if got := e.storedToken(id); got != "another-token-9999" {
		t.Errorf("stored token %q after typing a new one", got)
	}
}

// A refused create shows the form again (422) with each problem next to
// its field and the values typed, except the secret, which is asked for
// again; a duplicate name (409) is shown at the name.
func TestTelephonyFormProblems(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	csrf := b.csrf()
	a := b.postForm("/console/telephony/new", form(csrf, "provider", "twilio", "name", "",
		"config.account_sid", "", "config.auth_token", twilioToken))
	wantStatus(t, "create without name and SID", a, http.StatusUnprocessableEntity)
	noSecret(t, "refused create", a)
	for _, want := range []string{`id="name-error"`, `id="f-twilio-account_sid-error">Field required.`, `id="retype"`,
		`aria-invalid="true"`} {
		if !strings.Contains(a.body, want) {
			t.Errorf("the refused form lacks %s", want)
		}
	}

	e.twilioConfig(e.key, "taken")
	a = b.postForm("/console/telephony/new", form(csrf, "provider", "twilio", "name", "taken",
		"config.account_sid", "ACkept", "config.auth_token", twilioToken))
	wantStatus(t, "duplicate name", a, http.StatusConflict)
	noSecret(t, "duplicate name", a)
	if !strings.Contains(a.body, `id="name-error">A telephony configuration named &#34;taken&#34; already exists.`) ||
		!strings.Contains(a.body, `value="ACkept"`) {
		t.Errorf("the duplicate name is not shown at the name, or the SID was lost: %s", a.body)
	}

	a = b.postForm("/console/telephony/new", form(csrf, "provider", "nope", "name", "x"))
	wantStatus(t, "unknown provider", a, http.StatusUnprocessableEntity)
	if !strings.Contains(a.body, "Choose one of the providers.") {
		t.Errorf("unknown provider: %s", a.body)
	}
}

// Phone numbers: added through the form (a bad one refused next to its
// field, values kept), deactivated, activated, made the default caller id,
// deleted after a confirmation page.
func TestTelephonyPhoneNumbers(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	csrf := b.csrf()
	id := e.twilioConfig(e.key, "main")
	base := fmt.Sprintf("/console/telephony/%d", id)
	api := fmt.Sprintf("/api/v1/organizations/telephony-configs/%d/phone-numbers", id)

	a := b.postForm(base+"/numbers", form(csrf, "address", "12", "label", "front desk"))
	wantStatus(t, "bad number", a, http.StatusUnprocessableEntity)
	if !strings.Contains(a.body, `id="address-error"`) || !strings.Contains(a.body, `value="front desk"`) {
		t.Errorf("a bad number's page: %s", a.body)
	}

	a = b.postForm(base+"/numbers", form(csrf, "address", "+14155550100", "label", "main", "is_default_caller_id", "true"))
	wantStatus(t, "add number", a, http.StatusSeeOther)
	list := e.keyCall(e.key, http.MethodGet, api, nil, http.StatusOK)["phone_numbers"].([]any)
	if len(list) != 1 {
		t.Fatalf("numbers: %v", list)
	}
	n := list[0].(map[string]any)
	if n["address_normalized"] != "+14155550100" || n["is_active"] != true || n["is_default_caller_id"] != true || n["label"] != "main" {
		t.Fatalf("added number: %v", n)
	}
	nid := int64(n["id"].(float64))
	num := fmt.Sprintf("%s/numbers/%d", base, nid)

	a = b.postForm(base+"/numbers", form(csrf, "address", "+14155550100"))
	wantStatus(t, "duplicate number", a, http.StatusConflict)
	if !strings.Contains(html.UnescapeString(a.body), `id="address-error">Phone number +14155550100 already exists`) {
		t.Errorf("duplicate number page: %s", a.body)
	}

	number := func() map[string]any {
		return e.keyCall(e.key, http.MethodGet, api, nil, http.StatusOK)["phone_numbers"].([]any)[0].(map[string]any)
	}
	wantStatus(t, "deactivate", b.postForm(num, form(csrf, "change", "deactivate")), http.StatusSeeOther)
	if got := number(); got["is_active"] != false {
		t.Errorf("after deactivate: %v", got)
	}
	if page := b.get(base); !strings.Contains(page.body, `>Inactive<`) || !strings.Contains(page.body, `value="activate"`) {
		t.Errorf("the edit page does not show the number inactive")
	}
	wantStatus(t, "activate", b.postForm(num, form(csrf, "change", "activate")), http.StatusSeeOther)
	if got := number(); got["is_active"] != true {
		t.Errorf("after activate: %v", got)
	}
	e.keyCall(e.key, http.MethodPut, fmt.Sprintf("%s/%d", api, nid), map[string]any{"is_default_caller_id": false}, http.StatusOK)
	wantStatus(t, "default caller", b.postForm(num, form(csrf, "change", "default-caller")), http.StatusSeeOther)
	if got := number(); got["is_default_caller_id"] != true {
		t.Errorf("after make default: %v", got)
	}
	wantStatus(t, "unknown change", b.postForm(num, form(csrf, "change", "explode")), http.StatusBadRequest)

	confirm := b.get(num + "/delete")
	wantStatus(t, "delete confirmation", confirm, http.StatusOK)
	if !strings.Contains(html.UnescapeString(confirm.body), "+14155550100") || !strings.Contains(confirm.body, `action="`+num+`/delete"`) {
		t.Errorf("the confirmation page: %s", confirm.body)
	}
	if len(e.keyCall(e.key, http.MethodGet, api, nil, http.StatusOK)["phone_numbers"].([]any)) != 1 {
		t.Error("the confirmation page deleted the number")
	}
	wantStatus(t, "delete", b.postForm(num+"/delete", form(csrf)), http.StatusSeeOther)
	if got := e.keyCall(e.key, http.MethodGet, api, nil, http.StatusOK)["phone_numbers"].([]any); len(got) != 0 {
		t.Errorf("numbers after delete: %v", got)
	}
	wantStatus(t, "confirm a deleted number", b.get(num+"/delete"), http.StatusNotFound)
}

// The list's toggle sets and unsets the default; deleting goes through a
// confirmation page.
func TestTelephonyDefaultAndDelete(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	csrf := b.csrf()
	first, second := e.twilioConfig(e.key, "first"), e.twilioConfig(e.key, "second")
	isDefault := func(id int64) bool {
		cfg := e.keyCall(e.key, http.MethodGet, fmt.Sprintf("/api/v1/organizations/telephony-configs/%d", id), nil, http.StatusOK)
		return cfg["is_default_outbound"] == true
	}
	a := b.postForm(fmt.Sprintf("/console/telephony/%d/default", first), form(csrf, "default", "true"))
	wantStatus(t, "make default", a, http.StatusSeeOther)
	if !isDefault(first) || isDefault(second) {
		t.Error("first is not the only default")
	}
	list := b.get(a.header.Get("Location"))
	if !strings.Contains(list.body, "The default configuration for outbound calls was changed.") ||
		!strings.Contains(list.body, `aria-label="Stop using first as the default"`) {
		t.Errorf("the list after the toggle: %s", list.body)
	}
	wantStatus(t, "unset default", b.postForm(fmt.Sprintf("/console/telephony/%d/default", first), form(csrf, "default", "false")), http.StatusSeeOther)
	if isDefault(first) {
		t.Error("first is still the default")
	}

	del := fmt.Sprintf("/console/telephony/%d/delete", second)
	confirm := b.get(del)
	wantStatus(t, "confirmation", confirm, http.StatusOK)
	if !strings.Contains(confirm.body, `action="`+del+`"`) || !strings.Contains(confirm.body, "Delete configuration") {
		t.Errorf("confirmation page: %s", confirm.body)
	}
	a = b.postForm(del, form(csrf))
	wantStatus(t, "delete", a, http.StatusSeeOther)
	e.keyCall(e.key, http.MethodGet, fmt.Sprintf("/api/v1/organizations/telephony-configs/%d", second), nil, http.StatusNotFound)
	if list := b.get(a.header.Get("Location")); !strings.Contains(list.body, "The configuration was deleted.") || strings.Contains(list.body, ">second<") {
		t.Errorf("list after delete: %s", list.body)
	}
}

// telephonyPages are the GET pages of configuration id and its number nid.
func telephonyPages(id, nid int64) []string {
	return []string{"/console/telephony", "/console/telephony/new", fmt.Sprintf("/console/telephony/%d", id),
		fmt.Sprintf("/console/telephony/%d/delete", id), fmt.Sprintf("/console/telephony/%d/numbers/%d/delete", id, nid)}
}

// Every page: signed out a redirect to sign-in (GET and HEAD alike),
// signed in 200 with HEAD answering like GET, and never the secret.
func TestTelephonyPagesSignedInAndOut(t *testing.T) {
	e := newEnv(t)
	id := e.twilioConfig(e.key, "main")
	n := e.keyCall(e.key, http.MethodPost, fmt.Sprintf("/api/v1/organizations/telephony-configs/%d/phone-numbers", id),
		map[string]any{"address": "+14155550100"}, http.StatusOK)
	out, in := e.browser(), e.browser()
	in.signIn(e.key)
	for _, p := range telephonyPages(id, int64(n["id"].(float64))) {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			a := out.do(method, p, nil)
			if a.status != http.StatusSeeOther || a.header.Get("Location") != "/console/sign-in?next="+url.QueryEscape(p) {
				t.Errorf("signed out %s %s: %d to %q", method, p, a.status, a.header.Get("Location"))
			}
		}
		get, head := in.get(p), in.do(http.MethodHead, p, nil)
		wantStatus(t, "GET "+p, get, http.StatusOK)
		if head.status != http.StatusOK || len(head.raw) != 0 || head.header.Get("Content-Type") != get.header.Get("Content-Type") {
			t.Errorf("HEAD %s: %d, %d bytes, %q", p, head.status, len(head.raw), head.header.Get("Content-Type"))
		}
		noSecret(t, p, get)
	}
}

// Another organization's configuration (and a number of it) is a 404
// page on every route, GET and POST, and nothing of it changes; an id that
// is not a number is a 404 page too.
func TestTelephonyOtherOrganization(t *testing.T) {
	e := newEnv(t)
	other := e.otherKey()
	id := e.twilioConfig(other, "theirs")
	n := e.keyCall(other, http.MethodPost, fmt.Sprintf("/api/v1/organizations/telephony-configs/%d/phone-numbers", id),
		map[string]any{"address": "+14155550100"}, http.StatusOK)
	nid := int64(n["id"].(float64))
	b := e.browser()
	b.signIn(e.key)
	csrf := b.csrf()
	for _, p := range telephonyPages(id, nid)[2:] {
		a := b.get(p)
		wantStatus(t, "GET "+p, a, http.StatusNotFound)
		if strings.Contains(a.body, "theirs") {
			t.Errorf("%s shows the other organization's name", p)
		}
	}
	base := fmt.Sprintf("/console/telephony/%d", id)
	num := fmt.Sprintf("%s/numbers/%d", base, nid)
	for p, f := range map[string]url.Values{
		base:              form(csrf, "name", "mine now", "config.account_sid", "ACx"),
		base + "/default": form(csrf, "default", "true"),
		base + "/delete":  form(csrf),
		base + "/numbers": form(csrf, "address", "+14155550101"),
		num:               form(csrf, "change", "deactivate"),
		num + "/delete":   form(csrf),
	} {
		wantStatus(t, "POST "+p, b.postForm(p, f), http.StatusNotFound)
	}
	cfg := e.keyCall(other, http.MethodGet, fmt.Sprintf("/api/v1/organizations/telephony-configs/%d", id), nil, http.StatusOK)
	if cfg["name"] != "theirs" || cfg["is_default_outbound"] != false || cfg["phone_number_count"] != 1.0 {
		t.Errorf("the other organization's configuration changed: %v", cfg)
	}
	for _, p := range []string{"/console/telephony/abc", "/console/telephony/0/delete", "/console/telephony/1/numbers/x/delete"} {
		wantStatus(t, "GET "+p, b.get(p), http.StatusNotFound)
	}
}

// Every POST route refuses a form without the CSRF token (403) and changes
// nothing.
func TestTelephonyCSRF(t *testing.T) {
	e := newEnv(t)
	id := e.twilioConfig(e.key, "main")
	n := e.keyCall(e.key, http.MethodPost, fmt.Sprintf("/api/v1/organizations/telephony-configs/%d/phone-numbers", id),
		map[string]any{"address": "+14155550100"}, http.StatusOK)
	nid := int64(n["id"].(float64))
	b := e.browser()
	b.signIn(e.key)
	base := fmt.Sprintf("/console/telephony/%d", id)
	num := fmt.Sprintf("%s/numbers/%d", base, nid)
	for p, f := range map[string]url.Values{
		"/console/telephony/new": {"provider": {"twilio"}, "name": {"new"}, "config.account_sid": {"AC1"}, "config.auth_token": {"x"}},
		base:                     {"name": {"changed"}, "config.account_sid": {"ACx"}},
		base + "/default":        {"default": {"true"}},
		base + "/delete":         {},
		base + "/numbers":        {"address": {"+14155550101"}},
		num:                      {"change": {"deactivate"}},
		num + "/delete":          {},
	} {
		for _, token := range []string{"", "wrong"} {
			if token != "" {
				f.Set("csrf_token", token)
			}
			a := b.postForm(p, f)
			wantStatus(t, "POST "+p+" token "+token, a, http.StatusForbidden)
		}
	}
	list := e.keyCall(e.key, http.MethodGet, "/api/v1/organizations/telephony-configs", nil, http.StatusOK)["configurations"].([]any)
	if len(list) != 1 {
		t.Fatalf("configurations: %v", list)
	}
	cfg := list[0].(map[string]any)
	if cfg["name"] != "main" || cfg["is_default_outbound"] != false || cfg["phone_number_count"] != 1.0 {
		t.Errorf("the configuration changed: %v", cfg)
	}
	nums := e.keyCall(e.key, http.MethodGet, fmt.Sprintf("/api/v1/organizations/telephony-configs/%d/phone-numbers", id), nil, http.StatusOK)["phone_numbers"].([]any)
	if len(nums) != 1 || nums[0].(map[string]any)["is_active"] != true {
		t.Errorf("the numbers changed: %v", nums)
	}
	if got := e.storedToken(id); got != twilioToken {
		t.Errorf("the token changed")
	}
}

// A name that is markup is shown as text on the list, the edit page and
// the confirmation page.
func TestTelephonyNameIsText(t *testing.T) {
	e := newEnv(t)
	const name = `<script>alert(1)</script>`
	id := e.twilioConfig(e.key, name)
	b := e.browser()
	b.signIn(e.key)
	for _, p := range []string{"/console/telephony", fmt.Sprintf("/console/telephony/%d", id), fmt.Sprintf("/console/telephony/%d/delete", id)} {
		a := b.get(p)
		wantStatus(t, p, a, http.StatusOK)
		if strings.Contains(a.body, name) || !strings.Contains(a.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s does not show the name as text", p)
		}
	}
}
