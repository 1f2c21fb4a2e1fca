package carrier

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// Target is what an auto-created provider application points at (API.md
// 2.3): this service's application-level callback URLs. Every call the
// dialer places carries its own per-attempt answer and status URLs, which
// take precedence at every provider, so the application's URLs only see
// requests no campaign placed (an inbound call to the number, a stray event).
type Target struct {
	// Name names the application at the provider.
	Name string
	// AnswerURL is .../api/v1/telephony/{provider}/answer and StatusURL
	// .../api/v1/telephony/{provider}/status, on the service's public URL.
	AnswerURL string
	StatusURL string
}

// Types of a ProvisionError answered 422.
const (
	ProvisionAuthFailed = "provider_auth_failed"
	ProvisionRejected   = "provider_rejected"
)

// ProvisionError is a provider's refusal to create a configuration's
// application, as the API answers it (API.md 2.3): 401/403 → 422
// provider_auth_failed at the credential field; 404 (account or domain not
// found) → 404 with the provider's reason; another 4xx → 422
// provider_rejected at the application field; unreachable, 429 or 5xx → 502.
type ProvisionError struct {
	// Status is the HTTP status the API answers: 422, 404 or 502.
	Status int
	// Type is the 422 problem type.
	Type string
	// Field is the config field the 422 problem is located at.
	Field string
	// Message is the provider's reason; it never contains credentials, nor
	// this host's network details (addresses, resolver): those are in Err.
	Message string
	// Err is the transport failure behind an unreachable provider (a DNS
	// lookup, a refused connection, a timeout), for the log only: its text
	// names internal addresses.
	Err error
}

func (e *ProvisionError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("provision application (http %d): %s: %v", e.Status, e.Message, e.Err)
	}
	return fmt.Sprintf("provision application (http %d): %s", e.Status, e.Message)
}

// Unwrap returns the transport failure, if any.
func (e *ProvisionError) Unwrap() error { return e.Err }

// provisionFailed maps a provider's non-2xx answer to an application create:
// authField is the credential a 401/403 is about, appField the field the
// application's id is stored in.
func provisionFailed(status int, authField, appField, msg string) *ProvisionError {
	if msg == "" {
		msg = http.StatusText(status)
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return &ProvisionError{Status: http.StatusUnprocessableEntity, Type: ProvisionAuthFailed, Field: authField,
			Message: "the provider refused the credentials: " + msg}
	case status == http.StatusNotFound:
		return &ProvisionError{Status: http.StatusNotFound, Message: "the provider answered not found: " + msg}
	case status >= 400 && status < 500 && status != http.StatusTooManyRequests:
		return &ProvisionError{Status: http.StatusUnprocessableEntity, Type: ProvisionRejected, Field: appField,
			Message: "the provider refused to create the application: " + msg}
	}
	return &ProvisionError{Status: http.StatusBadGateway, Message: fmt.Sprintf("the provider is unavailable (http %d): %s", status, msg)}
}

// provisionUnreachable is a transport failure of an application create. Its
// text ("lookup api.plivo.com on 10.0.0.2:53: no such host", "dial tcp
// 10.1.2.3:443: connection refused") describes this host's network, so it
// is kept in Err for the log and the message only says "provider
// unreachable".
func provisionUnreachable(err error) *ProvisionError {
	var pe *ProvisionError
	if errors.As(err, &pe) {
		return pe
	}
	return &ProvisionError{Status: http.StatusBadGateway, Message: "provider unreachable", Err: err}
}

// provisioner creates a provider's application from a configuration's
// credentials and returns the id to store.
type provisioner struct {
	// field is the config field holding the application id.
	field  string
	create func(ctx context.Context, creds map[string]any, t Target, opts Options) (string, error)
}

// provisioners are the providers whose configurations get an application
// created when theirs is absent (API.md 2.3).
var provisioners = map[string]provisioner{
	Plivo:     {field: "application_id", create: provisionPlivo},
	Vobiz:     {field: "application_id", create: provisionVobiz},
	Telnyx:    {field: "connection_id", create: provisionTelnyx},
	Cloudonix: {field: "application_name", create: provisionCloudonix},
}

// Provision creates the provider application of a configuration whose
// application field (ApplicationField) is absent or empty in creds, and
// returns that field and the created application's id; it returns "", ""
// when nothing was needed. A provider's refusal is a *ProvisionError.
func Provision(ctx context.Context, provider string, creds map[string]any, t Target, opts Options) (field, value string, err error) {
	p, ok := provisioners[provider]
	if !ok || credString(creds, p.field) != "" {
		return "", "", nil
	}
	id, err := p.create(ctx, creds, t, opts)
	if err != nil {
		return "", "", provisionUnreachable(err)
	}
	if id == "" {
		return "", "", &ProvisionError{Status: http.StatusBadGateway, Message: "the provider created the application but returned no id"}
	}
	return p.field, id, nil
}

// ApplicationField returns the config field an auto-created application's
// id is stored in, "" for providers without one.
func ApplicationField(provider string) string {
	return provisioners[provider].field
}
