// Package roles is the one table of what each role may do through the
// API (API.md 17): every route that needs a credential has one entry, with
// the role it needs and, for a route that changes something, what its
// audit entries say. The API enforces it (web's authedAfter refuses to
// register a route without an entry, and answers 403 before the handler
// runs); the console asks the same table (Allowed) to show only the
// controls a role may use.
package roles

import (
	"strings"

	"github.com/outdial/outdial/store"
)

// Operation is one route's entry.
type Operation struct {
	// Need is the least role that may call the route.
	Need store.Role
	// Does names the operation for a 403: "role viewer cannot <Does>; it
	// needs <Need>".
	Does string
	// Action is the audit entry's action, "<target type>.<verb>" (empty
	// for GET routes, which are not audited).
	Action string
	// Param is the path parameter naming the target ("" when the target
	// has no id in the path: a create's comes from its answer).
	Param string
}

// Target returns the audit target type of op's action.
func (op Operation) Target() string {
	t, _, _ := strings.Cut(op.Action, ".")
	return t
}

// Refusal is the detail of a 403 for role, which may not do op.
func (op Operation) Refusal(role store.Role) string {
	return "role " + string(role) + " cannot " + op.Does + "; it needs " + string(op.Need)
}

func reads(does string) Operation { return Operation{Need: store.RoleViewer, Does: does} }

func writes(need store.Role, does, action, param string) Operation {
	return Operation{Need: need, Does: does, Action: action, Param: param}
}

func adminReads(does string) Operation { return Operation{Need: store.RoleAdmin, Does: does} }

const (
	operator = store.RoleOperator
	admin    = store.RoleAdmin
)

// operations maps "METHOD pattern" to its entry.
var operations = map[string]Operation{
	"GET /api/v1/organizations/telephony-providers":             reads("list telephony providers"),
	"POST /api/v1/organizations/telephony-configs":              writes(admin, "create a telephony configuration", "telephony_config.create", ""),
	"GET /api/v1/organizations/telephony-configs":               reads("list telephony configurations"),
	"GET /api/v1/organizations/telephony-configs/:config_id":    reads("read a telephony configuration"),
	"PUT /api/v1/organizations/telephony-configs/:config_id":    writes(admin, "update a telephony configuration", "telephony_config.update", "config_id"),
	"DELETE /api/v1/organizations/telephony-configs/:config_id": writes(admin, "delete a telephony configuration", "telephony_config.delete", "config_id"),

	"POST /api/v1/organizations/telephony-configs/:config_id/phone-numbers": writes(admin, "add a phone number", "phone_number.create", ""),
	"GET /api/v1/organizations/telephony-configs/:config_id/phone-numbers":  reads("list phone numbers"),
	"PUT /api/v1/organizations/telephony-configs/:config_id/phone-numbers/:phone_number_id": writes(admin, "update a phone number",
		"phone_number.update", "phone_number_id"),
	"DELETE /api/v1/organizations/telephony-configs/:config_id/phone-numbers/:phone_number_id": writes(admin, "delete a phone number",
		"phone_number.delete", "phone_number_id"),

	"POST /api/v1/s3/presigned-upload-url": writes(operator, "upload a contacts file", "upload.create", ""),

	"POST /api/v1/workflow":                       writes(operator, "create a workflow", "workflow.create", ""),
	"GET /api/v1/workflow":                        reads("list workflows"),
	"GET /api/v1/workflow/:workflow_id":           reads("read a workflow"),
	"PUT /api/v1/workflow/:workflow_id":           writes(operator, "update a workflow", "workflow.update", "workflow_id"),
	"DELETE /api/v1/workflow/:workflow_id":        writes(operator, "delete a workflow", "workflow.delete", "workflow_id"),
	"POST /api/v1/workflow/:workflow_id/validate": writes(operator, "validate a workflow", "workflow.validate", "workflow_id"),

	"POST /api/v1/campaign":                       writes(operator, "create a campaign", "campaign.create", ""),
	"GET /api/v1/campaign":                        reads("list campaigns"),
	"GET /api/v1/campaign/:campaign_id":           reads("read a campaign"),
	"PATCH /api/v1/campaign/:campaign_id":         writes(operator, "change a campaign", "campaign.update", "campaign_id"),
	"DELETE /api/v1/campaign/:campaign_id":        writes(operator, "delete a campaign", "campaign.delete", "campaign_id"),
	"POST /api/v1/campaign/:campaign_id/start":    writes(operator, "start a campaign", "campaign.start", "campaign_id"),
	"POST /api/v1/campaign/:campaign_id/pause":    writes(operator, "pause a campaign", "campaign.pause", "campaign_id"),
	"POST /api/v1/campaign/:campaign_id/resume":   writes(operator, "resume a campaign", "campaign.resume", "campaign_id"),
	"POST /api/v1/campaign/:campaign_id/cancel":   writes(operator, "cancel a campaign", "campaign.cancel", "campaign_id"),
	"POST /api/v1/campaign/:campaign_id/redial":   writes(operator, "redial a campaign", "campaign.redial", "campaign_id"),
	"GET /api/v1/campaign/:campaign_id/calls":     reads("list a campaign's calls"),
	"GET /api/v1/campaign/:campaign_id/logs":      reads("read a campaign's log"),
	"GET /api/v1/campaign/:campaign_id/report":    reads("download a campaign's report"),
	"GET /api/v1/campaign/:campaign_id/diagnosis": reads("read a campaign's diagnosis"),
	"GET /api/v1/campaign/:campaign_id/events":    reads("follow a campaign's events"),
	"GET /api/v1/events":                          reads("follow the organization's events"),

	"POST /api/v1/suppressions":                    writes(operator, "add to the suppression list", "suppression.create", ""),
	"GET /api/v1/suppressions":                     reads("read the suppression list"),
	"DELETE /api/v1/suppressions/:suppression_id":  writes(admin, "remove a suppression", "suppression.delete", "suppression_id"),
	"GET /api/v1/organizations/compliance":         reads("read the compliance policy"),
	"PUT /api/v1/organizations/compliance":         writes(admin, "change the compliance policy", "compliance_policy.update", ""),
	"GET /api/v1/organizations/compliance/changes": reads("read the compliance policy's changes"),
	"GET /api/v1/organizations/limits":             reads("read the organization's limits"),
	"PUT /api/v1/organizations/limits":             writes(admin, "change the organization's limits", "organization_limits.update", ""),
	"GET /api/v1/organizations/security":           reads("read the organization's security settings"),
	"PUT /api/v1/organizations/security":           writes(admin, "change the organization's security settings", "organization_security.update", ""),

	"GET /api/v1/users":               adminReads("list users"),
	"POST /api/v1/users":              writes(admin, "create a user", "user.create", ""),
	"PATCH /api/v1/users/:user_id":    writes(admin, "change a user", "user.update", "user_id"),
	"DELETE /api/v1/users/:user_id":   writes(admin, "delete a user", "user.delete", "user_id"),
	"GET /api/v1/api-keys":            adminReads("list API keys"),
	"POST /api/v1/api-keys":           writes(admin, "create an API key", "api_key.create", ""),
	"DELETE /api/v1/api-keys/:key_id": writes(admin, "revoke an API key", "api_key.delete", "key_id"),
	"GET /api/v1/audit":               adminReads("read the audit trail"),
	"GET /api/v1/audit/:audit_id":     adminReads("read the audit trail"),
}

// Of returns the entry of method and pattern (an API route pattern, as
// registered); ok is false when it has none.
func Of(method, pattern string) (Operation, bool) {
	op, ok := operations[method+" "+pattern]
	return op, ok
}

// Allowed reports whether role may call method on pattern: what the API
// would not refuse with 403.
func Allowed(role store.Role, method, pattern string) bool {
	op, ok := Of(method, pattern)
	return ok && role.Allows(op.Need)
}

// Patterns returns every "METHOD pattern" the table has an entry for.
func Patterns() []string {
	out := make([]string, 0, len(operations))
	for k := range operations {
		out = append(out, k)
	}
	return out
}
