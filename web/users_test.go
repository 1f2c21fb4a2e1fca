package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/console"
)

const (
	usersPath    = "/api/v1/users"
	apiKeysPath  = "/api/v1/api-keys"
	securityPath = "/api/v1/organizations/security"
)

// TestUsers: admins create users (the set-password link once), change
// their role or disable them, delete them; emails are unique per
// organization in any case; another organization's users are 404.
func TestUsers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.a(http.MethodPost, usersPath, map[string]any{"email": "Ana@Example.com", "role": "operator"})
	wantStatus(t, r, http.StatusOK)
	u := r.obj(t)
	link, _ := u["set_password_url"].(string)
	if !strings.Contains(link, "/console/set-password?token=") {
		t.Fatalf("set_password_url = %q", link)
	}
	e.addSecret(link[strings.Index(link, "token=")+len("token="):])
	if u["email"] != "Ana@Example.com" || u["role"] != "operator" || u["disabled"] != false || u["totp_enabled"] != false {
		t.Errorf("created user = %v", u)
	}
	uid := id(t, u, "id")

	list := objects(t, e.a(http.MethodGet, usersPath, nil).obj(t)["users"])
	if len(list) != 1 || id(t, list[0], "id") != uid {
		t.Fatalf("users = %v, want the one created", list)
	}
	if _, has := list[0]["set_password_url"]; has {
		t.Errorf("listed user shows set_password_url: %v", list[0])
	}

	wantDetailContains(t, e.a(http.MethodPost, usersPath, map[string]any{"email": "ana@EXAMPLE.com", "role": "viewer"}),
		http.StatusConflict, "exists")
	// Sign-in takes an email alone: it names one user of one organization.
	wantDetailContains(t, e.b(http.MethodPost, usersPath, map[string]any{"email": "ANA@example.com", "role": "viewer"}),
		http.StatusConflict, "exists")

	ps := wantProblems(t, e.a(http.MethodPost, usersPath, map[string]any{"email": "bo@example.com", "role": "owner"}), "body.role enum")
	if p := findProblem(t, ps, "body.role"); p.Input != "owner" {
		t.Errorf("role problem input = %v", p.Input)
	}
	wantProblems(t, e.a(http.MethodPost, usersPath, map[string]any{"email": "not an address", "role": "viewer"}), "body.email value_error")
	wantProblems(t, e.a(http.MethodPost, usersPath, map[string]any{}), "body.email missing", "body.role missing")

	r = e.a(http.MethodPatch, userPath(uid), map[string]any{"role": "admin"})
	wantStatus(t, r, http.StatusOK)
	if got := r.obj(t); got["role"] != "admin" || got["disabled"] != false {
		t.Errorf("after PATCH role: %v", got)
	}
	r = e.a(http.MethodPatch, userPath(uid), map[string]any{"disabled": true})
	wantStatus(t, r, http.StatusOK)
	if got := r.obj(t); got["role"] != "admin" || got["disabled"] != true {
		t.Errorf("after PATCH disabled: %v", got)
	}
	wantProblems(t, e.a(http.MethodPatch, userPath(uid), map[string]any{"role": 3, "disabled": "maybe"}), "body.role enum", "body.disabled bool_parsing")

	wantDetailContains(t, e.b(http.MethodPatch, userPath(uid), map[string]any{"role": "viewer"}), http.StatusNotFound, "not found")
	wantDetailContains(t, e.b(http.MethodDelete, userPath(uid), nil), http.StatusNotFound, "not found")

	wantStatus(t, e.a(http.MethodDelete, userPath(uid), nil), http.StatusNoContent)
	wantStatus(t, e.a(http.MethodDelete, userPath(uid), nil), http.StatusNotFound)
	wantStatus(t, e.a(http.MethodPatch, userPath(uid), map[string]any{"role": "viewer"}), http.StatusNotFound)
	if list := objects(t, e.a(http.MethodGet, usersPath, nil).obj(t)["users"]); len(list) != 0 {
		t.Errorf("users after delete = %v", list)
	}
}

func userPath(id int64) string { return usersPath + "/" + itoa(id) }

// userSession signs user u in (as the console does after a password) and
// returns the cookie header value.
func (e *testEnv) userSession(u store.User) string {
	e.t.Helper()
	token, _, err := e.db.CreateSession(context.Background(), store.Principal{OrganizationID: u.OrganizationID, UserID: u.ID,
		Role: u.Role, ActorName: u.Email})
	if err != nil {
		e.t.Fatal(err)
	}
	e.addSecret(token)
	return console.SessionCookie + "=" + token
}

// TestUserDisabledOrDeletedSessionsEnd: a user's console session answers
// 401 as soon as an admin disables or deletes the user.
func TestUserDisabledOrDeletedSessionsEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	for _, how := range []string{"disable", "delete"} {
		u, _, err := e.db.CreateUser(ctx, e.orgA, how+"@example.com", store.RoleOperator)
		if err != nil {
			t.Fatal(err)
		}
		cookie := e.userSession(u)
		wantStatus(t, e.do(http.MethodGet, "/api/v1/workflow", "", nil, "Cookie", cookie), http.StatusOK)
		if how == "disable" {
			wantStatus(t, e.a(http.MethodPatch, userPath(u.ID), map[string]any{"disabled": true}), http.StatusOK)
		} else {
			wantStatus(t, e.a(http.MethodDelete, userPath(u.ID), nil), http.StatusNoContent)
		}
		wantDetail(t, e.do(http.MethodGet, "/api/v1/workflow", "", nil, "Cookie", cookie), http.StatusUnauthorized, "Not authenticated")
	}
}

// TestAPIKeys: a new key is shown once and acts with its role; lists never
// show a key; a revoked key answers 401; another organization's key is 404.
func TestAPIKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.a(http.MethodPost, apiKeysPath, map[string]any{"name": "reporting", "role": "viewer"})
	wantStatus(t, r, http.StatusOK)
	k := r.obj(t)
	secret, _ := k["key"].(string)
	if !strings.HasPrefix(secret, store.APIKeyPrefix) || k["role"] != "viewer" || k["name"] != "reporting" {
		t.Fatalf("created key = %v", k)
	}
	if prefix, _ := k["prefix"].(string); prefix == "" || !strings.HasPrefix(secret, prefix) {
		t.Errorf("prefix %q is not the key's start", prefix)
	}
	e.addSecret(secret) // no later answer may hold it
	kid := id(t, k, "id")

	wantProblems(t, e.a(http.MethodPost, apiKeysPath, map[string]any{"name": "x", "role": "root"}), "body.role enum")
	wantProblems(t, e.a(http.MethodPost, apiKeysPath, map[string]any{}), "body.name missing", "body.role missing")

	// The new key is a viewer: it reads, it may not change anything.
	wantStatus(t, e.do(http.MethodGet, "/api/v1/workflow", secret, nil), http.StatusOK)
	wantDetail(t, e.do(http.MethodPost, "/api/v1/workflow", secret, rawBody(`{"name":"w","workflow_definition":`+campDefinition+`}`)),
		http.StatusForbidden, "role viewer cannot create a workflow; it needs operator")
	wantDetail(t, e.do(http.MethodGet, apiKeysPath, secret, nil), http.StatusForbidden, "role viewer cannot list API keys; it needs admin")

	r = e.a(http.MethodGet, apiKeysPath, nil)
	wantStatus(t, r, http.StatusOK)
	var found map[string]any
	for _, item := range objects(t, r.obj(t)["api_keys"]) {
		if _, has := item["key"]; has {
			t.Errorf("listed key shows key: %v", item)
		}
		if _, has := item["last_used_at"]; !has {
			t.Errorf("listed key has no last_used_at: %v", item)
		}
		if id(t, item, "id") == kid {
			found = item
		}
	}
	if found == nil || found["role"] != "viewer" || found["last_used_at"] == nil {
		t.Errorf("listed new key = %v, want role viewer and a last use", found)
	}

	wantDetailContains(t, e.b(http.MethodDelete, apiKeyPath(kid), nil), http.StatusNotFound, "not found")
	wantStatus(t, e.do(http.MethodGet, "/api/v1/workflow", secret, nil), http.StatusOK)
	wantStatus(t, e.a(http.MethodDelete, apiKeyPath(kid), nil), http.StatusNoContent)
	wantDetail(t, e.do(http.MethodGet, "/api/v1/workflow", secret, nil), http.StatusUnauthorized, "Invalid API key")
	wantStatus(t, e.a(http.MethodDelete, apiKeyPath(kid), nil), http.StatusNotFound)
	for _, item := range objects(t, e.a(http.MethodGet, apiKeysPath, nil).obj(t)["api_keys"]) {
		if id(t, item, "id") == kid {
			t.Errorf("revoked key still listed: %v", item)
		}
	}
}

func apiKeyPath(id int64) string { return apiKeysPath + "/" + itoa(id) }

// TestOrganizationSecurity: admins turn the second-factor requirement on
// and off; anything but a boolean is 422; an operator may read it only.
func TestOrganizationSecurity(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, opKey, err := e.db.CreateOrgAPIKey(context.Background(), e.orgA, "op", store.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	e.addSecret(opKey.Reveal())
	get := func() any {
		r := e.a(http.MethodGet, securityPath, nil)
		wantStatus(t, r, http.StatusOK)
		return r.Body
	}
	if got := get(); !equalJSON(got, map[string]any{"require_totp": false}) {
		t.Errorf("default = %v", got)
	}
	for _, v := range []bool{true, false} {
		r := e.a(http.MethodPut, securityPath, map[string]any{"require_totp": v})
		wantStatus(t, r, http.StatusOK)
		want := map[string]any{"require_totp": v}
		if !equalJSON(r.Body, want) || !equalJSON(get(), want) {
			t.Errorf("after PUT %v: answer %s, GET %v", v, r.Raw, get())
		}
	}
	wantProblems(t, e.a(http.MethodPut, securityPath, map[string]any{"require_totp": "maybe"}), "body.require_totp bool_parsing")
	wantProblems(t, e.a(http.MethodPut, securityPath, map[string]any{"require_totp": []any{true}}), "body.require_totp bool_type")
	wantProblems(t, e.a(http.MethodPut, securityPath, map[string]any{}), "body.require_totp missing")
	wantStatus(t, e.do(http.MethodGet, securityPath, opKey.Reveal(), nil), http.StatusOK)
	wantDetail(t, e.do(http.MethodPut, securityPath, opKey.Reveal(), map[string]any{"require_totp": true}), http.StatusForbidden,
		"role operator cannot change the organization's security settings; it needs admin")
	if got := get(); !equalJSON(got, map[string]any{"require_totp": false}) {
		t.Errorf("after the operator's refused PUT: %v", got)
	}
	// Another organization's setting is its own.
	if r := e.b(http.MethodGet, securityPath, nil); !equalJSON(r.Body, map[string]any{"require_totp": false}) {
		t.Errorf("org B = %s", r.Raw)
	}
}
