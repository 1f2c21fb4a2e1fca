package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/outdial/outdial/web"
)

// DELETE /campaign/{id}: 204 for a draft or finished campaign, which then
// is 404 everywhere; 409 while running or paused; 404 for another
// organization's campaign; 422 for an id that is not an integer.
func TestDeleteCampaign(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	cid := ce.newCampaign(s, 3)

	wantStatus(t, ce.do(http.MethodDelete, campaignPath(cid), ce.keyB, nil), http.StatusNotFound)
	wantStatus(t, ce.a(http.MethodDelete, "/api/v1/campaign/abc", nil), http.StatusUnprocessableEntity)
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusOK)
	wantDetail(t, ce.a(http.MethodDelete, campaignPath(cid), nil), http.StatusConflict,
		fmt.Sprintf("campaign %d is running; cancel it before deleting it", cid))
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "pause"), nil), http.StatusOK)
	wantStatus(t, ce.a(http.MethodDelete, campaignPath(cid), nil), http.StatusConflict)
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "cancel"), nil), http.StatusOK)

	wantStatus(t, ce.a(http.MethodDelete, campaignPath(cid), nil), http.StatusNoContent)
	for _, path := range []string{campaignPath(cid), campaignPath(cid) + "/calls", campaignPath(cid) + "/logs", campaignPath(cid) + "/report"} {
		wantStatus(t, ce.a(http.MethodGet, path, nil), http.StatusNotFound)
	}
	wantStatus(t, ce.a(http.MethodDelete, campaignPath(cid), nil), http.StatusNotFound)
	if list := objects(t, ce.a(http.MethodGet, "/api/v1/campaign", nil).obj(t)["campaigns"]); len(list) != 0 {
		t.Fatalf("campaigns after delete: %d, want 0", len(list))
	}

	// A draft campaign can be deleted too.
	draft := ce.newCampaign(s, 1)
	wantStatus(t, ce.a(http.MethodDelete, campaignPath(draft), nil), http.StatusNoContent)
	wantStatus(t, ce.a(http.MethodGet, campaignPath(draft), nil), http.StatusNotFound)
}

// A campaign larger than the first queued chunk: its calls page in id
// order and every filter answers; the report has every contact.
func TestLargeCampaignCallsAndReport(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	cid := ce.newCampaign(s, 2500)
	c := ce.campaign(cid)
	if c["total_rows"] != float64(2500) || c["total_queued_count"] != float64(2500) {
		t.Fatalf("total_rows %v, total_queued_count %v; want 2500, 2500", c["total_rows"], c["total_queued_count"])
	}
	var seen int
	after := 0.0
	for {
		r := ce.a(http.MethodGet, fmt.Sprintf("%s/calls?limit=200&after_id=%d", campaignPath(cid), int64(after)), nil)
		wantStatus(t, r, http.StatusOK)
		calls := objects(t, r.obj(t)["calls"])
		if len(calls) == 0 {
			break
		}
		for _, call := range calls {
			if call["id"].(float64) <= after {
				t.Fatalf("calls out of id order: %v after %v", call["id"], after)
			}
			after = call["id"].(float64)
			seen++
		}
	}
	// First attempts are queued a chunk ahead of the dialer: the first
	// 1,000 exist from the start.
	if seen != 1000 {
		t.Fatalf("calls of a campaign not started: %d, want the first queued chunk (1000)", seen)
	}
	for _, q := range []string{"state=queued", "outcome=busy", "state=done&outcome=busy"} {
		wantStatus(t, ce.a(http.MethodGet, campaignPath(cid)+"/calls?"+q, nil), http.StatusOK)
	}
	status, _, body := ce.getRaw(ce.keyA, campaignPath(cid)+"/report")
	if status != http.StatusOK {
		t.Fatalf("report status = %d, want 200", status)
	}
	if lines := strings.Count(body, "\n"); lines != 2501 {
		t.Fatalf("report lines %d, want 2501 (header and every contact)", lines)
	}
}

// Issue 16 item 3: a CSV with more contacts than serve --max-campaign-rows
// is refused with one 422 and nothing is stored; one at the limit is taken.
func TestCampaignRowLimit(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{limits: web.Limits{MaxCampaignRows: 3}})
	s := ce.setup(false)
	key := ce.upload(ce.keyA, campCSV(4))
	r := ce.do(http.MethodPost, campaignsPath, ce.keyA, campBody("too many", s.workflowID, key))
	wantStatus(t, r, http.StatusUnprocessableEntity)
	p := objects(t, r.obj(t)["detail"])
	if len(p) != 1 || p[0]["type"] != "csv_too_many_rows" {
		t.Fatalf("problems %v, want one csv_too_many_rows", p)
	}
	if list := objects(t, ce.a(http.MethodGet, "/api/v1/campaign", nil).obj(t)["campaigns"]); len(list) != 0 {
		t.Fatalf("campaigns after the refusal: %d, want 0", len(list))
	}
	id := ce.newCampaign(s, 3)
	if c := ce.campaign(id); c["total_rows"] != float64(3) {
		t.Fatalf("total_rows %v, want 3", c["total_rows"])
	}
}
