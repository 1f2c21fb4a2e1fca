package web_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/roles"
)

// roleFixtures are one of each thing a route's path can name, in
// organization A.
type roleFixtures struct {
	config, number, workflow, campaign, suppression, user, key, audit int64
}

// roleSeq numbers the names and numbers the table test makes.
type roleSeq struct{ n int }

func (s *roleSeq) next() int { s.n++; return s.n }

// fixtures makes fresh targets for the parameters pattern names (a delete
// or a transition used up the previous ones).
func (ce *campEnv) roleFixtures(seq *roleSeq, pattern string) roleFixtures {
	ce.t.Helper()
	ctx := context.Background()
	var fx roleFixtures
	n := seq.next()
	needs := func(p string) bool { return strings.Contains(pattern, ":"+p) }
	if needs("config_id") || needs("campaign_id") {
		fx.config = ce.twilioConfig(ce.keyA, fmt.Sprintf("cfg %d", n), false, false)
		fx.number = ce.callerID(ce.keyA, fx.config, fmt.Sprintf("+1415556%04d", n))
	}
	if needs("workflow_id") || needs("campaign_id") {
		fx.workflow = ce.workflow(ce.keyA, fmt.Sprintf("wf %d", n), campDefinition)
	}
	if needs("campaign_id") {
		src := ce.upload(ce.keyA, campCSV(2))
		fx.campaign = id(ce.t, ce.createCampaign(ce.keyA, campBody(fmt.Sprintf("camp %d", n), fx.workflow, src,
			"telephony_configuration_id", fx.config)), "id")
	}
	if needs("suppression_id") {
		num := fmt.Sprintf("+1415557%04d", n)
		wantStatus(ce.t, ce.a(http.MethodPost, "/api/v1/suppressions", map[string]any{"numbers": []string{num}}), http.StatusOK)
		list := objects(ce.t, ce.a(http.MethodGet, "/api/v1/suppressions?limit=1000", nil).obj(ce.t)["suppressions"])
		for _, s := range list {
			if s["phone_number"] == num || s["number"] == num {
				fx.suppression = id(ce.t, s, "id")
			}
		}
		if fx.suppression == 0 {
			ce.t.Fatalf("suppression %s not listed: %v", num, list)
		}
	}
	if needs("user_id") {
		u, _, err := ce.db.CreateUser(ctx, ce.orgA, fmt.Sprintf("user%d@example.com", n), store.RoleViewer)
		if err != nil {
			ce.t.Fatal(err)
		}
		fx.user = u.ID
	}
	if needs("key_id") {
		k, secret, err := ce.db.CreateOrgAPIKey(ctx, ce.orgA, fmt.Sprintf("key %d", n), store.RoleViewer)
		if err != nil {
			ce.t.Fatal(err)
		}
		ce.addSecret(secret.Reveal())
		fx.key = k.ID
	}
	if needs("audit_id") {
		r := ce.a(http.MethodGet, "/api/v1/audit?limit=1", nil)
		wantStatus(ce.t, r, http.StatusOK)
		entries := objects(ce.t, r.obj(ce.t)["entries"])
		if len(entries) == 0 {
			ce.t.Fatalf("no audit entry yet")
		}
		fx.audit = id(ce.t, entries[0], "id")
	}
	return fx
}

// path fills pattern's parameters with fx's ids.
func (fx roleFixtures) path(pattern string) string {
	r := strings.NewReplacer(":config_id", itoa(fx.config), ":phone_number_id", itoa(fx.number),
		":workflow_id", itoa(fx.workflow), ":campaign_id", itoa(fx.campaign), ":suppression_id", itoa(fx.suppression),
		":user_id", itoa(fx.user), ":key_id", itoa(fx.key), ":audit_id", itoa(fx.audit))
	return r.Replace(pattern)
}

// roleBody is a valid-looking body for the route (nil: none).
func (ce *campEnv) roleBody(seq *roleSeq, method, pattern string, fx roleFixtures) any {
	n := seq.next()
	switch method + " " + pattern {
	case "POST /api/v1/organizations/telephony-configs":
		return configBody(fmt.Sprintf("new cfg %d", n), false, validConfig("twilio"))
	case "PUT /api/v1/organizations/telephony-configs/:config_id":
		return map[string]any{"name": fmt.Sprintf("renamed cfg %d", n)}
	case "POST /api/v1/organizations/telephony-configs/:config_id/phone-numbers":
		return map[string]any{"address": fmt.Sprintf("+1415558%04d", n)}
	case "PUT /api/v1/organizations/telephony-configs/:config_id/phone-numbers/:phone_number_id":
		return map[string]any{"is_active": false}
	case "POST /api/v1/s3/presigned-upload-url":
		return map[string]any{"file_name": "contacts.csv", "file_size": 100}
	case "POST /api/v1/workflow":
		return rawBody(fmt.Sprintf(`{"name":"new wf %d","workflow_definition":%s}`, n, campDefinition))
	case "PUT /api/v1/workflow/:workflow_id":
		return map[string]any{"name": fmt.Sprintf("renamed wf %d", n)}
	case "POST /api/v1/campaign":
		wf := ce.workflow(ce.keyA, fmt.Sprintf("camp wf %d", n), campDefinition)
		return campBody(fmt.Sprintf("new camp %d", n), wf, ce.upload(ce.keyA, campCSV(1)))
	case "PATCH /api/v1/campaign/:campaign_id":
		return map[string]any{"name": fmt.Sprintf("renamed camp %d", n)}
	case "POST /api/v1/campaign/:campaign_id/redial":
		return map[string]any{}
	case "POST /api/v1/suppressions":
		return map[string]any{"numbers": []string{fmt.Sprintf("+1415559%04d", n)}}
	case "PUT /api/v1/organizations/compliance":
		return map[string]any{"attempt_cap": map[string]any{"enabled": true}}
	case "PUT /api/v1/organizations/security":
		return map[string]any{"require_totp": true}
	case "POST /api/v1/users":
		return map[string]any{"email": fmt.Sprintf("new%d@example.com", n), "role": "operator"}
	case "PATCH /api/v1/users/:user_id":
		return map[string]any{"role": "admin", "disabled": true}
	case "POST /api/v1/api-keys":
		return map[string]any{"name": fmt.Sprintf("new key %d", n), "role": "admin"}
	}
	return nil
}

// orgState is organization A as an admin reads it, but for what changes
// by itself (a key's last use) and the audit trail (which records the
// refusals).
func (ce *campEnv) orgState(fx roleFixtures) map[string]any {
	ce.t.Helper()
	paths := []string{configsPath, "/api/v1/workflow", campaignsPath, "/api/v1/suppressions?limit=1000",
		"/api/v1/organizations/compliance", "/api/v1/organizations/compliance/changes", "/api/v1/organizations/security",
		"/api/v1/users", "/api/v1/api-keys"}
	if fx.config != 0 {
		paths = append(paths, numbersPath(fx.config))
	}
	out := map[string]any{}
	for _, p := range paths {
		r := ce.a(http.MethodGet, p, nil)
		wantStatus(ce.t, r, http.StatusOK)
		if p == "/api/v1/api-keys" {
			for _, k := range objects(ce.t, r.obj(ce.t)["api_keys"]) {
				delete(k, "last_used_at")
				out[p+"/"+itoa(id(ce.t, k, "id"))] = k
			}
			continue
		}
		out[p] = r.Body
	}
	return out
}

// TestRolesEveryRoute calls every route of the roles table as each role:
// a role the route allows never gets 403; a lesser one gets 403 "role X
// cannot ...; it needs Y", and the organization is as it was.
func TestRolesEveryRoute(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	ctx := context.Background()
	keys := map[store.Role]string{}
	for _, role := range store.Roles() {
		_, secret, err := ce.db.CreateOrgAPIKey(ctx, ce.orgA, "role "+string(role), role)
		if err != nil {
			t.Fatal(err)
		}
		keys[role] = secret.Reveal()
		ce.addSecret(keys[role])
	}
	parent := t
	seq := &roleSeq{}
	// Something in the trail for the audit entry routes.
	wantStatus(t, ce.a(http.MethodPut, "/api/v1/organizations/security", map[string]any{"require_totp": false}), http.StatusOK)

	patterns := roles.Patterns()
	slices.Sort(patterns)
	seen := map[store.Role]int{}
	for _, k := range patterns {
		method, pattern, _ := strings.Cut(k, " ")
		op, _ := roles.Of(method, pattern)
		t.Run(k, func(t *testing.T) {
			ce.t = t
			defer func() { ce.t = parent }()
			refusedFx := ce.roleFixtures(seq, pattern)
			for _, role := range store.Roles() {
				if role.Allows(op.Need) {
					continue
				}
				seen[role]++
				body := ce.roleBody(seq, method, pattern, refusedFx) // before the snapshot: it may save a workflow
				before := ce.orgState(refusedFx)
				r := ce.do(method, refusedFx.path(pattern), keys[role], body)
				want := fmt.Sprintf("role %s cannot %s; it needs %s", role, op.Does, op.Need)
				wantDetail(t, r, http.StatusForbidden, want)
				after := ce.orgState(refusedFx)
				for p := range before {
					if !equalJSON(before[p], after[p]) {
						t.Errorf("%s refused to %s, but %s changed:\nbefore %v\nafter  %v", k, role, p, before[p], after[p])
					}
				}
				if len(after) != len(before) {
					t.Errorf("%s refused to %s, but the API keys changed: %d things before, %d after", k, role, len(before), len(after))
				}
			}
			for _, role := range store.Roles() {
				if !role.Allows(op.Need) {
					continue
				}
				fx := refusedFx
				if method != http.MethodGet {
					fx = ce.roleFixtures(seq, pattern) // the last role's call may have used them up
				}
				path := fx.path(pattern)
				if strings.HasSuffix(pattern, "/events") {
					path += "?limit=1" // no dialer here: 503 before a stream opens
				}
				status, raw := 0, ""
				if method == http.MethodGet {
					status, _, raw = ce.getRaw(keys[role], path) // a report is CSV
				} else {
					r := ce.do(method, path, keys[role], ce.roleBody(seq, method, pattern, fx))
					status, raw = r.Status, string(r.Raw)
				}
				if status == http.StatusForbidden {
					t.Errorf("%s as %s (needs %s): 403 %s", k, role, op.Need, raw)
				}
			}
		})
	}
	if seen[store.RoleViewer] == 0 || seen[store.RoleOperator] == 0 {
		t.Errorf("refusals tried per role: %v; want some for viewer and operator", seen)
	}
}
