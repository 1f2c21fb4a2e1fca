package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/wire"
)

// Users and API keys of an organization (API.md 17); admins only
// (roles.go).

// userJSON is a user as the API shows it.
type userJSON = wire.User

func userOut(u store.User) userJSON {
	return userJSON{ID: u.ID, Email: u.Email, Role: string(u.Role), Disabled: u.Disabled, TOTPEnabled: u.TOTPEnabled, CreatedAt: ts(u.CreatedAt)}
}

// SetPasswordPath is the console page a set-password link opens.
const SetPasswordPath = "/console/set-password"

// SetPasswordURL is the link that sets a user's password with token, under
// the service's public URL base.
func SetPasswordURL(base, token string) string {
	return strings.TrimRight(base, "/") + SetPasswordPath + "?token=" + url.QueryEscape(token)
}

// roleField reads the body's role (required when required): 422 at
// ["body","role"] for anything but the three.
func roleField(f fields, p *Problems, required bool) (store.Role, bool) {
	v, present := f.get("role")
	if !present {
		if required {
			f.missing("role")
		}
		return "", false
	}
	s, isString := v.(string)
	role, ok := store.ParseRole(s)
	if !isString || !ok {
		p.Add([]any{"body", "role"}, "enum", "Input should be 'viewer', 'operator' or 'admin'", v,
			map[string]any{"expected": "'viewer', 'operator' or 'admin'"})
		return "", false
	}
	return role, true
}

func (s *Server) listUsers(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	users, err := s.db.ListUsers(r.Context(), org)
	if err != nil {
		return err
	}
	out := make([]userJSON, len(users))
	for i, u := range users {
		out[i] = userOut(u)
	}
	writeJSON(w, http.StatusOK, map[string]any{"users": out})
	return nil
}

func (s *Server) createUser(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	body, err := readJSONObject(r)
	if err != nil {
		return err
	}
	var p Problems
	f := fields{obj: body, loc: []any{"body"}, p: &p}
	email, _, emailOK := f.String("email", true, false, 1, store.MaxEmailLength)
	if emailOK {
		if err := store.CheckEmail(email); err != nil {
			p.Add([]any{"body", "email"}, "value_error", "Value error, "+store.ErrorMessage(err), email, nil)
		}
	}
	role, _ := roleField(f, &p, true)
	if err := p.Err(); err != nil {
		return err
	}
	u, token, err := s.db.CreateUser(r.Context(), org, email, role)
	if err != nil {
		return err
	}
	out := userOut(u)
	out.SetPasswordURL = SetPasswordURL(s.publicURL, token)
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) patchUser(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, err := pathID(ps, "user_id")
	if err != nil {
		return err
	}
	body, err := readJSONObject(r)
	if err != nil {
		return err
	}
	var p Problems
	f := fields{obj: body, loc: []any{"body"}, p: &p}
	var rolePtr *store.Role
	if role, ok := roleField(f, &p, false); ok {
		rolePtr = &role
	}
	var disabledPtr *bool
	if d, present, ok := f.Bool("disabled", false); present && ok {
		disabledPtr = &d
	}
	if err := p.Err(); err != nil {
		return err
	}
	_, after, err := s.db.UpdateUser(r.Context(), org, id, rolePtr, disabledPtr)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, userOut(after))
	return nil
}

func (s *Server) deleteUser(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, err := pathID(ps, "user_id")
	if err != nil {
		return err
	}
	if _, err := s.db.DeleteUser(r.Context(), org, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// apiKeyJSON is an API key as the API shows it; Key only in the answer
// that created it.
type apiKeyJSON = wire.APIKey

func apiKeyOut(k store.APIKey) apiKeyJSON {
	out := apiKeyJSON{ID: k.ID, Name: k.Name, Role: string(k.Role), Prefix: k.Prefix, CreatedAt: ts(k.CreatedAt)}
	if k.LastUsedAt != nil {
		v := ts(*k.LastUsedAt)
		out.LastUsedAt = &v
	}
	return out
}

func (s *Server) listAPIKeys(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	keys, err := s.db.ListOrgAPIKeys(r.Context(), org)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(keys))
	for i, k := range keys {
		j := apiKeyOut(k)
		// Listed with last_used_at always present (null: never used).
		out[i] = map[string]any{"id": j.ID, "name": j.Name, "role": j.Role, "prefix": j.Prefix,
			"created_at": j.CreatedAt, "last_used_at": j.LastUsedAt}
	}
	writeJSON(w, http.StatusOK, map[string]any{"api_keys": out})
	return nil
}

func (s *Server) createAPIKey(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	body, err := readJSONObject(r)
	if err != nil {
		return err
	}
	var p Problems
	f := fields{obj: body, loc: []any{"body"}, p: &p}
	name, _, _ := f.Name("name", true, false, 1, 255)
	role, _ := roleField(f, &p, true)
	if err := p.Err(); err != nil {
		return err
	}
	k, secret, err := s.db.CreateOrgAPIKey(r.Context(), org, name, role)
	if err != nil {
		return err
	}
	out := apiKeyOut(*k)
	out.LastUsedAt = nil
	out.Key = string(secret)
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) deleteAPIKey(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, err := pathID(ps, "key_id")
	if err != nil {
		return err
	}
	if err := s.db.RevokeOrgAPIKey(r.Context(), org, id); err != nil {
		return err
	}
	// Its event streams end within the stream guard's next check
	// (streamguard.go), on every node.
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// securityJSON is the organization's security settings.
type securityJSON = wire.Security

func (s *Server) getSecurity(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	sec, err := s.db.OrganizationSecurity(r.Context(), org)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, securityJSON{RequireTOTP: sec.RequireTOTP})
	return nil
}

func (s *Server) putSecurity(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	body, err := readJSONObject(r)
	if err != nil {
		return err
	}
	var p Problems
	f := fields{obj: body, loc: []any{"body"}, p: &p}
	req, _, _ := f.Bool("require_totp", true)
	if err := p.Err(); err != nil {
		return err
	}
	_, after, err := s.db.SetOrganizationSecurity(r.Context(), org, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, securityJSON{RequireTOTP: after.RequireTOTP})
	return nil
}
