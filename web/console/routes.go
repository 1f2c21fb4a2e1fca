package console

// routes lists every console route, the one place where a page is added
// (as web's routes.go does for the API): the method and path, the handler
// (in the page's own file) and whether it is served without a session. New
// registers them in this order; Routes lists their patterns.
func routes() []route {
	return []route{
		// Sign-in and sign-out (signin.go, signin_password.go), the code
		// of a second factor (secondfactor.go) and setting a password
		// with a link (setpassword.go): the only public routes.
		{pattern: "GET " + signInPath, public: true, handle: signInPage},
		{pattern: "POST " + signInPath, public: true, handle: signIn},
		{pattern: "GET " + signInPath + "/link", public: true, handle: signInLink},
		{pattern: "GET " + secondFactorPath, public: true, handle: secondFactorPage},
		{pattern: "POST " + secondFactorPath, public: true, handle: secondFactor},
		{pattern: "GET " + setPasswordPath, public: true, handle: setPasswordPage},
		{pattern: "POST " + setPasswordPath, public: true, handle: setPassword},
		{pattern: "POST " + Prefix + "sign-out", beforeTOTP: true, handle: signOut},

		// The signed-in user's own account (account.go): all a user may
		// open while the organization requires a second factor they lack.
		{pattern: "GET " + accountPath, beforeTOTP: true, handle: accountPage},
		{pattern: "POST " + accountPath + "/password", beforeTOTP: true, handle: accountPassword},
		{pattern: "POST " + accountPath + "/two-factor/start", beforeTOTP: true, handle: accountTOTPStart},
		{pattern: "POST " + accountPath + "/two-factor", beforeTOTP: true, handle: accountTOTPConfirm},
		{pattern: "POST " + accountPath + "/two-factor/off", beforeTOTP: true, handle: accountTOTPOff},

		// The campaigns list (campaigns.go), the console's home.
		{pattern: "GET " + Prefix + "{$}", handle: campaignsPage},
		{pattern: "GET " + Prefix + "campaigns", handle: campaignsPage},

		// A new campaign (newcampaign.go).
		{pattern: "GET " + newCampaignPath, handle: newCampaignPage},
		{pattern: "POST " + newCampaignPath, handle: newCampaignCreate},

		// The campaign page (campaign.go) and its forms (campaign_forms.go).
		{pattern: "GET " + Prefix + "campaigns/{id}", handle: campaignPage},
		{pattern: "POST " + Prefix + "campaigns/{id}/start", handle: campaignOp("start")},
		{pattern: "POST " + Prefix + "campaigns/{id}/pause", handle: campaignOp("pause")},
		{pattern: "POST " + Prefix + "campaigns/{id}/resume", handle: campaignOp("resume")},
		{pattern: "POST " + Prefix + "campaigns/{id}/cancel", handle: campaignOp("cancel")},
		{pattern: "POST " + Prefix + "campaigns/{id}/settings", handle: campaignSettings},
		{pattern: "POST " + Prefix + "campaigns/{id}/redial", handle: campaignRedial},

		// Telephony configurations (telephony.go) and their phone numbers
		// (telephony_numbers.go).
		{pattern: "GET " + Prefix + "telephony", handle: telephonyList},
		{pattern: "GET " + Prefix + "telephony/new", handle: telephonyNew},
		{pattern: "POST " + Prefix + "telephony/new", handle: telephonyCreate},
		{pattern: "GET " + Prefix + "telephony/{id}", handle: telephonyEdit},
		{pattern: "POST " + Prefix + "telephony/{id}", handle: telephonyUpdate},
		{pattern: "POST " + Prefix + "telephony/{id}/default", handle: telephonyDefault},
		{pattern: "GET " + Prefix + "telephony/{id}/delete", handle: telephonyDeleteConfirm},
		{pattern: "POST " + Prefix + "telephony/{id}/delete", handle: telephonyDelete},
		{pattern: "POST " + Prefix + "telephony/{id}/numbers", handle: numberAdd},
		{pattern: "POST " + Prefix + "telephony/{id}/numbers/{nid}", handle: numberChange},
		{pattern: "GET " + Prefix + "telephony/{id}/numbers/{nid}/delete", handle: numberDeleteConfirm},
		{pattern: "POST " + Prefix + "telephony/{id}/numbers/{nid}/delete", handle: numberDelete},

		// Workflows (workflows.go) and their editor (workflows_edit.go).
		{pattern: "GET " + workflowsPath, handle: workflowsPage},
		{pattern: "GET " + workflowsPath + "/new", handle: workflowNewPage},
		{pattern: "POST " + workflowsPath + "/new", handle: workflowCreate},
		{pattern: "GET " + workflowsPath + "/{id}", handle: workflowEditPage},
		{pattern: "POST " + workflowsPath + "/{id}", handle: workflowUpdate},
		{pattern: "POST " + workflowsPath + "/{id}/validate", handle: workflowValidate},
		{pattern: "GET " + workflowsPath + "/{id}/delete", handle: workflowDeletePage},
		{pattern: "POST " + workflowsPath + "/{id}/delete", handle: workflowDelete},

		// The suppression list (suppressions.go).
		{pattern: "GET " + Prefix + "suppressions", handle: suppressionsList},
		{pattern: "POST " + Prefix + "suppressions", handle: suppressionsAdd},
		{pattern: "POST " + Prefix + "suppressions/import", handle: suppressionsImport},
		{pattern: "POST " + Prefix + "suppressions/{id}/delete", handle: suppressionDelete},

		// The compliance policy (compliance.go).
		{pattern: "GET " + Prefix + "compliance", handle: compliancePage},
		{pattern: "POST " + Prefix + "compliance", handle: complianceSave},
		// The organization's limit on calls in flight (limits.go).
		{pattern: "POST " + Prefix + "limits", handle: limitsSave},

		// Users and the organization's security toggle (users.go), API
		// keys (apikeys.go) and the audit trail (audit.go): admins'.
		{pattern: "GET " + usersPath, handle: usersPage},
		{pattern: "POST " + usersPath, handle: userInvite},
		{pattern: "POST " + usersPath + "/security", handle: securitySave},
		{pattern: "POST " + usersPath + "/{id}", handle: userChange},
		{pattern: "GET " + usersPath + "/{id}/delete", handle: userDeleteConfirm},
		{pattern: "POST " + usersPath + "/{id}/delete", handle: userDelete},
		{pattern: "GET " + apiKeysPath, handle: apiKeysPage},
		{pattern: "POST " + apiKeysPath, handle: apiKeyCreate},
		{pattern: "GET " + apiKeysPath + "/{id}/revoke", handle: apiKeyRevokeConfirm},
		{pattern: "POST " + apiKeysPath + "/{id}/revoke", handle: apiKeyRevoke},
		{pattern: "GET " + auditPath, handle: auditPage},
		{pattern: "GET " + auditPath + "/export", handle: auditExport},
	}
}
