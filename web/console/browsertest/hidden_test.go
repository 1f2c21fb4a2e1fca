package browsertest_test

// A hidden console tab lets go of its event stream (a browser holds 6
// connections per site over HTTP/1.1) and follows the campaign again once
// shown.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// streamsEnded counts the request log's lines of org's campaign streams
// that ended (a stream's line is written when it ends).
func streamsEnded(org int64) int {
	n := 0
	for _, line := range strings.Split(srv.logs.tail(1<<20), "\n") {
		if strings.Contains(line, "route=/api/v1/campaign/:campaign_id/events") && strings.Contains(line, fmt.Sprintf("org_id=%d", org)) {
			n++
		}
	}
	return n
}

// setHidden makes the page believe it was hidden or shown, as switching
// tabs does, and tells it.
func (tb *tab) setHidden(hidden bool) {
	tb.t.Helper()
	evalJS[bool](tb, fmt.Sprintf(`(() => {
		Object.defineProperty(document, "hidden", { value: %t, configurable: true });
		document.dispatchEvent(new Event("visibilitychange"));
		return true;
	})()`, hidden))
}

func TestHiddenTabLetsGoOfItsStream(t *testing.T) {
	o := newOrg(t)
	s := o.readyToDial()
	for i := range 4 {
		srv.setScript(o.number(i), twiliosim.Script{Outcome: twiliosim.Human, RingDelay: 200 * time.Millisecond,
			TalkDuration: 200 * time.Millisecond})
	}
	c := o.createCampaignFrom(s, "Visibility", o.contactsCSV(4), map[string]any{"max_concurrency": 1, "rate_limit_per_second": 1})
	id := idOf(t, c, "id")

	tb := newTab(t)
	tb.signIn(o.key)
	tb.goTo(fmt.Sprintf("/console/campaigns/%d", id))
	tb.waitText(field("campaign_state"), "draft")
	if n := streamsEnded(o.id); n != 0 {
		t.Fatalf("%d of the organization's streams ended before the page was hidden", n)
	}

	tb.setHidden(true)
	waitUntil(t, "the hidden page's stream to end", func() bool { return streamsEnded(o.id) == 1 })

	// Shown again: a new stream follows the campaign to its end.
	tb.setHidden(false)
	o.call(http.MethodPost, fmt.Sprintf("/api/v1/campaign/%d/start", id), nil, http.StatusOK)
	tb.waitText(field("campaign_state"), "completed")
	// The new stream ends after the completed snapshot.
	waitUntil(t, "the second stream to end after completion", func() bool { return streamsEnded(o.id) == 2 })
}

// waitUntil polls cond every few milliseconds until it holds, failing the
// test after waitTimeout.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", waitTimeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
