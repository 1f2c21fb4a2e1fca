package carrier

// Vobiz Voice API (https://docs.vobiz.ai/call/make-call): the Vobiz dialect
// of the shared core in plivo_core.go. Vobiz copies Plivo's resources, JSON
// fields, XML and callback parameters; requests authenticate with the
// X-Auth-ID and X-Auth-Token headers under /api/v1, and webhooks are signed
// with X-Vobiz-Signature-V3 (else -V2), which covers only the callback URL
// without its query, plus a nonce.
//
// API.md 2.1 gives Vobiz configurations no machine_detection field;
// providers.md §6 lists the same machine_detection parameters as Plivo's,
// so detection is asked for when a Call sets MachineDetection (or a
// machine_detection credential is present), and a Machine verdict in a
// callback is read as for Plivo.

import "context"

// vobizBaseURL is Vobiz's REST API base URL, used unless
// Options.BaseURLs["vobiz"] (OUTDIAL_VOBIZ_API_URL) overrides it.
const vobizBaseURL = "https://api.vobiz.ai"

// plivoDialectVobiz is Vobiz.
var plivoDialectVobiz = &plivoDialect{
	provider:    Vobiz,
	defaultBase: vobizBaseURL,
	apiPrefix:   "/api/v1",
	headerAuth:  true,
	verify:      vobizVerify,
}

// newVobiz binds a Vobiz configuration's credentials (auth_id, auth_token;
// application_id is not needed to place calls).
func newVobiz(creds map[string]any, opts Options) (Carrier, error) {
	return newPlivoLike(plivoDialectVobiz, creds, opts), nil
}

// provisionVobiz creates the Vobiz application of a configuration
// (POST /api/v1/Account/{auth_id}/Application/) and returns its app_id.
func provisionVobiz(ctx context.Context, creds map[string]any, t Target, opts Options) (string, error) {
	return provisionPlivoLike(ctx, plivoDialectVobiz, creds, t, opts)
}
