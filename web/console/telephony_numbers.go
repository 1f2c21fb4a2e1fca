package console

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/outdial/outdial/web/wire"
)

// A configuration's phone numbers (docs/api.md 2.9), on its edit page: the
// list, the add form, activate/deactivate, the default caller id, and
// deletion behind a confirmation page.

// numbersSection is the phone numbers part of the edit page.
type numbersSection struct {
	ConfigID int64
	Numbers  []wire.PhoneNumber
	Add      numberForm
}

// numberForm is the add form's values and problems.
type numberForm struct {
	Address, CountryCode, Label string
	DefaultCallerID             bool
	Errors                      formErrors
}

// numbersPath is the API's path of configuration id's phone numbers.
func numbersPath(id int64) string { return configPath(id) + "/phone-numbers" }

// numberPath is the API's path of phone number nid of configuration id.
func numberPath(id, nid int64) string { return fmt.Sprintf("%s/%d", numbersPath(id), nid) }

// editPath is the console's edit page of configuration id, with a notice.
func editPath(id int64, notice string) string {
	return fmt.Sprintf("%stelephony/%d?notice=%s#numbers", Prefix, id, notice)
}

// listNumbers fetches configuration id's phone numbers.
func listNumbers(api apiClient, id int64) ([]wire.PhoneNumber, error) {
	var out wire.PhoneNumberList
	err := api.get(numbersPath(id), &out)
	return out.PhoneNumbers, err
}

// numberFields are the add form's fields (problems elsewhere are shown
// above the form).
var numberFields = map[string]bool{"address": true, "country_code": true, "label": true, "is_default_caller_id": true}

// numberAdd adds a phone number from the add form; a refused one shows the
// edit page again with the problems next to the add form's fields.
func numberAdd(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := pathID(r, "id")
	if !ok {
		return c.noSuchConfig(w, r, s)
	}
	nf := numberForm{
		Address:         strings.TrimSpace(r.PostFormValue("address")),
		CountryCode:     strings.TrimSpace(r.PostFormValue("country_code")),
		Label:           strings.TrimSpace(r.PostFormValue("label")),
		DefaultCallerID: r.PostFormValue("is_default_caller_id") != "",
	}
	body := map[string]any{"address": nf.Address, "is_default_caller_id": nf.DefaultCallerID}
	if nf.CountryCode != "" {
		body["country_code"] = nf.CountryCode
	}
	if nf.Label != "" {
		body["label"] = nf.Label
	}
	api := c.api(r, s)
	err := api.do(http.MethodPost, numbersPath(id), body, nil)
	if err == nil {
		http.Redirect(w, r, editPath(id, "number-added"), http.StatusSeeOther)
		return nil
	}
	fe, status, ok := formErrorsOf(err, nil, func(k string) bool { return numberFields[k] })
	if !ok || status == http.StatusNotFound {
		return err
	}
	if status == http.StatusConflict && len(fe.Form) == 1 {
		fe = formErrors{Fields: map[string]string{"address": problemText(fe.Form[0])}}
	}
	nf.Errors = fe
	cfg, p, err := loadConfig(api, id)
	if err != nil {
		return err
	}
	form := configForm{ID: id, Name: cfg.Name, Default: cfg.IsDefaultOutbound, Provider: p.Provider,
		Choices: buildChoices([]providerJSON{p}, p.Provider, fieldValues{values: cfg.Credentials, masked: cfg.Credentials}, formErrors{})}
	return c.renderEdit(w, r, s, status, cfg, form, nf)
}

// numberChange applies a number's button (form field change): "activate",
// "deactivate" or "default-caller" (makes it the configuration's default
// caller id).
func numberChange(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := pathID(r, "id")
	nid, nok := pathID(r, "nid")
	if !ok || !nok {
		return c.noSuchNumber(w, r, s)
	}
	var body map[string]any
	switch r.PostFormValue("change") {
	case "activate":
		body = map[string]any{"is_active": true}
	case "deactivate":
		body = map[string]any{"is_active": false}
	case "default-caller":
		body = map[string]any{"is_default_caller_id": true}
	default:
		c.renderError(w, r, s, http.StatusBadRequest, "This form asked for a change the console does not know.")
		return nil
	}
	if err := c.api(r, s).do(http.MethodPut, numberPath(id, nid), body, nil); err != nil {
		return err
	}
	http.Redirect(w, r, editPath(id, "number-changed"), http.StatusSeeOther)
	return nil
}

// noSuchNumber answers the page of ids that are not a phone number's.
func (c *Console) noSuchNumber(w http.ResponseWriter, r *http.Request, s *session) error {
	c.renderError(w, r, s, http.StatusNotFound, "There is no such phone number.")
	return nil
}

// findNumber fetches phone number nid of configuration id; ok is false when
// the configuration has no such number.
func findNumber(api apiClient, id, nid int64) (wire.PhoneNumber, bool, error) {
	list, err := listNumbers(api, id)
	if err != nil {
		return wire.PhoneNumber{}, false, err
	}
	for _, n := range list {
		if n.ID == nid {
			return n, true, nil
		}
	}
	return wire.PhoneNumber{}, false, nil
}

// deleteNumberConfirm is the confirmation page of deleting number n of
// configuration id.
func deleteNumberConfirm(id int64, n wire.PhoneNumber) confirmPage {
	return confirmPage{Need: "DELETE /api/v1/organizations/telephony-configs/:config_id/phone-numbers/:phone_number_id",
		Heading: "Delete " + n.AddressNormalized + "?",
		Message: fmt.Sprintf("The phone number %s will be deleted from this configuration; campaigns no longer call from it.", n.AddressNormalized),
		Action:  fmt.Sprintf("%stelephony/%d/numbers/%d/delete", Prefix, id, n.ID), Button: "Delete phone number",
		Back: fmt.Sprintf("%stelephony/%d#numbers", Prefix, id)}
}

// numberDeleteConfirm asks whether to delete a phone number.
func numberDeleteConfirm(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := pathID(r, "id")
	nid, nok := pathID(r, "nid")
	if !ok || !nok {
		return c.noSuchNumber(w, r, s)
	}
	n, found, err := findNumber(c.api(r, s), id, nid)
	if err != nil {
		return err
	}
	if !found {
		return c.noSuchNumber(w, r, s)
	}
	return c.render(w, r, s, "telephony_confirm.html", "Delete "+n.AddressNormalized, "telephony", deleteNumberConfirm(id, n))
}

// numberDelete deletes a phone number and goes back to its configuration.
func numberDelete(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := pathID(r, "id")
	nid, nok := pathID(r, "nid")
	if !ok || !nok {
		return c.noSuchNumber(w, r, s)
	}
	if err := c.api(r, s).do(http.MethodDelete, numberPath(id, nid), nil, nil); err != nil {
		return err
	}
	http.Redirect(w, r, editPath(id, "number-deleted"), http.StatusSeeOther)
	return nil
}
