package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// Deleting a configuration while a call placed through it is still in
// flight is 409 (API.md 2.5): the call's webhooks and deadline query need
// the configuration until its outcome is recorded. Once the call ends, the
// outcome is recorded (answered, not unknown) and the delete is 204.
func TestDeleteConfigWithCallInFlight(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true, script: func(twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: time.Hour}
	}})
	s := ce.setup(false)
	cid := ce.newCampaign(s, 1)
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusOK)
	calls := ce.waitCalls(cid, "a call in flight", func(l []map[string]any) bool {
		return len(l) == 1 && l[0]["state"] == "in_flight" && l[0]["provider_call_id"] != nil
	})
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "cancel"), nil), http.StatusOK)
	wantDetail(t, ce.a(http.MethodDelete, configPath(s.configID), nil), http.StatusConflict,
		fmt.Sprintf("telephony configuration %d still has 1 call in flight; delete it once their outcomes are recorded", s.configID))

	// The callee hangs up: Twilio's final callback reaches the service.
	sid := calls[0]["provider_call_id"].(string)
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/2010-04-01/Accounts/%s/Calls/%s.json", ce.sim.URL(), ce.sim.AccountSID(), sid),
		strings.NewReader(url.Values{"Status": {"completed"}}.Encode()))
	req.SetBasicAuth(ce.sim.AccountSID(), ce.sim.AuthToken())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("hang up at the simulator: %v %v", res, err)
	}
	res.Body.Close()
	ce.waitCalls(cid, "the call answered", func(l []map[string]any) bool {
		return len(l) == 1 && l[0]["state"] == "done" && l[0]["outcome"] == "answered"
	})
	wantStatus(t, ce.a(http.MethodDelete, configPath(s.configID), nil), http.StatusNoContent)
}
