package console

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/wire"
)

// The API keys page (API.md 17), for admins: the organization's keys
// (name, role, prefix, created, last used; never a whole key), creating
// one (name and role), which shows the key this once, and revoking one
// after a confirmation page.

// apiKeysPath is the API keys page.
const apiKeysPath = Prefix + "api-keys"

// apiKeysView is the data of apikeys.html.
type apiKeysView struct {
	Keys  []wire.APIKey
	Roles []store.Role
	// Self is the key the session was signed in with (0: a user's).
	Self   int64
	Create apiKeyForm
	// Created is the key just created, with the whole key, shown once.
	Created *wire.APIKey
	Notice  string
}

// apiKeyForm is the create form's values and problems.
type apiKeyForm struct {
	Name, Role string
	Errors     formErrors
}

// apiKeysPage shows the keys.
func apiKeysPage(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	v := apiKeysView{Create: apiKeyForm{Role: string(store.RoleViewer)}}
	if r.URL.Query().Get("notice") == "revoked" {
		v.Notice = "The key was revoked: it no longer works, and its sessions have ended."
	}
	return c.renderAPIKeys(w, r, s, http.StatusOK, v)
}

// renderAPIKeys renders the list into v with status.
func (c *Console) renderAPIKeys(w http.ResponseWriter, r *http.Request, s *session, status int, v apiKeysView) error {
	var list wire.APIKeyList
	if err := c.api(r, s).get("/api/v1/api-keys", &list); err != nil {
		return err
	}
	v.Keys, v.Roles, v.Self = list.APIKeys, store.Roles(), s.APIKeyID
	return c.renderStatus(w, r, s, status, "apikeys.html", "API keys", "api-keys", v)
}

// apiKeyCreate creates a key and shows it once.
func apiKeyCreate(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	f := apiKeyForm{Name: strings.TrimSpace(r.PostFormValue("name")), Role: r.PostFormValue("role")}
	var k wire.APIKey
	err := c.api(r, s).do(http.MethodPost, "/api/v1/api-keys", map[string]any{"name": f.Name, "role": f.Role}, &k)
	if err == nil {
		return c.renderAPIKeys(w, r, s, http.StatusOK, apiKeysView{Created: &k, Create: apiKeyForm{Role: string(store.RoleViewer)}})
	}
	fe, status, ok := formProblems(err, map[string]bool{"name": true, "role": true})
	if !ok {
		return err
	}
	f.Errors = fe
	return c.renderAPIKeys(w, r, s, status, apiKeysView{Create: f})
}

// apiKeyRevokeConfirm asks before revoking a key.
func apiKeyRevokeConfirm(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := pathID(r, "id")
	var list wire.APIKeyList
	if ok {
		if err := c.api(r, s).get("/api/v1/api-keys", &list); err != nil {
			return err
		}
	}
	for _, k := range list.APIKeys {
		if k.ID != id {
			continue
		}
		msg := "Programs using it get 401 from now on, and sessions signed in with it end at once. This cannot be undone."
		if k.ID == s.APIKeyID {
			msg = "You are signed in with this key: revoking it signs you out. " + msg
		}
		return c.render(w, r, s, "telephony_confirm.html", "Revoke an API key", "api-keys", confirmPage{
			Need: "DELETE /api/v1/api-keys/:key_id", Heading: "Revoke the key " + k.Name + " (" + k.Prefix + "…)?", Message: msg,
			Action: apiKeysPath + "/" + strconv.FormatInt(k.ID, 10) + "/revoke", Button: "Revoke the key", Back: apiKeysPath,
		})
	}
	c.renderError(w, r, s, http.StatusNotFound, "There is no such API key.")
	return nil
}

// apiKeyRevoke revokes a key.
func apiKeyRevoke(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := pathID(r, "id")
	if !ok {
		c.renderError(w, r, s, http.StatusNotFound, "There is no such API key.")
		return nil
	}
	if err := c.api(r, s).do(http.MethodDelete, "/api/v1/api-keys/"+strconv.FormatInt(id, 10), nil, nil); err != nil {
		return err
	}
	http.Redirect(w, r, apiKeysPath+"?notice=revoked", http.StatusSeeOther)
	return nil
}
