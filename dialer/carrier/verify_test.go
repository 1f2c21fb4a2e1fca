package carrier

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	"github.com/outdial/outdial/dialer/carrier/arisim"
	"github.com/outdial/outdial/dialer/carrier/cloudonixsim"
	"github.com/outdial/outdial/dialer/carrier/plivosim"
	"github.com/outdial/outdial/dialer/carrier/telnyxsim"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/dialer/carrier/vonagesim"
)

// TestCheckCredentials: each provider's read-only check against its
// simulator accepts the simulator's credentials, says "refused" for a
// wrong secret (never showing it), and a refusal of another kind (an
// unknown domain) is not taken for refused credentials.
func TestCheckCredentials(t *testing.T) {
	otherKey := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(vonageTestKey(t))}))
	type sim struct {
		url   string
		creds map[string]any
		close func()
	}
	tests := []struct {
		provider string
		start    func() sim
		// secret is the field a wrong value of which must be refused.
		secret, wrong string
		request       string // the checked request's path and query
	}{
		{Twilio, func() sim {
			s := twiliosim.Start(twiliosim.Config{})
			return sim{s.URL(), s.Credentials(false), s.Close}
		}, "auth_token", "wrong-token-0123456789", "/2010-04-01/Accounts/" + twiliosim.DefaultAccountSID + ".json"},
		{Plivo, func() sim {
			s := plivosim.Start(plivosim.Config{})
			return sim{s.URL(), s.Credentials(false), s.Close}
		}, "auth_token", "wrong-token-0123456789", "/v1/Account/" + plivosim.DefaultPlivoAuthID + "/"},
		{Vobiz, func() sim {
			s := plivosim.Start(plivosim.Config{Dialect: plivosim.Vobiz})
			return sim{s.URL(), s.Credentials(false), s.Close}
		}, "auth_token", "wrong-token-0123456789", "/api/v1/Account/" + plivosim.DefaultVobizAuthID + "/"},
		{Telnyx, func() sim {
			s := telnyxsim.Start(telnyxsim.Config{})
			return sim{s.URL(), s.Credentials("conn", false, false), s.Close}
		}, "api_key", "KEYwrong0123456789", "/v2/balance"},
		{Vonage, func() sim {
			s := vonagesim.Start(vonagesim.Config{})
			return sim{s.URL(), s.Credentials(false), s.Close}
		}, "private_key", otherKey, "/v1/calls?page_size=1"},
		{Cloudonix, func() sim {
			s := cloudonixsim.Start(cloudonixsim.Config{})
			return sim{s.URL(), s.Credentials("app"), s.Close}
		}, "bearer_token", "wrong-bearer-0123456789", "/customers/self/domains/" + cloudonixsim.DefaultDomain},
		{ARI, func() sim {
			s := arisim.Start(arisim.Config{})
			return sim{s.URL(), s.Credentials(), s.Close}
		}, "app_password", "wrong-password-0123", "/ari/asterisk/info"},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.provider, func(t *testing.T) {
			s := tc.start()
			defer s.close()
			opts := Options{BaseURLs: map[string]string{tc.provider: s.url}}
			check, err := CheckCredentials(ctx, tc.provider, s.creds, opts)
			if err != nil {
				t.Fatalf("right credentials: %v", err)
			}
			if want := "GET " + s.url + tc.request; check.Request != want {
				t.Fatalf("request = %q, want %q", check.Request, want)
			}
			if got := APIBaseURL(tc.provider, s.creds, opts); got != s.url {
				t.Fatalf("APIBaseURL = %q, want %q", got, s.url)
			}
			wrong := map[string]any{}
			for k, v := range s.creds {
				wrong[k] = v
			}
			wrong[tc.secret] = tc.wrong
			check, err = CheckCredentials(ctx, tc.provider, wrong, opts)
			if !errors.Is(err, ErrCredentialsRefused) {
				t.Fatalf("wrong %s: %v, want ErrCredentialsRefused", tc.secret, err)
			}
			for _, secret := range []string{tc.wrong, s.creds[tc.secret].(string)} {
				if strings.Contains(err.Error(), secret) || strings.Contains(check.Request, secret) {
					t.Fatalf("a secret is shown: %q / %q", err, check.Request)
				}
			}
		})
	}
	t.Run("unknown cloudonix domain", func(t *testing.T) {
		s := cloudonixsim.Start(cloudonixsim.Config{})
		defer s.Close()
		creds := s.Credentials("app")
		creds["domain_id"] = "elsewhere.cloudonix.net"
		_, err := CheckCredentials(ctx, Cloudonix, creds, Options{BaseURLs: map[string]string{Cloudonix: s.URL()}})
		var e *Error
		if err == nil || errors.Is(err, ErrCredentialsRefused) || !errors.As(err, &e) || e.HTTPStatus != 404 {
			t.Fatalf("unknown domain: %v, want a 404 refusal that is not about credentials", err)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		s := twiliosim.Start(twiliosim.Config{})
		url := s.URL()
		s.Close()
		_, err := CheckCredentials(ctx, Twilio, s.Credentials(false), Options{BaseURLs: map[string]string{Twilio: url}})
		if err == nil || errors.Is(err, ErrCredentialsRefused) {
			t.Fatalf("unreachable: %v", err)
		}
	})
}
