package carrier

// Plivo Voice API (https://www.plivo.com/docs/voice/api/call/): the Plivo
// dialect of the shared core in plivo_core.go. Requests use HTTP Basic
// auth_id:auth_token under /v1; webhooks are signed with
// X-Plivo-Signature-V3, which covers the callback URL (query included) and
// the POST parameters.

import "context"

// plivoBaseURL is Plivo's REST API base URL, used unless
// Options.BaseURLs["plivo"] (OUTDIAL_PLIVO_API_URL) overrides it.
const plivoBaseURL = "https://api.plivo.com"

// plivoDialectPlivo is Plivo itself.
var plivoDialectPlivo = &plivoDialect{
	provider:    Plivo,
	defaultBase: plivoBaseURL,
	apiPrefix:   "/v1",
	verify:      plivoVerify,
}

// newPlivo binds a Plivo configuration's credentials (auth_id, auth_token,
// machine_detection; application_id is not needed to place calls).
func newPlivo(creds map[string]any, opts Options) (Carrier, error) {
	return newPlivoLike(plivoDialectPlivo, creds, opts), nil
}

// provisionPlivo creates the Plivo application of a configuration
// (POST /v1/Account/{auth_id}/Application/) and returns its app_id.
func provisionPlivo(ctx context.Context, creds map[string]any, t Target, opts Options) (string, error) {
	return provisionPlivoLike(ctx, plivoDialectPlivo, creds, t, opts)
}
