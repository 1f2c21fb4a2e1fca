package web_test

import (
	"net/http"
	"testing"
	"time"
)

// TestCallingHoursHoldAndRelease closes the calling hours through the API:
// a started campaign waits for them (next_dial_at) without calling; a PUT
// that opens them reaches the running campaign at once, and its calls'
// evidence names the new policy version.
func TestCallingHoursHoldAndRelease(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true})
	s := ce.setup(false)
	// One day that is not today anywhere (three days from today in San
	// Francisco, the callees' numbering plan), 0 = Monday.
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Fatal(err)
	}
	closed := (int(ce.clock.now().In(la).Weekday()) + 6 + 3) % 7
	r := ce.a(http.MethodPut, compliancePath, map[string]any{"calling_hours": map[string]any{"enabled": true, "days": []any{closed}}})
	wantStatus(t, r, http.StatusOK)
	version := num(t, r.obj(t), "version")

	cid := ce.newCampaign(s, 2, "rate_limit_per_second", 1000, "retry_config", map[string]any{"enabled": false})
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusOK)
	c := ce.waitCampaign(cid, "waiting for the calling hours", func(c map[string]any) bool { return c["next_dial_at"] != nil })
	if at, err := time.Parse(time.RFC3339, c["next_dial_at"].(string)); err != nil || at.Sub(ce.clock.now()) < 24*time.Hour {
		t.Errorf("next_dial_at = %v, want the closed day, at least a day ahead", c["next_dial_at"])
	}
	if n := len(ce.sim.Calls()); n != 0 {
		t.Fatalf("%d calls placed outside the calling hours", n)
	}

	wantStatus(t, ce.a(http.MethodPut, compliancePath, map[string]any{"calling_hours": map[string]any{"enabled": false}}), http.StatusOK)
	ce.waitState(cid, "completed")
	for _, a := range ce.calls(cid, "") {
		ev, _ := a["compliance"].(map[string]any)
		if a["outcome"] != "answered" || ev["calling_hours"] != "disabled" || ev["policy_version"] != version+1 {
			t.Errorf("call %v: outcome %v, evidence %v; want answered under policy %v with calling hours disabled", a["id"], a["outcome"], ev, version+1)
		}
	}
}
