package console

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/web/wire"
)

// The new-campaign page (API.md 14): choose a contacts CSV, which
// newcampaign.js uploads straight to the object store through a presigned
// URL (POST /api/v1/s3/presigned-upload-url, then an XMLHttpRequest PUT
// whose progress drives a bar) and puts its file_key in the form; pick the
// workflow and the telephony configuration; set concurrency, rate, retries,
// the calling window (slots.js, the slot editor) and the circuit breaker;
// then create (POST /api/v1/campaign) and, unless the operator asked for a
// draft, start it (POST /api/v1/campaign/{id}/start), landing on the
// campaign's page.
//
// A failed create shows the form again with every value as it was sent:
// the API's 422 problems next to their fields, a rejected file's problems
// as a table of row, column, value and problem (newcampaign_problems.go).

// newCampaignPath is the page's path.
const newCampaignPath = Prefix + "campaigns/new"

// newCampaignView is the data of newcampaign.html.
type newCampaignView struct {
	Form     newCampaignForm
	Problems *ncProblems
	// Workflows and Configs fill the selects.
	Workflows []workflowChoice
	Configs   []configChoice
	// Created is set when the campaign was created but could not start:
	// StartError says why.
	Created    *createdCampaign
	StartError string
}

// workflowChoice is one option of the workflow select.
type workflowChoice struct {
	ID, Name string
}

// configChoice is one option of the telephony configuration select.
type configChoice struct {
	ID, Name, Provider string
	Default            bool
	// Numbers counts its active phone numbers: a campaign of a provider
	// that needs a caller id (wire.NeedsCallerID) cannot start without one.
	Numbers int
	// Rate is the provider's default calls per second, the placeholder of
	// the rate field when this configuration is selected.
	Rate string
}

// NoNumber reports whether a campaign of this configuration cannot start
// for want of a phone number to call from (the API's rule, wire's).
func (c configChoice) NoNumber() bool { return c.Numbers == 0 && wire.NeedsCallerID(c.Provider) }

// createdCampaign is what the page shows of a campaign created but not
// started.
type createdCampaign struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	State string `json:"state"`
}

// Link is the campaign's console page.
func (c createdCampaign) Link() string { return Prefix + "campaigns/" + strconv.FormatInt(c.ID, 10) }

// SelectedRate is the placeholder of the rate field: the default rate of
// the configuration the form has selected ("" when none is).
func (v newCampaignView) SelectedRate() string {
	for _, c := range v.Configs {
		if c.ID == v.Form.ConfigID {
			return c.Rate
		}
	}
	return ""
}

// newCampaignPage shows the empty form, the organization's default
// configuration selected, and its only workflow when it has one.
func newCampaignPage(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	v := newCampaignView{Form: defaultNewCampaignForm(), Problems: &ncProblems{}}
	if err := v.loadChoices(c, r, s); err != nil {
		return err
	}
	for _, cfg := range v.Configs {
		if cfg.Default {
			v.Form.ConfigID = cfg.ID
		}
	}
	if len(v.Configs) == 1 {
		v.Form.ConfigID = v.Configs[0].ID
	}
	if len(v.Workflows) == 1 {
		v.Form.WorkflowID = v.Workflows[0].ID
	}
	return c.render(w, r, s, "newcampaign.html", "New campaign", "new-campaign", v)
}

// newCampaignCreate creates the campaign of the posted form and starts it
// unless the form asked for a draft; then it goes to the campaign's page
// (303). Problems show the form again (422, or the API's status) with the
// values sent.
func newCampaignCreate(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	if err := r.ParseForm(); err != nil {
		c.renderError(w, r, s, http.StatusBadRequest, "This form could not be read. Reload the page and try again.")
		return nil
	}
	v := newCampaignView{Problems: &ncProblems{}}
	v.Form = parseNewCampaignForm(r.PostForm, v.Problems)
	if err := v.loadChoices(c, r, s); err != nil {
		return err
	}
	if v.Problems.Any() {
		return c.renderStatus(w, r, s, http.StatusUnprocessableEntity, "newcampaign.html", "New campaign", "new-campaign", v)
	}
	body, rowOf := v.Form.createBody()
	var created createdCampaign
	err := c.api(r, s).do(http.MethodPost, "/api/v1/campaign", body, &created)
	if status, shown := v.showAPIError(err, rowOf); shown {
		return c.renderStatus(w, r, s, status, "newcampaign.html", "New campaign", "new-campaign", v)
	} else if err != nil {
		return err
	}
	if v.Form.Start {
		err := c.api(r, s).do(http.MethodPost, "/api/v1/campaign/"+strconv.FormatInt(created.ID, 10)+"/start", nil, &created)
		var ae *apiError
		if errors.As(err, &ae) && ae.status != http.StatusUnauthorized && ae.status < 500 {
			v.Created, v.StartError = &created, ae.detail
			return c.render(w, r, s, "newcampaign.html", "Campaign created", "new-campaign", v)
		}
		if err != nil {
			return err
		}
	}
	http.Redirect(w, r, created.Link(), http.StatusSeeOther)
	return nil
}

// showAPIError places the problems of a create the API refused and
// returns the status to answer, and true; false when err is nil or is to
// be handled as any page's error (an ended session, a failure of ours). A
// refusal without a problem list (413, 507, ...) shows its detail at the
// top of the form.
func (v *newCampaignView) showAPIError(err error, rowOf []int) (int, bool) {
	var ae *apiError
	if !errors.As(err, &ae) || ae.status == http.StatusUnauthorized ||
		(ae.status >= 500 && ae.status != http.StatusInsufficientStorage) {
		return 0, false
	}
	if len(ae.problems) > 0 {
		v.Problems.placeAPIProblems(ae.problems, &v.Form, rowOf)
	} else {
		v.Problems.general(ae.detail)
	}
	return ae.status, true
}

// loadChoices fills the selects from the API's lists of workflows and
// telephony configurations.
func (v *newCampaignView) loadChoices(c *Console, r *http.Request, s *session) error {
	var wfs struct {
		Workflows []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		} `json:"workflows"`
	}
	if err := c.api(r, s).get("/api/v1/workflow", &wfs); err != nil {
		return err
	}
	for _, wf := range wfs.Workflows {
		v.Workflows = append(v.Workflows, workflowChoice{ID: strconv.FormatInt(wf.ID, 10), Name: wf.Name})
	}
	var cfgs struct {
		Configurations []struct {
			ID               int64  `json:"id"`
			Name             string `json:"name"`
			Provider         string `json:"provider"`
			Default          bool   `json:"is_default_outbound"`
			PhoneNumberCount int    `json:"phone_number_count"`
		} `json:"configurations"`
	}
	if err := c.api(r, s).get("/api/v1/organizations/telephony-configs", &cfgs); err != nil {
		return err
	}
	for _, cfg := range cfgs.Configurations {
		choice := configChoice{ID: strconv.FormatInt(cfg.ID, 10), Name: cfg.Name, Provider: cfg.Provider,
			Default: cfg.Default, Numbers: cfg.PhoneNumberCount}
		if spec, ok := carrier.Lookup(cfg.Provider); ok {
			choice.Rate = strconv.FormatFloat(spec.RatePerSecond, 'f', -1, 64)
		}
		v.Configs = append(v.Configs, choice)
	}
	return nil
}

// slotRowView is one row of the slot editor as the template draws it: its
// index in the form's field names (slot-I-start) and its number on the
// page (N = I+1).
type slotRowView struct {
	I, N int
	Row  slotRow
}

// SlotRows lists the form's slot rows.
func (v newCampaignView) SlotRows() []slotRowView {
	out := make([]slotRowView, len(v.Form.Slots))
	for i, row := range v.Form.Slots {
		out[i] = slotRowView{I: i, N: i + 1, Row: row}
	}
	return out
}

// NewSlot is the row slots.js adds (renumbered as it goes in): no day,
// 09:00 to 17:00.
func (v newCampaignView) NewSlot() slotRowView {
	return slotRowView{I: 0, N: 1, Row: slotRow{Start: "09:00", End: "17:00"}}
}
