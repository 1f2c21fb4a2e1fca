package web

import (
	"net/http"

	"github.com/outdial/outdial/store"
)

// registerRoutes registers every route of the API. Keep them all here:
// httprouter panics on a static segment beside a wildcard at the same
// position, so each position uses one wildcard name.
func (s *Server) registerRoutes() {
	s.public(http.MethodGet, "/api/v1/health", s.health)
	s.public(http.MethodGet, "/api/v1/openapi.json", s.openAPI)

	s.authed(http.MethodGet, "/api/v1/organizations/telephony-providers", s.listProviders)
	s.authed(http.MethodPost, "/api/v1/organizations/telephony-configs", s.createTelephonyConfig)
	s.authed(http.MethodGet, "/api/v1/organizations/telephony-configs", s.listTelephonyConfigs)
	s.authed(http.MethodGet, "/api/v1/organizations/telephony-configs/:config_id", s.getTelephonyConfig)
	s.authed(http.MethodPut, "/api/v1/organizations/telephony-configs/:config_id", s.updateTelephonyConfig)
	s.authed(http.MethodDelete, "/api/v1/organizations/telephony-configs/:config_id", s.deleteTelephonyConfig)

	s.authed(http.MethodPost, "/api/v1/organizations/telephony-configs/:config_id/phone-numbers", s.addPhoneNumber)
	s.authed(http.MethodGet, "/api/v1/organizations/telephony-configs/:config_id/phone-numbers", s.listPhoneNumbers)
	s.authed(http.MethodPut, "/api/v1/organizations/telephony-configs/:config_id/phone-numbers/:phone_number_id", s.updatePhoneNumber)
	s.authed(http.MethodDelete, "/api/v1/organizations/telephony-configs/:config_id/phone-numbers/:phone_number_id", s.deletePhoneNumber)

	s.authed(http.MethodPost, "/api/v1/s3/presigned-upload-url", s.presignUpload)

	s.authed(http.MethodPost, "/api/v1/workflow", s.createWorkflow)
	s.authed(http.MethodGet, "/api/v1/workflow", s.listWorkflows)
	s.authed(http.MethodGet, "/api/v1/workflow/:workflow_id", s.getWorkflow)
	s.authed(http.MethodPut, "/api/v1/workflow/:workflow_id", s.updateWorkflow)
	s.authed(http.MethodDelete, "/api/v1/workflow/:workflow_id", s.deleteWorkflow)
	s.authed(http.MethodPost, "/api/v1/workflow/:workflow_id/validate", s.validateWorkflow)

	s.authed(http.MethodPost, "/api/v1/campaign", s.needsDiskRoom(s.createCampaign))
	s.authed(http.MethodGet, "/api/v1/campaign", s.listCampaigns)
	s.authed(http.MethodGet, "/api/v1/campaign/:campaign_id", s.getCampaign)
	s.authed(http.MethodPatch, "/api/v1/campaign/:campaign_id", s.patchCampaign)
	s.authed(http.MethodDelete, "/api/v1/campaign/:campaign_id", s.deleteCampaign)
	s.authed(http.MethodPost, "/api/v1/campaign/:campaign_id/start", s.transition(store.OpStart))
	s.authed(http.MethodPost, "/api/v1/campaign/:campaign_id/pause", s.transition(store.OpPause))
	s.authed(http.MethodPost, "/api/v1/campaign/:campaign_id/resume", s.transition(store.OpResume))
	s.authed(http.MethodPost, "/api/v1/campaign/:campaign_id/cancel", s.transition(store.OpCancel))
	s.authed(http.MethodPost, "/api/v1/campaign/:campaign_id/redial", s.redialCampaign)
	s.authed(http.MethodGet, "/api/v1/campaign/:campaign_id/calls", s.listCalls)
	s.authed(http.MethodGet, "/api/v1/campaign/:campaign_id/logs", s.listCampaignLogs)
	s.authed(http.MethodGet, "/api/v1/campaign/:campaign_id/report", s.campaignReport)
	s.authed(http.MethodGet, "/api/v1/campaign/:campaign_id/diagnosis", s.campaignDiagnosis)
	s.authedAfter(http.MethodGet, "/api/v1/campaign/:campaign_id/events", s.streams.refuseKnown, s.campaignEvents)
	s.authedAfter(http.MethodGet, "/api/v1/events", s.streams.refuseKnown, s.orgEvents)

	s.authed(http.MethodPost, "/api/v1/suppressions", s.needsDiskRoom(s.addSuppressions))
	s.authed(http.MethodGet, "/api/v1/suppressions", s.listSuppressions)
	s.authed(http.MethodDelete, "/api/v1/suppressions/:suppression_id", s.deleteSuppression)
	s.authed(http.MethodGet, "/api/v1/organizations/compliance", s.getCompliance)
	s.authed(http.MethodPut, "/api/v1/organizations/compliance", s.putCompliance)
	s.authed(http.MethodGet, "/api/v1/organizations/compliance/changes", s.listComplianceChanges)
	s.authed(http.MethodGet, "/api/v1/organizations/limits", s.getLimits)
	s.authed(http.MethodPut, "/api/v1/organizations/limits", s.putLimits)
	s.authed(http.MethodGet, "/api/v1/organizations/security", s.getSecurity)
	s.authed(http.MethodPut, "/api/v1/organizations/security", s.putSecurity)

	// People, keys and the audit trail (API.md 17). The audit trail's
	// routes answer GET only: any other method is 405.
	s.authed(http.MethodGet, "/api/v1/users", s.listUsers)
	s.authed(http.MethodPost, "/api/v1/users", s.createUser)
	s.authed(http.MethodPatch, "/api/v1/users/:user_id", s.patchUser)
	s.authed(http.MethodDelete, "/api/v1/users/:user_id", s.deleteUser)
	s.authed(http.MethodGet, "/api/v1/api-keys", s.listAPIKeys)
	s.authed(http.MethodPost, "/api/v1/api-keys", s.createAPIKey)
	s.authed(http.MethodDelete, "/api/v1/api-keys/:key_id", s.deleteAPIKey)
	s.authed(http.MethodGet, "/api/v1/audit", s.listAudit)
	s.authed(http.MethodGet, "/api/v1/audit/:audit_id", s.getAuditEntry)

	// Provider webhooks: verified by per-attempt token and provider signature,
	// not by API key.
	s.public(http.MethodPost, "/api/v1/telephony/:provider/answer/:attempt_id", s.telephonyAnswer)
	s.public(http.MethodGet, "/api/v1/telephony/:provider/answer/:attempt_id", s.telephonyAnswer)
	s.public(http.MethodPost, "/api/v1/telephony/:provider/status/:attempt_id", s.telephonyStatus)
	s.public(http.MethodPost, "/api/v1/telephony/:provider/answer", s.applicationAnswer)
	s.public(http.MethodGet, "/api/v1/telephony/:provider/answer", s.applicationAnswer)
	s.public(http.MethodPost, "/api/v1/telephony/:provider/status", s.applicationStatus)
	// The opt-out and the agent's events (token-verified too) are routed
	// before the router: a static "opt-out" or "agent" beside :provider at
	// the same position panics httprouter (optout.go, agentevents.go).
	s.routes = append(s.routes, Route{http.MethodPost, optOutRoute}, Route{http.MethodPost, agentEventsRoute})
}
