package console

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/wire"
)

// The users page (API.md 17), for admins: the organization's users with
// their role, whether they are disabled and have a second factor; inviting
// one (email and role), which shows its one-time set-password link; a
// user's role, disabling and enabling, deleting after a confirmation page;
// and the organization's "Require two-factor authentication" toggle. Every
// form is one API call, and the API decides: a role that may not is
// refused there (403), the page only leaves out what it would refuse.

// usersPath is the users page.
const usersPath = Prefix + "users"

// usersView is the data of users.html.
type usersView struct {
	Users []wire.User
	// Security is nil when it could not be read (the toggle is left out).
	Security *wire.Security
	// Roles are the roles a user may have, from the least allowed.
	Roles []store.Role
	// Self is the signed-in user's id (0: signed in with a key).
	Self int64
	// Invite is the invite form's values and problems.
	Invite inviteForm
	// Invited is the user just invited, with its set-password link,
	// shown this once.
	Invited *wire.User
	Notice  string
}

// inviteForm is the invite form's values and problems.
type inviteForm struct {
	Email, Role string
	Errors      formErrors
}

// userNotices are the notices a redirect back to the list names.
var userNotices = map[string]string{
	"changed":  "The user was changed.",
	"deleted":  "The user was deleted: their sessions have ended.",
	"security": "The organization's security settings were saved.",
}

// usersPage shows the users.
func usersPage(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	v := usersView{Invite: inviteForm{Role: string(store.RoleViewer)}, Notice: userNotices[r.URL.Query().Get("notice")]}
	return c.renderUsers(w, r, s, http.StatusOK, v)
}

// renderUsers renders the list into v with status.
func (c *Console) renderUsers(w http.ResponseWriter, r *http.Request, s *session, status int, v usersView) error {
	api := c.api(r, s)
	var list wire.UserList
	if err := api.get("/api/v1/users", &list); err != nil {
		return err
	}
	var sec wire.Security
	if err := api.get("/api/v1/organizations/security", &sec); err == nil {
		v.Security = &sec
	} else if !isAPIStatus(err, http.StatusForbidden) {
		return err
	}
	v.Users, v.Roles, v.Self = list.Users, store.Roles(), s.UserID
	return c.renderStatus(w, r, s, status, "users.html", "Users", "users", v)
}

// userInvite creates a user and shows its set-password link once.
func userInvite(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	f := inviteForm{Email: strings.TrimSpace(r.PostFormValue("email")), Role: r.PostFormValue("role")}
	var u wire.User
	err := c.api(r, s).do(http.MethodPost, "/api/v1/users", map[string]any{"email": f.Email, "role": f.Role}, &u)
	if err == nil {
		return c.renderUsers(w, r, s, http.StatusOK, usersView{Invited: &u, Invite: inviteForm{Role: string(store.RoleViewer)}})
	}
	fe, status, ok := formProblems(err, map[string]bool{"email": true, "role": true})
	if !ok {
		return err
	}
	f.Errors = fe
	return c.renderUsers(w, r, s, status, usersView{Invite: f})
}

// userChange changes a user's role (field role) or disables or enables
// it (field disabled, "true" or "false").
func userChange(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := pathID(r, "id")
	if !ok {
		c.renderError(w, r, s, http.StatusNotFound, "There is no such user.")
		return nil
	}
	body := map[string]any{}
	if role := r.PostFormValue("role"); role != "" {
		body["role"] = role
	}
	switch r.PostFormValue("disabled") {
	case "true":
		body["disabled"] = true
	case "false":
		body["disabled"] = false
	}
	err := c.api(r, s).do(http.MethodPatch, "/api/v1/users/"+strconv.FormatInt(id, 10), body, nil)
	if err != nil {
		fe, status, ok := formProblems(err, nil)
		if !ok {
			return err
		}
		return c.renderUsers(w, r, s, status, usersView{Invite: inviteForm{Role: string(store.RoleViewer)},
			Notice: "The user was not changed: " + strings.Join(append(fe.Form, mapValues(fe.Fields)...), " ")})
	}
	http.Redirect(w, r, usersPath+"?notice=changed", http.StatusSeeOther)
	return nil
}

// userDeleteConfirm asks before deleting a user.
func userDeleteConfirm(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	u, err := c.findUser(r, s)
	if err != nil || u == nil {
		if err == nil {
			c.renderError(w, r, s, http.StatusNotFound, "There is no such user.")
		}
		return err
	}
	return c.render(w, r, s, "telephony_confirm.html", "Delete a user", "users", confirmPage{
		Need: "DELETE /api/v1/users/:user_id", Heading: "Delete " + u.Email + "?",
		Message: "They can no longer sign in, and their sessions end at once. The audit trail keeps what they did. This cannot be undone.",
		Action:  usersPath + "/" + strconv.FormatInt(u.ID, 10) + "/delete", Button: "Delete the user", Back: usersPath,
	})
}

// userDelete deletes a user.
func userDelete(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	id, ok := pathID(r, "id")
	if !ok {
		c.renderError(w, r, s, http.StatusNotFound, "There is no such user.")
		return nil
	}
	if err := c.api(r, s).do(http.MethodDelete, "/api/v1/users/"+strconv.FormatInt(id, 10), nil, nil); err != nil {
		return err
	}
	http.Redirect(w, r, usersPath+"?notice=deleted", http.StatusSeeOther)
	return nil
}

// securitySave sets whether the organization requires a second factor
// (the checkbox require_totp).
func securitySave(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	body := wire.Security{RequireTOTP: r.PostFormValue("require_totp") == "true"}
	if err := c.api(r, s).do(http.MethodPut, "/api/v1/organizations/security", body, nil); err != nil {
		return err
	}
	http.Redirect(w, r, usersPath+"?notice=security", http.StatusSeeOther)
	return nil
}

// findUser returns the user of the path's id, nil when the organization
// has none (the API has no GET of one user: the list has them all).
func (c *Console) findUser(r *http.Request, s *session) (*wire.User, error) {
	id, ok := pathID(r, "id")
	if !ok {
		return nil, nil
	}
	var list wire.UserList
	if err := c.api(r, s).get("/api/v1/users", &list); err != nil {
		return nil, err
	}
	for i := range list.Users {
		if list.Users[i].ID == id {
			return &list.Users[i], nil
		}
	}
	return nil, nil
}

// formProblems is formErrorsOf for the forms of this page and the API
// keys page (a problem at a field of shown goes next to it), except a 403,
// which is the console's refusal page like any other.
func formProblems(err error, shown map[string]bool) (formErrors, int, bool) {
	if isAPIStatus(err, http.StatusForbidden) {
		return formErrors{}, 0, false
	}
	return formErrorsOf(err, suppressKey, func(k string) bool { return shown[k] })
}

// isAPIStatus reports whether err is an API answer of status.
func isAPIStatus(err error, status int) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.status == status
}
