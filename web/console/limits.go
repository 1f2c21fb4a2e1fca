package console

import (
	"net/http"
	"strconv"
	"strings"
)

// The organization's limit on calls in flight (API.md 19), a form on the
// compliance page: PUT /api/v1/organizations/limits. Empty: no limit.

const limitsAPI = "/api/v1/organizations/limits"

// limitsView is the form's state.
type limitsView struct {
	MaxConcurrentCalls string // "" when none
	Error              string
}

// limitsOf reads the organization's limit for the page.
func (c *Console) limitsOf(r *http.Request, s *session) (limitsView, error) {
	var l struct {
		MaxConcurrentCalls *int `json:"max_concurrent_calls"`
	}
	if err := c.api(r, s).get(limitsAPI, &l); err != nil {
		return limitsView{}, err
	}
	var v limitsView
	if l.MaxConcurrentCalls != nil {
		v.MaxConcurrentCalls = strconv.Itoa(*l.MaxConcurrentCalls)
	}
	return v, nil
}

// limitsSave PUTs the form's limit; a refused one shows the page again
// with the value sent and the API's message.
func limitsSave(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	raw := strings.TrimSpace(r.PostFormValue("max_concurrent_calls"))
	var value any // null: no limit
	if raw != "" {
		value = raw
	}
	api := c.api(r, s)
	err := api.do(http.MethodPut, limitsAPI, map[string]any{"max_concurrent_calls": value}, nil)
	if err == nil {
		http.Redirect(w, r, Prefix+"compliance?notice=limits#limits", http.StatusSeeOther)
		return nil
	}
	fe, status, ok := formErrorsOf(err, policyKey, func(k string) bool { return k == "max_concurrent_calls" })
	if !ok {
		return err
	}
	var p policyJSON
	if err := api.get(policyAPI, &p); err != nil {
		return err
	}
	lv := limitsView{MaxConcurrentCalls: raw, Error: fe.Field("max_concurrent_calls")}
	if lv.Error == "" {
		lv.Error = strings.Join(fe.Form, " ")
	}
	return c.renderCompliancePage(w, r, s, status, p, formOf(p), "", &lv)
}
