package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/web"
)

// Once a campaign has been created from an upload, the retention sweep
// deletes the file, and the campaign does not notice: it keeps its
// source_id, lists its contacts and serves its report from the stored
// contacts. A second create from the swept key is the ordinary 422.
func TestCampaignOutlivesItsUpload(t *testing.T) {
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	id := ce.newCampaign(s, 3)
	key, _ := ce.campaign(id)["source_id"].(string)

	res, err := ce.db.SweepUploads(t.Context(), ce.objects, web.UploadsPrefix, 24*time.Hour)
	if err != nil || res.Used != 1 {
		t.Fatalf("sweep = %+v, %v; want the used upload deleted", res, err)
	}
	le := &limitedEnv{objEnv: ce.objEnv}
	le.wantNoObjectKey(key)

	c := ce.campaign(id)
	if c["source_id"] != key || num(t, c, "total_rows") != 3 {
		t.Fatalf("campaign after its upload was swept: %v", c)
	}
	if calls := ce.calls(id, ""); len(calls) == 0 {
		t.Fatal("no calls listed after the upload was swept")
	}
	status, _, report := ce.getRaw(ce.keyA, campaignOp(id, "report"))
	if status != http.StatusOK {
		t.Fatalf("report after the upload was swept: %d %s", status, report)
	}
	for i := 1; i <= 3; i++ {
		if !strings.Contains(report, campPhone(i)) {
			t.Fatalf("report lacks %s:\n%s", campPhone(i), report)
		}
	}
	r := ce.a(http.MethodPost, campaignsPath, campBody("again", s.workflowID, key))
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(string(r.Raw), "object_not_found") {
		t.Fatalf("second create from a swept key: %s", r.Raw)
	}
}
