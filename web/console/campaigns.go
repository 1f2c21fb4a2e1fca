package console

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/outdial/outdial/web/wire"
)

// The campaigns list (the console's home): name, state, progress and counts
// of each campaign, newest first, a page at a time with the API's paging
// (GET /api/v1/campaign?limit=&before_id=). campaigns.js keeps the counts
// live from the organization's event stream.

// campaignsPageSize is how many campaigns a page of the list shows.
const campaignsPageSize = 50

// campaignsList is the data of campaigns.html.
type campaignsList struct {
	Campaigns []wire.Campaign
	// Older is the link to the next page of older campaigns, "" on the
	// last page; Newest is set when this is not the first page.
	Older  string
	Newest string
}

// campaignsPage lists a page of campaigns: before_id (a campaign id) starts
// the page after that campaign, as the API does.
func campaignsPage(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	q := url.Values{"limit": {strconv.Itoa(campaignsPageSize)}}
	before := r.URL.Query().Get("before_id")
	if before != "" {
		q.Set("before_id", before)
	}
	var page wire.CampaignList
	if err := c.api(r, s).get("/api/v1/campaign?"+q.Encode(), &page); err != nil {
		return err
	}
	data := campaignsList{Campaigns: page.Campaigns}
	if n := len(page.Campaigns); n == campaignsPageSize {
		data.Older = Prefix + "campaigns?before_id=" + strconv.FormatInt(page.Campaigns[n-1].ID, 10)
	}
	if before != "" {
		data.Newest = Prefix + "campaigns"
	}
	return c.render(w, r, s, "campaigns.html", "Campaigns", "campaigns", data)
}
