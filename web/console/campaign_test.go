package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/outdial/outdial/store"
)

// campaign creates a draft campaign of org with contacts contacts through
// the store (its workflow and configuration are not looked up: the page
// shows the names kept with the campaign).
func (e *env) campaign(org int64, name string, contacts int) int64 {
	e.t.Helper()
	nc := store.NewCampaign{Settings: store.Settings{Name: name, MaxConcurrency: 10, RateLimitPerSecond: 1,
		RetryConfig:    store.RetryConfig{Enabled: true, MaxRetries: 1, RetryDelaySeconds: 120, RetryOnBusy: true},
		CircuitBreaker: store.CircuitBreaker{FailureThreshold: 0.5, WindowSeconds: 120, MinCallsInWindow: 5}},
		WorkflowID: 1, WorkflowName: "greeting", WorkflowDefinition: []byte("{}"), TelephonyConfigurationID: 1,
		TelephonyConfigurationName: "main line", SourceID: "k"}
	c, err := e.db.CreateCampaign(context.Background(), org, nc, func(add func(store.ContactInput) error) ([]string, error) {
		for i := range contacts {
			err := add(store.ContactInput{Row: i + 2, PhoneNumber: fmt.Sprintf("+1415555%04d", i),
				Context: map[string]string{"first_name": "<img src=x onerror=alert(1)>"}})
			if err != nil {
				return nil, err
			}
		}
		return []string{"phone_number", "first_name"}, nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return c.ID
}

// The page shows the campaign, escaped, with its controls (only those the
// state allows), counters, settings and a calls table; HEAD answers like
// GET; the console's security headers are on it.
func TestCampaignPage(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	id := e.campaign(e.p.OrganizationID, `<script>alert("x")</script>`, 3)
	path := fmt.Sprintf("/console/campaigns/%d", id)

	a := b.get(path)
	wantStatus(t, "GET "+path, a, http.StatusOK)
	for _, want := range []string{
		`&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;`,
		fmt.Sprintf(`data-campaign-id="%d"`, id),
		fmt.Sprintf(`action="/console/campaigns/%d/start" data-op="start">`, id),
		fmt.Sprintf(`href="/api/v1/campaign/%d/report" download`, id),
		`<progress class="big" max="3" value="0"`,
		`id="set-max_concurrency" name="max_concurrency" value="10"`,
		`id="set-retry_config-retry_on_busy" name="retry_config.retry_on_busy" value="true" checked`,
		`<dt>max_concurrency</dt>`,
	} {
		if !strings.Contains(a.body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(a.body, `<script>alert`) {
		t.Error("the campaign's name is on the page unescaped")
	}
	// A draft can be started and cancelled, not paused or resumed.
	for op, shown := range map[string]bool{"start": true, "cancel": true, "pause": false, "resume": false} {
		hidden := strings.Contains(a.body, fmt.Sprintf(`data-op="%s" hidden>`, op))
		if hidden == shown {
			t.Errorf("button %s: hidden = %v in a draft", op, hidden)
		}
	}
	wantHeaders(t, a)

	h := b.do(http.MethodHead, path, nil)
	wantStatus(t, "HEAD "+path, h, http.StatusOK)
	if h.body != "" || h.header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("HEAD: Content-Type %q, body %q", h.header.Get("Content-Type"), h.body)
	}
	wantHeaders(t, h)
}

// wantHeaders fails the test when a lacks the console's security headers.
func wantHeaders(t *testing.T, a answer) {
	t.Helper()
	for name, want := range map[string]string{
		"X-Frame-Options":        "DENY",
		"X-Content-Type-Options": "nosniff",
		"Referrer-Policy":        "same-origin",
		"Cache-Control":          "no-store",
	} {
		if got := a.header.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	csp := a.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
}

// Another organization's campaign, an id that does not exist and one that
// is no number are 404 pages (with the headers), and say nothing of the
// campaign.
func TestCampaignPageNotFound(t *testing.T) {
	e := newEnv(t)
	_, otherKey, err := e.db.CreateAPIKey(context.Background(), "other", "test", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	other := e.campaign(mustOrg(t, e, otherKey.Reveal()), "secret plans", 1)
	b := e.browser()
	b.signIn(e.key)
	for _, path := range []string{
		fmt.Sprintf("/console/campaigns/%d", other),
		"/console/campaigns/999999",
		"/console/campaigns/abc",
		"/console/campaigns/-1",
	} {
		a := b.get(path)
		wantStatus(t, "GET "+path, a, http.StatusNotFound)
		if strings.Contains(a.body, "secret plans") {
			t.Errorf("%s shows the other organization's campaign", path)
		}
		if !strings.Contains(a.body, `<p class="error" role="alert">`) {
			t.Errorf("%s: not the error page: %s", path, a.body)
		}
		wantHeaders(t, a)
		wantStatus(t, "HEAD "+path, b.do(http.MethodHead, path, nil), http.StatusNotFound)
	}
	// Nor can its forms change it.
	a := b.postForm(fmt.Sprintf("/console/campaigns/%d/cancel", other), url.Values{"csrf_token": {b.csrf()}})
	wantStatus(t, "cancel another organization's campaign", a, http.StatusNotFound)
}

// mustOrg returns the organization of the API key key.
func mustOrg(t *testing.T, e *env, key string) int64 {
	t.Helper()
	p, err := e.db.Authenticate(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return p.OrganizationID
}

var problemOf = regexp.MustCompile(`id="set-max_concurrency-problem">([^<]+)<`)

// The settings form saves through PATCH; the API's 422 problems are shown
// next to the fields they name, with what was typed kept.
func TestCampaignSettings(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	id := e.campaign(e.p.OrganizationID, "spring", 2)
	path := fmt.Sprintf("/console/campaigns/%d/settings", id)
	form := url.Values{"csrf_token": {b.csrf()}, "name": {"spring 2"}, "max_concurrency": {"0"},
		"rate_limit_per_second": {"fast"}, "retry_config.enabled": {"true"}, "retry_config.max_retries": {"2"},
		"retry_config.retry_delay_seconds": {"60"}, "circuit_breaker.failure_threshold": {"0.25"},
		"circuit_breaker.window_seconds": {"60"}, "circuit_breaker.min_calls_in_window": {"3"}}

	a := b.postForm(path, form)
	wantStatus(t, "bad settings", a, http.StatusUnprocessableEntity)
	m := problemOf.FindStringSubmatch(a.body)
	if m == nil || !strings.Contains(m[1], "1") {
		t.Errorf("no problem next to max_concurrency: %v", m)
	}
	if !strings.Contains(a.body, `id="set-rate_limit_per_second-problem"`) ||
		!strings.Contains(a.body, `name="rate_limit_per_second" value="fast"`) {
		t.Error("the rate's problem or the text typed is not shown")
	}
	if !strings.Contains(a.body, `aria-invalid="true" aria-describedby="set-max_concurrency-problem"`) {
		t.Error("the field is not marked invalid")
	}
	if c := e.getCampaign(b, id); c["name"] != "spring" {
		t.Errorf("a refused change changed the name to %v", c["name"])
	}

	form.Set("max_concurrency", "4")
	form.Set("rate_limit_per_second", "2.5")
	a = b.postForm(path, form)
	wantStatus(t, "good settings", a, http.StatusSeeOther)
	if loc := a.header.Get("Location"); loc != fmt.Sprintf("/console/campaigns/%d?saved=1#settings", id) {
		t.Errorf("Location = %q", loc)
	}
	c := e.getCampaign(b, id)
	rc, _ := c["retry_config"].(map[string]any)
	cb, _ := c["circuit_breaker"].(map[string]any)
	if c["name"] != "spring 2" || c["max_concurrency"] != 4.0 || c["rate_limit_per_second"] != 2.5 ||
		rc["max_retries"] != 2.0 || rc["retry_on_busy"] != false || cb["enabled"] != false || cb["window_seconds"] != 60.0 {
		t.Errorf("saved campaign: %v", c)
	}
	if page := b.get(a.header.Get("Location")); !strings.Contains(page.body, "Settings saved.") {
		t.Error("the page does not say the settings were saved")
	}
}

// getCampaign reads campaign id through the API with the browser's
// session.
func (e *env) getCampaign(b *browser, id int64) map[string]any {
	e.t.Helper()
	a, c := b.apiJSON(http.MethodGet, fmt.Sprintf("/api/v1/campaign/%d", id), nil)
	wantStatus(e.t, "GET campaign", a, http.StatusOK)
	return c
}

// A state button goes through the API: allowed, back to the page (303);
// refused by the state, the page again with the API's reason (409).
func TestCampaignStateButtons(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	id := e.campaign(e.p.OrganizationID, "autumn", 1)
	token := url.Values{"csrf_token": {b.csrf()}}

	a := b.postForm(fmt.Sprintf("/console/campaigns/%d/pause", id), token)
	wantStatus(t, "pause a draft", a, http.StatusConflict)
	if !strings.Contains(a.body, `data-field="notice">`) || strings.Contains(a.body, `data-field="notice" hidden>`) {
		t.Error("the refusal is not shown")
	}
	a = b.postForm(fmt.Sprintf("/console/campaigns/%d/cancel", id), token)
	wantStatus(t, "cancel a draft", a, http.StatusSeeOther)
	if c := e.getCampaign(b, id); c["state"] != "cancelled" {
		t.Fatalf("state after cancel = %v", c["state"])
	}
	page := b.get(fmt.Sprintf("/console/campaigns/%d", id))
	for _, op := range []string{"start", "pause", "resume", "cancel"} {
		if !strings.Contains(page.body, fmt.Sprintf(`data-op="%s" hidden>`, op)) {
			t.Errorf("a cancelled campaign shows the button %s", op)
		}
	}
	if !strings.Contains(page.body, `data-field="settings" hidden>`) || strings.Contains(page.body, `data-field="redial" hidden>`) {
		t.Error("a cancelled campaign: settings shown or redial hidden")
	}
	// Without the CSRF token nothing changes.
	a = b.postForm(fmt.Sprintf("/console/campaigns/%d/start", id), url.Values{})
	wantStatus(t, "start without a token", a, http.StatusForbidden)
}

// The calls table's filters go to the API; one it refuses is said on the
// page, which still shows.
func TestCampaignCallsFilter(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	id := e.campaign(e.p.OrganizationID, "filters", 1)
	a := b.get(fmt.Sprintf("/console/campaigns/%d?outcome=bogus&state=done", id))
	wantStatus(t, "bad filter", a, http.StatusOK)
	if !strings.Contains(a.body, "Input should be") {
		t.Errorf("the API's reason is not shown")
	}
	if !strings.Contains(a.body, `<option value="done" selected>`) {
		t.Error("the state filter is not kept")
	}
}

var (
	callRow  = regexp.MustCompile(`<tr data-call-id="(\d+)">`)
	nextLink = regexp.MustCompile(`<a href="([^"]+)">Next page</a>`)
)

// The calls table shows a page of 50 calls at a time with the API's
// after_id, filters kept from page to page.
func TestCampaignCallsPaged(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	id := e.campaign(e.p.OrganizationID, "paged", 120)
	path := fmt.Sprintf("/console/campaigns/%d?state=queued", id)
	var seen []string
	for page := 1; ; page++ {
		a := b.get(path)
		wantStatus(t, fmt.Sprintf("page %d", page), a, http.StatusOK)
		rows := callRow.FindAllStringSubmatch(a.body, -1)
		for _, r := range rows {
			seen = append(seen, r[1])
		}
		if page > 1 && !strings.Contains(a.body, ">First page</a>") {
			t.Errorf("page %d has no link to the first page", page)
		}
		m := nextLink.FindStringSubmatch(a.body)
		if m == nil {
			if page != 3 || len(rows) != 20 {
				t.Fatalf("the last page is page %d with %d rows, want page 3 with 20", page, len(rows))
			}
			break
		}
		if len(rows) != 50 {
			t.Fatalf("page %d has %d rows, want 50", page, len(rows))
		}
		next := strings.ReplaceAll(m[1], "&amp;", "&")
		if !strings.Contains(next, "state=queued") || !strings.Contains(next, "after_id="+rows[49][1]) {
			t.Fatalf("next link %q does not keep the filter or start after %s", next, rows[49][1])
		}
		path = next
	}
	if len(seen) != 120 {
		t.Errorf("the pages showed %d calls, want 120", len(seen))
	}
	a := b.get(fmt.Sprintf("/console/campaigns/%d?outcome=answered", id))
	if n := len(callRow.FindAllString(a.body, -1)); n != 0 || !strings.Contains(a.body, "No calls match these filters") {
		t.Errorf("outcome=answered: %d rows", n)
	}
}
