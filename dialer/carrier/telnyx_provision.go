package carrier

// Provisioning of a Telnyx configuration's Call Control application
// (API.md 2.3).

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// telnyxApplication is the body of POST /v2/call_control_applications, the
// fields this carrier sends.
type telnyxApplication struct {
	ApplicationName   string `json:"application_name"`
	WebhookEventURL   string `json:"webhook_event_url"`
	WebhookAPIVersion string `json:"webhook_api_version"`
	Active            bool   `json:"active"`
}

// provisionTelnyx creates the configuration's Call Control application
// (POST /v2/call_control_applications with the api_key as Bearer token):
// application_name Target.Name, webhook_event_url Target.StatusURL (events
// of calls placed by someone else, or inbound calls to the numbers, land
// there; every call this service dials overrides it with its own
// webhook_url), webhook_api_version "2" (the {"data":{...}} envelope
// ParseStatus reads) and active true. It returns the application's id
// (data.id), which the dialer sends as connection_id.
//
// Telnyx dials out through an application only when an outbound voice
// profile is assigned to it; that is account policy (billing, allowed
// destinations) and is left to the account owner.
//
// Failures map as API.md 2.3 says (provisionFailed): 401/403 → 422 at
// api_key, 404 → 404, 422 and other 4xx → 422 at connection_id, 429 and
// 5xx → 502; a transport error is returned as is (the caller maps it to
// 502).
func provisionTelnyx(ctx context.Context, creds map[string]any, t Target, opts Options) (string, error) {
	base := strings.TrimRight(opts.baseURL(Telnyx, telnyxBaseURL), "/")
	body := telnyxApplication{ApplicationName: t.Name, WebhookEventURL: t.StatusURL, WebhookAPIVersion: "2", Active: true}
	var app struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	err := telnyxAPI(opts.client(), opts.now, credString(creds, "api_key")).provision(ctx, base+"/v2/call_control_applications", body, &app,
		"api_key", "connection_id")
	if err != nil {
		return "", fmt.Errorf("telnyx create call control application: %w", err)
	}
	if app.Data.ID == "" {
		return "", errors.New("telnyx create call control application: answer has no data.id")
	}
	return app.Data.ID, nil
}
