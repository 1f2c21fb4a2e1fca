package console

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/outdial/outdial/web/wire"
)

// Telephony configurations (API.md 2, docs/api.md 2): the list with the
// default-outbound toggle, the create and edit forms built from the
// providers' field list (telephony_form.go), the phone numbers of a
// configuration on its edit page (telephony_numbers.go), and deletion
// behind a confirmation page (no JavaScript dialog). Every change is a
// server-rendered form that posts to a console route, which calls the API
// in process and answers 303 back to a page (a failed one renders the form
// again with the API's problems beside their fields).

// configsAPI is the API's path of the telephony configurations.
const configsAPI = "/api/v1/organizations/telephony-configs"

// telephonyNotices are the messages a page shows after a change, by the
// notice query parameter of the redirect that follows it.
var telephonyNotices = map[string]string{
	"created":        "The configuration was created. Add its phone numbers below.",
	"saved":          "The configuration was saved.",
	"deleted":        "The configuration was deleted.",
	"default":        "The default configuration for outbound calls was changed.",
	"number-added":   "The phone number was added.",
	"number-changed": "The phone number was changed.",
	"number-deleted": "The phone number was deleted.",
}

// configRow is one configuration of the list.
type configRow struct {
	wire.TelephonyConfigItem
	ProviderName string
}

// configList is the data of telephony.html.
type configList struct {
	Configs []configRow
	Notice  string
}

// telephonyList lists the organization's configurations.
func telephonyList(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	api := c.api(r, s)
	providers, err := api.providers()
	if err != nil {
		return err
	}
	var page wire.TelephonyConfigList
	if err := api.get(configsAPI, &page); err != nil {
		return err
	}
	data := configList{Notice: telephonyNotices[r.URL.Query().Get("notice")]}
	for _, cfg := range page.Configurations {
		row := configRow{TelephonyConfigItem: cfg, ProviderName: cfg.Provider}
		if p, ok := findProvider(providers, cfg.Provider); ok {
			row.ProviderName = p.DisplayName
		}
		data.Configs = append(data.Configs, row)
	}
	return c.render(w, r, s, "telephony.html", "Telephony", "telephony", data)
}

// telephonyNew shows the create form, with the provider ?provider= names
// selected (else Twilio, else the first).
func telephonyNew(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	providers, err := c.api(r, s).providers()
	if err != nil {
		return err
	}
	p := defaultProvider(providers, r.URL.Query().Get("provider"))
	form := configForm{Provider: p.Provider, Choices: buildChoices(providers, p.Provider, fieldValues{}, formErrors{})}
	return c.renderStatus(w, r, s, http.StatusOK, "telephony_form.html", "New telephony configuration", "telephony", form)
}

// defaultProvider returns the provider named name, else Twilio, else the
// first.
func defaultProvider(providers []providerJSON, name string) providerJSON {
	if p, ok := findProvider(providers, name); ok {
		return p
	}
	if p, ok := findProvider(providers, "twilio"); ok {
		return p
	}
	return providers[0]
}

// telephonyCreate creates a configuration from the create form and goes on
// to its edit page (to add phone numbers); a refused one shows the form
// again with the problems, the values typed (secrets excepted) kept.
func telephonyCreate(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	api := c.api(r, s)
	providers, err := api.providers()
	if err != nil {
		return err
	}
	name := strings.TrimSpace(r.PostFormValue("name"))
	isDefault := r.PostFormValue("is_default_outbound") != ""
	p, known := findProvider(providers, r.PostFormValue("provider"))
	var fe formErrors
	status := http.StatusUnprocessableEntity
	if known {
		body := map[string]any{"name": name, "is_default_outbound": isDefault, "config": configBody(p, r.PostForm, true)}
		var out wire.TelephonyConfig
		err := api.do(http.MethodPost, configsAPI, body, &out)
		if err == nil {
			http.Redirect(w, r, fmt.Sprintf("%stelephony/%d?notice=created", Prefix, out.ID), http.StatusSeeOther)
			return nil
		}
		var ok bool
		if fe, status, ok = formErrorsOf(err, nil, configFieldShown(p)); !ok {
			return err
		}
		nameConflict(&fe, status)
	} else {
		p = defaultProvider(providers, "")
		fe.Form = []string{"Choose one of the providers."}
	}
	vals, retype := postedValues(p, r.PostForm)
	form := configForm{Name: name, Default: isDefault, Provider: p.Provider, Errors: fe, Retype: retype,
		Choices: buildChoices(providers, p.Provider, fieldValues{values: vals}, fe)}
	return c.renderStatus(w, r, s, status, "telephony_form.html", "New telephony configuration", "telephony", form)
}

// configFieldShown reports whether the form shows a field of the key: the
// name, the default box, or one of p's fields.
func configFieldShown(p providerJSON) func(string) bool {
	return func(key string) bool {
		if key == "name" || key == "is_default_outbound" {
			return true
		}
		if f, ok := strings.CutPrefix(key, "config."); ok {
			for _, pf := range p.Fields {
				if pf.Name == f {
					return true
				}
			}
		}
		return false
	}
}

// nameConflict moves a 409 (the name another configuration has) next to
// the name field.
func nameConflict(fe *formErrors, status int) {
	if status == http.StatusConflict && len(fe.Form) == 1 && len(fe.Fields) == 0 {
		fe.Fields = map[string]string{"name": problemText(fe.Form[0])}
		fe.Form = nil
	}
}

// pathID reads the path value name as an id; ok is false when it is not a
// positive integer.
func pathID(r *http.Request, name string) (id int64, ok bool) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	return id, err == nil && id > 0
}

// configPath is the API's path of configuration id.
func configPath(id int64) string { return configsAPI + "/" + strconv.FormatInt(id, 10) }

// loadConfig fetches configuration id and its provider.
func loadConfig(api apiClient, id int64) (wire.TelephonyConfig, providerJSON, error) {
	var cfg wire.TelephonyConfig
	if err := api.get(configPath(id), &cfg); err != nil {
		return cfg, providerJSON{}, err
	}
	providers, err := api.providers()
	if err != nil {
		return cfg, providerJSON{}, err
	}
	p, ok := findProvider(providers, cfg.Provider)
	if !ok {
		return cfg, p, fmt.Errorf("configuration %d: provider %q is not in the API's list", id, cfg.Provider)
	}
	return cfg, p, nil
}

// noSuchConfig answers the page of an id that is not one.
func (c *Console) noSuchConfig(w http.ResponseWriter, r *http.Request, s *session) error {
	c.renderError(w, r, s, http.StatusNotFound, "There is no such telephony configuration.")
	return nil
}

// telephonyEdit shows a configuration's edit form and its phone numbers.
func telephonyEdit(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := pathID(r, "id")
	if !ok {
		return c.noSuchConfig(w, r, s)
	}
	cfg, p, err := loadConfig(c.api(r, s), id)
	if err != nil {
		return err
	}
	form := configForm{ID: id, Name: cfg.Name, Default: cfg.IsDefaultOutbound, Provider: p.Provider,
		Notice:  telephonyNotices[r.URL.Query().Get("notice")],
		Choices: buildChoices([]providerJSON{p}, p.Provider, fieldValues{values: cfg.Credentials, masked: cfg.Credentials}, formErrors{})}
	return c.renderEdit(w, r, s, http.StatusOK, cfg, form, numberForm{})
}

// renderEdit renders the edit page of cfg with form, and the phone numbers
// section with the add form nf.
func (c *Console) renderEdit(w http.ResponseWriter, r *http.Request, s *session, status int, cfg wire.TelephonyConfig, form configForm, nf numberForm) error {
	numbers, err := listNumbers(c.api(r, s), cfg.ID)
	if err != nil {
		return err
	}
	form.Numbers = numbersSection{ConfigID: cfg.ID, Numbers: numbers, Add: nf}
	return c.renderStatus(w, r, s, status, "telephony_form.html", cfg.Name+" · Telephony", "telephony", form)
}

// telephonyUpdate saves the edit form: name, default box and the provider
// fields; a secret left empty is not sent, so the stored one stays.
func telephonyUpdate(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := pathID(r, "id")
	if !ok {
		return c.noSuchConfig(w, r, s)
	}
	api := c.api(r, s)
	cfg, p, err := loadConfig(api, id)
	if err != nil {
		return err
	}
	name := strings.TrimSpace(r.PostFormValue("name"))
	isDefault := r.PostFormValue("is_default_outbound") != ""
	body := map[string]any{"name": name, "is_default_outbound": isDefault, "config": configBody(p, r.PostForm, false)}
	err = api.do(http.MethodPut, configPath(id), body, nil)
	if err == nil {
		http.Redirect(w, r, fmt.Sprintf("%stelephony/%d?notice=saved", Prefix, id), http.StatusSeeOther)
		return nil
	}
	fe, status, ok := formErrorsOf(err, nil, configFieldShown(p))
	if !ok {
		return err
	}
	nameConflict(&fe, status)
	vals, retype := postedValues(p, r.PostForm)
	form := configForm{ID: id, Name: name, Default: isDefault, Provider: p.Provider, Errors: fe, Retype: retype,
		Choices: buildChoices([]providerJSON{p}, p.Provider, fieldValues{values: vals, masked: cfg.Credentials}, fe)}
	return c.renderEdit(w, r, s, status, cfg, form, numberForm{})
}

// telephonyDefault sets or unsets a configuration as the organization's
// default for outbound calls (form field default: "true" or "false").
func telephonyDefault(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := pathID(r, "id")
	if !ok {
		return c.noSuchConfig(w, r, s)
	}
	on := r.PostFormValue("default") == "true"
	if err := c.api(r, s).do(http.MethodPut, configPath(id), map[string]any{"is_default_outbound": on}, nil); err != nil {
		return err
	}
	http.Redirect(w, r, Prefix+"telephony?notice=default", http.StatusSeeOther)
	return nil
}

// confirmPage is the data of telephony_confirm.html: a question, the form that
// answers yes, and the way back.
type confirmPage struct {
	Heading, Message string
	Action, Button   string
	Back             string
	Error            string
	// Need is the API operation the button calls (for the template
	// function can: a role that may not gets no button).
	Need string
}

// deleteConfigConfirm is the confirmation page of deleting cfg.
func deleteConfigConfirm(cfg wire.TelephonyConfig) confirmPage {
	msg := fmt.Sprintf("The configuration %q will be deleted", cfg.Name)
	if cfg.PhoneNumberCount > 0 {
		msg += fmt.Sprintf(" with its phone numbers (%d active)", cfg.PhoneNumberCount)
	}
	return confirmPage{Need: "DELETE /api/v1/organizations/telephony-configs/:config_id", Heading: "Delete " + cfg.Name + "?", Message: msg + ". This cannot be undone.",
		Action: fmt.Sprintf("%stelephony/%d/delete", Prefix, cfg.ID), Button: "Delete configuration",
		Back: fmt.Sprintf("%stelephony/%d", Prefix, cfg.ID)}
}

// telephonyDeleteConfirm asks whether to delete a configuration.
func telephonyDeleteConfirm(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := pathID(r, "id")
	if !ok {
		return c.noSuchConfig(w, r, s)
	}
	var cfg wire.TelephonyConfig
	if err := c.api(r, s).get(configPath(id), &cfg); err != nil {
		return err
	}
	return c.render(w, r, s, "telephony_confirm.html", "Delete "+cfg.Name, "telephony", deleteConfigConfirm(cfg))
}

// telephonyDelete deletes a configuration; one still in use (409) shows
// the confirmation page again with the reason.
func telephonyDelete(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := pathID(r, "id")
	if !ok {
		return c.noSuchConfig(w, r, s)
	}
	api := c.api(r, s)
	var cfg wire.TelephonyConfig
	if err := api.get(configPath(id), &cfg); err != nil {
		return err
	}
	err := api.do(http.MethodDelete, configPath(id), nil, nil)
	if err == nil {
		http.Redirect(w, r, Prefix+"telephony?notice=deleted", http.StatusSeeOther)
		return nil
	}
	fe, status, ok := formErrorsOf(err, nil, nil)
	if !ok || status != http.StatusConflict {
		return err
	}
	page := deleteConfigConfirm(cfg)
	page.Error = strings.Join(fe.Form, " ")
	return c.renderStatus(w, r, s, status, "telephony_confirm.html", "Delete "+cfg.Name, "telephony", page)
}
