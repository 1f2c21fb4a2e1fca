package carrier

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// CredentialCheck is the one read-only request CheckCredentials sends for a
// configuration, described without any secret.
type CredentialCheck struct {
	// Request is the method and URL, e.g. "GET
	// https://api.twilio.com/2010-04-01/Accounts/AC….json" (ids of the
	// account or domain are in it; tokens and keys never are).
	Request string
}

// ErrCredentialsRefused is matched (errors.Is) by the error of a check the
// provider refused for the credentials (HTTP 401 or 403).
var ErrCredentialsRefused = errors.New("the provider refused the credentials")

// CheckCredentials sends one read-only request with a configuration's
// credentials (the stored creds of provider) and reports whether the
// provider accepts them:
//
//   - Twilio: GET {base}/2010-04-01/Accounts/{account_sid}.json (the
//     account resource);
//   - Plivo: GET {base}/v1/Account/{auth_id}/ and Vobiz: GET
//     {base}/api/v1/Account/{auth_id}/ (the account's details);
//   - Telnyx: GET {base}/v2/balance (the API key's account balance);
//   - Vonage: GET {base}/v1/calls?page_size=1 with the application's JWT
//     (the key pair and application id the dialer signs with);
//   - Cloudonix: GET {base}/customers/self/domains/{domain_id};
//   - ARI: GET {ari_endpoint}/ari/asterisk/info.
//
// {base} is the provider's API base URL, opts.BaseURLs overriding it
// (OUTDIAL_*_API_URL). The error wraps ErrCredentialsRefused when the
// provider answered 401 or 403, is a *Error for another refusal (an
// unknown account or domain: 404) and a *ServerError or a transport error
// when the provider could not say (5xx, unreachable). Neither the returned
// description nor an error holds a secret.
func CheckCredentials(ctx context.Context, provider string, creds map[string]any, opts Options) (CredentialCheck, error) {
	c, err := New(provider, creds, opts)
	if err != nil {
		return CredentialCheck{}, err
	}
	var u string
	var do func(ctx context.Context, u string) error
	switch t := c.(type) {
	case *twilio:
		u = t.base + "/2010-04-01/Accounts/" + url.PathEscape(t.accountSID) + ".json"
		do = func(ctx context.Context, u string) error { return t.do(ctx, http.MethodGet, u, nil, nil) }
	case *plivoLike:
		u = t.accountURL()
		do = func(ctx context.Context, u string) error { return t.do(ctx, http.MethodGet, u, nil, nil) }
	case *telnyx:
		u = t.base + "/v2/balance"
		do = func(ctx context.Context, u string) error { return t.do(ctx, http.MethodGet, u, nil, nil) }
	case *vonage:
		u = t.base + "/v1/calls?page_size=1"
		do = func(ctx context.Context, u string) error { return t.do(ctx, http.MethodGet, u, nil, nil) }
	case *cloudonix:
		u = t.base + "/customers/self/domains/" + url.PathEscape(t.domain)
		do = func(ctx context.Context, u string) error { return t.do(ctx, http.MethodGet, u, nil, nil) }
	case *ari:
		u = t.base + "/ari/asterisk/info"
		do = func(ctx context.Context, u string) error {
			_, err := t.do(ctx, http.MethodGet, u, nil, nil)
			return err
		}
	default:
		return CredentialCheck{}, fmt.Errorf("provider %q has no credential check", provider)
	}
	check := CredentialCheck{Request: http.MethodGet + " " + u}
	err = do(ctx, u)
	if e := (*Error)(nil); errors.As(err, &e) && e.Kind == AuthFailed {
		return check, fmt.Errorf("%w (http %d): %s", ErrCredentialsRefused, e.HTTPStatus, e.Message)
	}
	return check, err
}

// APIBaseURL returns the base URL of provider's API that a configuration
// with creds calls: the provider's public API (opts.BaseURLs overriding
// it), or for ARI the configuration's ari_endpoint. "" when unknown.
func APIBaseURL(provider string, creds map[string]any, opts Options) string {
	c, err := New(provider, creds, opts)
	if err != nil {
		return ""
	}
	switch t := c.(type) {
	case *twilio:
		return t.base
	case *plivoLike:
		return t.base
	case *telnyx:
		return t.base
	case *vonage:
		return t.base
	case *cloudonix:
		return t.base
	case *ari:
		return strings.TrimRight(t.base, "/")
	}
	return ""
}
