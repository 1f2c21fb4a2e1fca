package browsertest_test

// The campaign page in a real browser: it follows a run to its end without
// a reload, its Pause and Resume buttons stop and restart the dialing, and
// user data on it stays text.

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// createCampaignFrom uploads csv and creates a draft campaign named name
// from it with the setup's workflow and the extra fields of the create
// body; it returns the campaign.
func (o *org) createCampaignFrom(s dialSetup, name, csv string, extra map[string]any) map[string]any {
	o.t.Helper()
	body := map[string]any{"name": name, "workflow_id": s.workflowID, "source_id": o.upload(csv),
		"retry_config": map[string]any{"enabled": false}}
	for k, v := range extra {
		body[k] = v
	}
	return o.call(http.MethodPost, "/api/v1/campaign", body, http.StatusOK)
}

// createdCalls counts the calls the simulator was asked to place to o's
// first n numbers.
func (o *org) createdCalls(n int) int {
	total := 0
	for i := range n {
		total += srv.sim.CreatesTo(o.number(i))
	}
	return total
}

// field is the selector of the campaign page's element data-field=name.
func field(name string) string { return fmt.Sprintf(`#campaign [data-field=%q]`, name) }

// waitNumber waits until the page's element sel shows a number for which
// ok holds, and returns it.
func (tb *tab) waitNumber(sel, what string, ok func(int) bool) int {
	tb.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		text := strings.TrimSpace(tb.text(sel))
		if n, err := strconv.Atoi(text); err == nil && ok(n) {
			return n
		}
		if time.Now().After(deadline) {
			tb.t.Fatalf("%s: %s shows %q after %v", what, sel, text, waitTimeout)
		}
		// Wait for the element's text to change before reading it again.
		err := tb.waitFor(waitTimeout, sel+" to change",
			`(sel, was) => { const e = document.querySelector(sel); return !e || e.textContent.trim() !== was; }`, sel, text)
		if err != nil {
			tb.t.Fatalf("%s: %v (it shows %q)", what, err, text)
		}
	}
}

// The page follows a campaign started through the API to its end without
// a reload: state, progress bar, counters, outcome breakdown. Its Pause
// button stops the dialing at once (the calls in flight end, no new one is
// placed) and Resume starts it again.
func TestCampaignPageFollowsRunPauseResume(t *testing.T) {
	const contacts = 8
	o := newOrg(t)
	s := o.readyToDial()
	for i := range contacts {
		sc := twiliosim.Script{Outcome: twiliosim.Human, RingDelay: 300 * time.Millisecond, TalkDuration: 300 * time.Millisecond}
		if i == 2 {
			sc = twiliosim.Script{Outcome: twiliosim.Busy, RingDelay: 300 * time.Millisecond}
		}
		if i == 5 {
			sc = twiliosim.Script{Outcome: twiliosim.NoAnswer, RingDelay: 300 * time.Millisecond}
		}
		srv.setScript(o.number(i), sc)
	}
	c := o.createCampaignFrom(s, "Spring renewals", o.contactsCSV(contacts),
		map[string]any{"max_concurrency": 2, "rate_limit_per_second": 2})
	id := idOf(t, c, "id")

	tb := newTab(t)
	tb.signIn(o.key)
	tb.goTo(fmt.Sprintf("/console/campaigns/%d", id))
	tb.waitText(field("campaign_state"), "draft")
	tb.waitVisible(`form[data-op="start"] button`)
	evalJS[bool](tb, `(window.notReloaded = true)`)
	// The calls table was rendered while every call was queued: no start
	// yet, and the contact's own column (first_name) beside the number.
	if n := tb.count(`#calls tr[data-call-id] [data-field="started"] time`); n != 0 {
		t.Fatalf("%d queued rows show a start", n)
	}
	if got := tb.text(`#calls tr[data-call-id] [data-field="contact"]`); got != "Contact 0" {
		t.Errorf("the first row's contact column shows %q, want Contact 0", got)
	}
	if got := tb.text(`#campaign .counts div:first-child dt`); got != "Not reached" {
		t.Errorf("the progress card's first counter is %q, want Not reached", got)
	}

	o.call(http.MethodPost, fmt.Sprintf("/api/v1/campaign/%d/start", id), nil, http.StatusOK)
	tb.waitText(field("campaign_state"), "running")
	tb.waitNumber(field("executed_count"), "calls placed before the pause", func(n int) bool { return n >= 2 })

	tb.clickButton("Pause")
	tb.waitText(field("campaign_state"), "paused")
	tb.waitVisible(`form[data-op="resume"] button`)
	if n := tb.count(`form[data-op="pause"]:not([hidden])`); n != 0 {
		t.Error("the Pause button is still shown on a paused campaign")
	}
	if got := o.campaign(id)["state"]; got != "paused" {
		t.Fatalf("the API says %v after Pause", got)
	}
	placed := o.createdCalls(contacts)
	// The calls in flight end and the diagnosis says why nothing dials:
	// time in which a campaign still dialing would have placed more.
	tb.waitNumber(field("in_flight"), "calls in flight while paused", func(n int) bool { return n == 0 })
	tb.waitText(field("reasons"), "not running")
	if now := o.createdCalls(contacts); now != placed {
		t.Fatalf("%d calls were placed after the pause (%d at the pause)", now-placed, placed)
	}
	if placed >= contacts {
		t.Fatalf("every contact was called before the pause took effect (%d calls)", placed)
	}
	if got := o.campaign(id)["processed_rows"].(float64); int(got) >= contacts {
		t.Fatalf("every contact is final while paused: %v", got)
	}

	tb.clickButton("Resume")
	tb.waitText(field("campaign_state"), "running")
	tb.waitText(field("campaign_state"), "completed")
	tb.waitText(field("processed_rows"), strconv.Itoa(contacts))
	tb.waitText(field("executed_count"), strconv.Itoa(contacts))
	tb.waitText(field("failed_rows"), "2")
	tb.waitText(field("percent"), "100%")
	tb.waitText(field("queued"), "0")
	tb.waitText(`[data-outcome="answered"] [data-field="count"]`, strconv.Itoa(contacts-2))
	tb.waitText(`[data-outcome="busy"] [data-field="count"]`, "1")
	tb.waitText(`[data-outcome="no_answer"] [data-field="count"]`, "1")
	tb.waitText(field("logs"), "campaign_completed")
	// Each row's "Started" was filled by its call event, without a reload.
	if err := tb.waitFor(waitTimeout, "every row's Started filled", `(n) => document.querySelectorAll('#calls tr[data-call-id] [data-field="started"] time[datetime]').length === n`, contacts); err != nil {
		t.Fatalf("live rows: %v (%d with a start)", err, tb.count(`#calls tr[data-call-id] [data-field="started"] time`))
	}
	// The answered calls came into the answer-to-first-audio histogram
	// and their rows as they ended (the greeting: audio at the answer).
	tb.waitText(`[data-field="first_audio"] li[data-from="0"] [data-field="bucket_count"]`, strconv.Itoa(contacts-2))
	if n := tb.count(`#calls tr[data-call-id] [data-field="first_audio"]:not(:empty)`); n != contacts-2 {
		t.Errorf("%d rows show a first audio, want the %d answered", n, contacts-2)
	}
	tb.waitVisible(`#redial button`)
	if got := evalJS[string](tb, `document.querySelector('[data-field="progress"]').value + "/" + document.querySelector('[data-field="progress"]').max`); got != fmt.Sprintf("%d/%d", contacts, contacts) {
		t.Errorf("progress bar = %s", got)
	}
	if !evalJS[bool](tb, `window.notReloaded === true`) {
		t.Error("the page was reloaded")
	}
	if n := o.createdCalls(contacts); n != contacts {
		t.Errorf("the simulator got %d calls, want %d", n, contacts)
	}
	for _, ev := range []string{"campaign_paused", "campaign_resumed"} {
		if !strings.Contains(tb.text(field("logs")), ev) {
			t.Errorf("the log list lacks %s", ev)
		}
	}
	tb.screenshot(filepath.Join(screenshotDir(t), "campaign.png"))
}

// A campaign whose name and contacts' cells are markup shows them as text:
// no dialog opens, no img element comes of them.
func TestCampaignPageUserDataIsText(t *testing.T) {
	o := newOrg(t)
	s := o.readyToDial()
	csv := fmt.Sprintf("phone_number,first_name\n%s,%s\n%s,\"%s\"\n", o.number(0), xssName, o.number(1), xssName)
	c := o.createCampaignFrom(s, xssName, csv, nil)
	id := idOf(t, c, "id")
	o.call(http.MethodPost, fmt.Sprintf("/api/v1/campaign/%d/start", id), nil, http.StatusOK)
	o.waitCampaign(id, "completed", func(c map[string]any) bool { return c["state"] == "completed" })

	tb := newTab(t)
	tb.signIn(o.key)
	tb.goTo(fmt.Sprintf("/console/campaigns/%d", id))
	tb.waitText(`[data-outcome="answered"] [data-field="count"]`, "2")
	tb.waitText(field("logs"), "campaign_completed")
	// The contacts' first_name is the calls table's contact column, as text.
	if n := tb.count(`#calls tr[data-call-id] [data-field="contact"]`); n != 2 {
		t.Errorf("%d contact cells, want 2", n)
	}
	evalJS[bool](tb, `Promise.all([...document.images].map(i => i.complete ? 0 :
		new Promise(r => { i.addEventListener('load', r); i.addEventListener('error', r); }))).then(() => true)`)
	if got := tb.takeDialogs(); len(got) != 0 {
		t.Errorf("dialogs opened: %q", got)
	}
	if n := tb.count(`#campaign img, img[src="x"]`); n != 0 {
		t.Errorf("the page holds %d img elements", n)
	}
	if got := evalJS[string](tb, `document.querySelector('#campaign h1').firstChild.textContent.trim()`); got != xssName {
		t.Errorf("the heading reads %q, want %q", got, xssName)
	}
	if got := evalJS[string](tb, `document.title`); !strings.HasPrefix(got, xssName) {
		t.Errorf("the title reads %q", got)
	}
	// The abandoned calls card: the answers spoke the greeting (no agent),
	// audio at the answer, so both calls are in the first bucket of the
	// histogram and none is abandoned; two calls are too few for a rate.
	tb.waitText(`[data-field="first_audio"] li[data-from="0"] [data-field="bucket_count"]`, "2")
	if got := tb.text(`#campaign .rate[data-scope="campaign"] [data-field="rate_none"]`); !strings.Contains(got, "not enough calls yet") {
		t.Errorf("the campaign's rate reads %q, want not enough calls yet", got)
	}
	if got := tb.text(`#calls tr[data-call-id] [data-field="first_audio"]`); got != "0.00 s" {
		t.Errorf("the first call's First audio reads %q, want 0.00 s", got)
	}

	// At a phone's width the page does not scroll sideways (the calls
	// table scrolls in its own box).
	tb.setViewport(phoneView)
	tb.goTo(fmt.Sprintf("/console/campaigns/%d", id))
	tb.waitText(`[data-outcome="answered"] [data-field="count"]`, "2")
	tb.checkFits("campaign")
	tb.screenshot(filepath.Join(screenshotDir(t), "campaign-phone.png"))
}
