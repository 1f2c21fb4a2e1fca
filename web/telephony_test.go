package web_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var timestampRe = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

func TestProvidersList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.a(http.MethodGet, providersPath, nil)
	wantStatus(t, r, http.StatusOK)
	list, ok := r.obj(t)["providers"].([]any)
	if !ok {
		t.Fatalf("providers is not a list: %s", r.Raw)
	}
	type want struct {
		required, optional, sensitive []string
	}
	wants := map[string]want{
		"ari":       {[]string{"ari_endpoint", "app_name", "app_password"}, []string{"ws_client_name", "dial_template"}, []string{"app_password"}},
		"cloudonix": {[]string{"bearer_token", "domain_id"}, []string{"application_name"}, []string{"bearer_token"}},
		"plivo":     {[]string{"auth_id", "auth_token"}, []string{"application_id", "machine_detection"}, []string{"auth_token"}},
		"telnyx":    {[]string{"api_key"}, []string{"connection_id", "webhook_public_key", "machine_detection"}, []string{"api_key"}},
		"twilio":    {[]string{"account_sid", "auth_token"}, []string{"machine_detection"}, []string{"auth_token"}},
		"vobiz":     {[]string{"auth_id", "auth_token"}, []string{"application_id"}, []string{"auth_token"}},
		"vonage": {[]string{"api_key", "api_secret", "application_id", "private_key"}, []string{"signature_secret", "machine_detection"},
			[]string{"api_secret", "private_key", "signature_secret"}},
	}
	var names []string
	for _, item := range list {
		p := item.(map[string]any)
		name, _ := p["provider"].(string)
		names = append(names, name)
		if dn, _ := p["display_name"].(string); dn == "" {
			t.Errorf("%s: display_name is empty", name)
		}
		w, known := wants[name]
		if !known {
			t.Errorf("unexpected provider %q", name)
			continue
		}
		var required, optional, sensitive []string
		for _, fi := range p["fields"].([]any) {
			f := fi.(map[string]any)
			fn := f["name"].(string)
			if typ := f["type"]; typ != "string" && typ != "boolean" {
				t.Errorf("%s.%s: type = %v", name, fn, typ)
			}
			if fn == "machine_detection" && f["type"] != "boolean" {
				t.Errorf("%s.machine_detection: type = %v, want boolean", name, f["type"])
			}
			if d, _ := f["description"].(string); d == "" {
				t.Errorf("%s.%s: description is empty", name, fn)
			}
			if f["required"] == true {
				required = append(required, fn)
			} else {
				optional = append(optional, fn)
			}
			if f["sensitive"] == true {
				sensitive = append(sensitive, fn)
			}
		}
		if !sameSet(required, w.required) || !sameSet(optional, w.optional) || !sameSet(sensitive, w.sensitive) {
			t.Errorf("%s: required %v optional %v sensitive %v, want %v %v %v", name, required, optional, sensitive, w.required, w.optional, w.sensitive)
		}
	}
	if !slices.Equal(names, providerNames) {
		t.Fatalf("providers = %v, want %v (sorted)", names, providerNames)
	}
}

// TestCreateEveryProvider creates one configuration of each provider and
// checks the detail form field by field, the GET of it, and that the store
// keeps the secrets themselves (masking is a matter of responses only).
func TestCreateEveryProvider(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i, provider := range providerNames {
		t.Run(provider, func(t *testing.T) {
			cfg := validConfig(provider)
			got := e.createConfig(e.keyA, "cfg-"+provider, false, cfg)
			wantKeys := []string{"id", "name", "provider", "is_default_outbound", "credentials", "phone_number_count", "created_at", "updated_at"}
			if !sameSet(keys(got), wantKeys) {
				t.Errorf("keys = %v, want %v", keys(got), wantKeys)
			}
			cid := id(t, got, "id")
			if cid != int64(i+1) {
				t.Errorf("id = %d, want %d", cid, i+1)
			}
			if got["name"] != "cfg-"+provider || got["provider"] != provider || got["is_default_outbound"] != false || got["phone_number_count"] != float64(0) {
				t.Errorf("detail = %v", got)
			}
			if want := wantCredentials(provider); !equalJSON(got["credentials"], want) {
				t.Errorf("credentials = %v\nwant %v", got["credentials"], want)
			}
			for _, f := range []string{"created_at", "updated_at"} {
				if s, _ := got[f].(string); !timestampRe.MatchString(s) {
					t.Errorf("%s = %v, want RFC 3339 UTC with Z", f, got[f])
				}
			}
			r := e.a(http.MethodGet, configPath(cid), nil)
			wantStatus(t, r, http.StatusOK)
			if !equalJSON(r.Body, got) {
				t.Errorf("GET = %s\nwant %v", r.Raw, got)
			}
			stored, err := e.db.GetTelephonyConfig(context.Background(), e.orgA, cid)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range cfg {
				if k == "provider" {
					continue
				}
				if stored.Credentials[k] != v {
					t.Errorf("stored %s = %v, want %v", k, stored.Credentials[k], v)
				}
			}
		})
	}
}

func TestCreateOptionalFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name    string
		config  map[string]any
		wantSub map[string]any // credentials fields to check
	}{
		{"ari optional set", with(validConfig("ari"), "ws_client_name", "media", "dial_template", "PJSIP/{number}@trunk"),
			map[string]any{"ws_client_name": "media", "dial_template": "PJSIP/{number}@trunk"}},
		{"ari https endpoint", with(validConfig("ari"), "ari_endpoint", "https://10.0.0.5:8089/ari"), map[string]any{"ari_endpoint": "https://10.0.0.5:8089/ari"}},
		{"ari empty dial_template is the default", with(validConfig("ari"), "dial_template", ""), map[string]any{"dial_template": "PJSIP/{number}"}},
		{"telnyx without public key", without(validConfig("telnyx"), "webhook_public_key"), map[string]any{"webhook_public_key": nil}},
		{"telnyx null public key", with(validConfig("telnyx"), "webhook_public_key", nil), map[string]any{"webhook_public_key": nil}},
		{"telnyx connection and detection", with(validConfig("telnyx"), "connection_id", "conn-1", "machine_detection", true),
			map[string]any{"connection_id": "conn-1", "machine_detection": true}},
		{"vonage without signature secret", without(validConfig("vonage"), "signature_secret"), map[string]any{"signature_secret": nil}},
		{"vonage pkcs8 key", with(validConfig("vonage"), "private_key", rsaPKCS8PEM), map[string]any{"private_key": mask(rsaPKCS8PEM)}},
		{"plivo application id", with(validConfig("plivo"), "application_id", "app-77"), map[string]any{"application_id": "app-77"}},
		{"vobiz application id", with(validConfig("vobiz"), "application_id", "app-78"), map[string]any{"application_id": "app-78"}},
		{"cloudonix application name", with(validConfig("cloudonix"), "application_name", "outdial-app"), map[string]any{"application_name": "outdial-app"}},
		{"twilio machine detection lax string", with(validConfig("twilio"), "machine_detection", "true"), map[string]any{"machine_detection": true}},
		{"twilio machine detection null", with(validConfig("twilio"), "machine_detection", nil), map[string]any{"machine_detection": false}},
		{"unknown keys ignored", with(validConfig("twilio"), "region", "ie1", "edge", 7), map[string]any{"machine_detection": false}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := e.createConfig(e.keyA, "opt-"+string(rune('a'+i)), false, tt.config)
			creds := got["credentials"].(map[string]any)
			for k, v := range tt.wantSub {
				if !equalJSON(creds[k], v) {
					t.Errorf("credentials.%s = %#v, want %#v", k, creds[k], v)
				}
			}
			for _, k := range []string{"provider", "from_numbers", "region", "edge"} {
				if _, has := creds[k]; has {
					t.Errorf("credentials has %q: %v", k, creds)
				}
			}
		})
	}
}

func TestCreateFromNumbersIgnored(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := with(validConfig("twilio"), "from_numbers", []string{"+14155552671", "+14155552672"})
	got := e.createConfig(e.keyA, "main", false, cfg)
	if !equalJSON(got["credentials"], wantCredentials("twilio")) {
		t.Errorf("credentials = %v", got["credentials"])
	}
	if got["phone_number_count"] != float64(0) {
		t.Errorf("phone_number_count = %v, want 0", got["phone_number_count"])
	}
	r := e.a(http.MethodGet, numbersPath(id(t, got, "id")), nil)
	wantStatus(t, r, http.StatusOK)
	if n := len(r.obj(t)["phone_numbers"].([]any)); n != 0 {
		t.Errorf("phone numbers = %d, want 0", n)
	}
	// The ignored field is still type-checked as the schema declares it.
	r = e.a(http.MethodPost, configsPath, configBody("x", false, with(validConfig("twilio"), "from_numbers", "+14155552671")))
	wantProblems(t, r, "body.config.from_numbers list_type")
	r = e.a(http.MethodPost, configsPath, configBody("x", false, with(validConfig("twilio"), "from_numbers", []any{"+1", 5})))
	wantProblems(t, r, "body.config.from_numbers.1 string_type")
}

func ecPEM(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// TestConfigFieldValidation checks each provider's field rules: every
// violation is a 422 at ["body","config",field] with its pydantic type.
func TestConfigFieldValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ec := ecPEM(t)
	e.addSecret(pemSecretLines(ec)...)
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString(make([]byte, n)) }
	garbagePEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: []byte("not der at all, secret-ish 123456")}))
	tests := []struct {
		name   string
		config map[string]any
		want   []string
	}{
		{"ari endpoint without scheme", with(validConfig("ari"), "ari_endpoint", "pbx.example:8088"), []string{"body.config.ari_endpoint value_error"}},
		{"ari endpoint ftp", with(validConfig("ari"), "ari_endpoint", "ftp://pbx.example"), []string{"body.config.ari_endpoint value_error"}},
		{"ari endpoint relative", with(validConfig("ari"), "ari_endpoint", "/ari"), []string{"body.config.ari_endpoint value_error"}},
		{"ari endpoint no host", with(validConfig("ari"), "ari_endpoint", "http://"), []string{"body.config.ari_endpoint value_error"}},
		{"ari endpoint empty", with(validConfig("ari"), "ari_endpoint", ""), []string{"body.config.ari_endpoint string_too_short"}},
		{"ari endpoint number", with(validConfig("ari"), "ari_endpoint", 8088), []string{"body.config.ari_endpoint string_type"}},
		{"ari missing password", without(validConfig("ari"), "app_password"), []string{"body.config.app_password missing"}},
		{"ari null password", with(validConfig("ari"), "app_password", nil), []string{"body.config.app_password string_type"}},
		{"ari empty app name", with(validConfig("ari"), "app_name", ""), []string{"body.config.app_name string_too_short"}},
		{"ari ws client name not string", with(validConfig("ari"), "ws_client_name", true), []string{"body.config.ws_client_name string_type"}},
		{"cloudonix missing both", without(validConfig("cloudonix"), "bearer_token", "domain_id"),
			[]string{"body.config.bearer_token missing", "body.config.domain_id missing"}},
		{"plivo missing auth id", without(validConfig("plivo"), "auth_id"), []string{"body.config.auth_id missing"}},
		{"plivo detection not bool", with(validConfig("plivo"), "machine_detection", "maybe"), []string{"body.config.machine_detection bool_parsing"}},
		{"plivo detection list", with(validConfig("plivo"), "machine_detection", []any{}), []string{"body.config.machine_detection bool_type"}},
		{"telnyx missing api key", without(validConfig("telnyx"), "api_key"), []string{"body.config.api_key missing"}},
		{"telnyx key not base64", with(validConfig("telnyx"), "webhook_public_key", "not base64!"), []string{"body.config.webhook_public_key value_error"}},
		{"telnyx key 31 bytes", with(validConfig("telnyx"), "webhook_public_key", b64(31)), []string{"body.config.webhook_public_key value_error"}},
		{"telnyx key 33 bytes", with(validConfig("telnyx"), "webhook_public_key", b64(33)), []string{"body.config.webhook_public_key value_error"}},
		{"twilio missing both", without(validConfig("twilio"), "account_sid", "auth_token"),
			[]string{"body.config.account_sid missing", "body.config.auth_token missing"}},
		{"twilio empty token", with(validConfig("twilio"), "auth_token", ""), []string{"body.config.auth_token string_too_short"}},
		{"vobiz token number", with(validConfig("vobiz"), "auth_token", 123456789), []string{"body.config.auth_token string_type"}},
		{"vonage key not pem", with(validConfig("vonage"), "private_key", "not-a-pem-S3cr3t-9999"), []string{"body.config.private_key value_error"}},
		{"vonage key ec", with(validConfig("vonage"), "private_key", ec), []string{"body.config.private_key value_error"}},
		{"vonage key garbage der", with(validConfig("vonage"), "private_key", garbagePEM), []string{"body.config.private_key value_error"}},
		{"vonage missing four", without(validConfig("vonage"), "api_key", "api_secret", "application_id", "private_key"),
			[]string{"body.config.api_key missing", "body.config.api_secret missing", "body.config.application_id missing", "body.config.private_key missing"}},
		{"vonage signature secret number", with(validConfig("vonage"), "signature_secret", 5), []string{"body.config.signature_secret string_type"}},
	}
	e.addSecret("not-a-pem-S3cr3t-9999", "123456789")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.a(http.MethodPost, configsPath, configBody("bad", false, tt.config))
			ps := wantProblems(t, r, tt.want...)
			for _, p := range ps {
				if p.Type == "value_error" && !strings.HasPrefix(p.Msg, "Value error, ") {
					t.Errorf("value_error msg = %q, want prefix %q", p.Msg, "Value error, ")
				}
				if p.Type == "missing" && p.Msg != "Field required" {
					t.Errorf("missing msg = %q", p.Msg)
				}
				if p.Type == "string_too_short" && (p.Ctx["min_length"] != float64(1) || p.Msg != "String should have at least 1 character") {
					t.Errorf("string_too_short = %+v", p)
				}
			}
		})
	}
	// Nothing was saved by any of them.
	r := e.a(http.MethodGet, configsPath, nil)
	wantStatus(t, r, http.StatusOK)
	if n := len(r.obj(t)["configurations"].([]any)); n != 0 {
		t.Fatalf("configurations = %d, want 0", n)
	}
}

func TestUnionTag(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const expected = "'ari', 'cloudonix', 'plivo', 'telnyx', 'twilio', 'vobiz', 'vonage'"
	t.Run("missing provider", func(t *testing.T) {
		r := e.a(http.MethodPost, configsPath, configBody("x", false, without(validConfig("twilio"), "provider")))
		p := wantProblems(t, r, "body.config union_tag_not_found")[0]
		if p.Msg != "Unable to extract tag using discriminator 'provider'" || p.Ctx["discriminator"] != "'provider'" {
			t.Errorf("problem = %+v", p)
		}
		in, _ := p.Input.(map[string]any)
		if in["auth_token"] != mask(twilioToken) || in["account_sid"] != "AC0000000000000001" {
			t.Errorf("input = %v, want the config with auth_token masked", p.Input)
		}
	})
	t.Run("null provider", func(t *testing.T) {
		r := e.a(http.MethodPost, configsPath, configBody("x", false, with(validConfig("twilio"), "provider", nil)))
		wantProblems(t, r, "body.config union_tag_not_found")
	})
	t.Run("unknown provider", func(t *testing.T) {
		cfg := with(validConfig("vonage"), "provider", "sipgate")
		r := e.a(http.MethodPost, configsPath, configBody("x", false, cfg))
		p := wantProblems(t, r, "body.config union_tag_invalid")[0]
		wantMsg := "Input tag 'sipgate' found using 'provider' does not match any of the expected tags: " + expected
		if p.Msg != wantMsg {
			t.Errorf("msg = %q, want %q", p.Msg, wantMsg)
		}
		wantCtx := map[string]any{"discriminator": "'provider'", "tag": "sipgate", "expected_tags": expected}
		if !equalJSON(p.Ctx, wantCtx) {
			t.Errorf("ctx = %v, want %v", p.Ctx, wantCtx)
		}
		in, _ := p.Input.(map[string]any)
		for _, f := range []string{"api_secret", "private_key", "signature_secret"} {
			if in[f] != mask(cfg[f].(string)) {
				t.Errorf("input.%s = %v, want masked", f, in[f])
			}
		}
	})
	t.Run("provider wrong case", func(t *testing.T) {
		r := e.a(http.MethodPost, configsPath, configBody("x", false, with(validConfig("twilio"), "provider", "Twilio")))
		wantProblems(t, r, "body.config union_tag_invalid")
	})
	t.Run("provider number", func(t *testing.T) {
		r := e.a(http.MethodPost, configsPath, configBody("x", false, with(validConfig("twilio"), "provider", 7)))
		wantProblems(t, r, "body.config union_tag_invalid")
	})
}

func TestCreateTopLevelValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	long := strings.Repeat("n", 65)
	tests := []struct {
		name string
		body any
		want []string
	}{
		{"missing name", without(configBody("", false, validConfig("twilio")), "name"), []string{"body.name missing"}},
		{"empty name", configBody("", false, validConfig("twilio")), []string{"body.name string_too_short"}},
		{"long name", configBody(long, false, validConfig("twilio")), []string{"body.name string_too_long"}},
		{"name number", with(configBody("", false, validConfig("twilio")), "name", 12), []string{"body.name string_type"}},
		{"name null", with(configBody("", false, validConfig("twilio")), "name", nil), []string{"body.name string_type"}},
		{"default not bool", with(configBody("x", false, validConfig("twilio")), "is_default_outbound", "perhaps"), []string{"body.is_default_outbound bool_parsing"}},
		{"default number 2", with(configBody("x", false, validConfig("twilio")), "is_default_outbound", 2), []string{"body.is_default_outbound bool_parsing"}},
		{"default object", with(configBody("x", false, validConfig("twilio")), "is_default_outbound", map[string]any{}), []string{"body.is_default_outbound bool_type"}},
		{"missing config", map[string]any{"name": "x"}, []string{"body.config missing"}},
		{"config string", map[string]any{"name": "x", "config": "twilio"}, []string{"body.config model_type"}},
		{"config list", map[string]any{"name": "x", "config": []any{}}, []string{"body.config model_type"}},
		{"config null", map[string]any{"name": "x", "config": nil}, []string{"body.config model_type"}},
		{"empty object", map[string]any{}, []string{"body.name missing", "body.config missing"}},
		{"several at once", map[string]any{"name": "", "is_default_outbound": "x",
			"config": with(without(validConfig("twilio"), "auth_token"), "machine_detection", "x", "account_sid", 5)},
			[]string{"body.name string_too_short", "body.is_default_outbound bool_parsing", "body.config.auth_token missing",
				"body.config.machine_detection bool_parsing", "body.config.account_sid string_type"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.a(http.MethodPost, configsPath, tt.body)
			ps := wantProblems(t, r, tt.want...)
			for _, p := range ps {
				if p.Type == "string_too_long" && (p.Ctx["max_length"] != float64(64) || p.Msg != "String should have at most 64 characters" || p.Input != long) {
					t.Errorf("string_too_long = %+v", p)
				}
				if p.Type == "missing" && p.Loc[1] == "name" {
					// input is the whole body; it must not carry a secret (checked
					// by the harness) but must still be the object sent.
					if _, ok := p.Input.(map[string]any); !ok {
						t.Errorf("missing input = %#v, want the body object", p.Input)
					}
				}
			}
		})
	}
	t.Run("64 characters and unicode are fine", func(t *testing.T) {
		e.createConfig(e.keyA, strings.Repeat("n", 64), false, validConfig("twilio"))
		e.createConfig(e.keyA, strings.Repeat("é", 64), false, validConfig("twilio"))
	})
}

// TestValidationNeverEchoesSecrets sends invalid configurations that carry
// secrets and checks every problem's input: a secret shows only masked. The
// harness also checks the raw bodies for every fixture secret.
func TestValidationNeverEchoesSecrets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, provider := range providerNames {
		t.Run(provider, func(t *testing.T) {
			cfg := validConfig(provider)
			// A bad name and an unknown key make the body invalid while the
			// config carries every secret.
			r := e.a(http.MethodPost, configsPath, map[string]any{"name": "", "config": cfg})
			wantProblems(t, r, "body.name string_too_short")
			r = e.a(http.MethodPost, configsPath, map[string]any{"config": cfg})
			p := wantProblems(t, r, "body.name missing")[0]
			in, _ := p.Input.(map[string]any)
			echoed, _ := in["config"].(map[string]any)
			for k, v := range cfg {
				if s, ok := v.(string); ok && slices.Contains(sensitiveFields[provider], k) && echoed[k] != mask(s) {
					t.Errorf("input.config.%s = %v, want %q", k, echoed[k], mask(s))
				}
			}
			// A config that misses one required field echoes the others masked.
			req := requiredFields[provider][0]
			r = e.a(http.MethodPost, configsPath, configBody("x", false, without(cfg, req)))
			p = wantProblems(t, r, "body.config."+req+" missing")[0]
			in, _ = p.Input.(map[string]any)
			for k, v := range cfg {
				if s, ok := v.(string); ok && k != req && slices.Contains(sensitiveFields[provider], k) && in[k] != mask(s) {
					t.Errorf("input.%s = %v, want %q", k, in[k], mask(s))
				}
			}
			// A sensitive field of the wrong type is not echoed in clear.
			sf := sensitiveFields[provider][0]
			r = e.a(http.MethodPost, configsPath, configBody("x", false, with(cfg, sf, 98765432)))
			p = wantProblems(t, r, "body.config."+sf+" string_type")[0]
			if equalJSON(p.Input, 98765432) {
				t.Errorf("input = %v, want it masked", p.Input)
			}
		})
	}
}

// sensitiveFields and requiredFields per provider, from API.md 2.1.
var sensitiveFields = map[string][]string{
	"ari": {"app_password"}, "cloudonix": {"bearer_token"}, "plivo": {"auth_token"}, "telnyx": {"api_key"},
	"twilio": {"auth_token"}, "vobiz": {"auth_token"}, "vonage": {"api_secret", "private_key", "signature_secret"},
}

var requiredFields = map[string][]string{
	"ari": {"ari_endpoint", "app_name", "app_password"}, "cloudonix": {"bearer_token", "domain_id"},
	"plivo": {"auth_id", "auth_token"}, "telnyx": {"api_key"}, "twilio": {"account_sid", "auth_token"},
	"vobiz": {"auth_id", "auth_token"}, "vonage": {"api_key", "api_secret", "application_id", "private_key"},
}

func TestListConfigs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.a(http.MethodGet, configsPath, nil)
	wantStatus(t, r, http.StatusOK)
	if !equalJSON(r.Body, map[string]any{"configurations": []any{}}) {
		t.Fatalf("empty list = %s, want {\"configurations\":[]}", r.Raw)
	}
	var created []map[string]any
	for i, p := range providerNames {
		created = append(created, e.createConfig(e.keyA, "list-"+p, i == 2, validConfig(p)))
	}
	r = e.a(http.MethodGet, configsPath, nil)
	wantStatus(t, r, http.StatusOK)
	list := r.obj(t)["configurations"].([]any)
	if len(list) != len(created) {
		t.Fatalf("len = %d, want %d", len(list), len(created))
	}
	for i, item := range list {
		it := item.(map[string]any)
		want := without(created[i], "credentials")
		if !equalJSON(it, want) {
			t.Errorf("item %d = %v\nwant %v", i, it, want)
		}
	}
}

func TestGetUnknownConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		var body any
		if m == http.MethodPut {
			body = map[string]any{"name": "x"}
		}
		r := e.a(m, configPath(999), body)
		wantDetail(t, r, http.StatusNotFound, "telephony configuration 999 not found")
	}
}

func TestDeleteConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c1 := id(t, e.createConfig(e.keyA, "one", true, validConfig("twilio")), "id")
	c2 := id(t, e.createConfig(e.keyA, "two", false, validConfig("twilio")), "id")
	n := e.createNumber(e.keyA, c1, map[string]any{"address": "+14155552671"})
	r := e.a(http.MethodDelete, configPath(c1), nil)
	wantStatus(t, r, http.StatusNoContent)
	if len(r.Raw) != 0 {
		t.Errorf("204 body = %q, want empty", r.Raw)
	}
	wantDetail(t, e.a(http.MethodGet, configPath(c1), nil), http.StatusNotFound, "telephony configuration "+itoa(c1)+" not found")
	wantDetail(t, e.a(http.MethodDelete, configPath(c1), nil), http.StatusNotFound, "telephony configuration "+itoa(c1)+" not found")
	wantDetail(t, e.a(http.MethodGet, numbersPath(c1), nil), http.StatusNotFound, "telephony configuration "+itoa(c1)+" not found")
	wantStatus(t, e.a(http.MethodPut, numberPath(c1, id(t, n, "id")), map[string]any{"label": "x"}), http.StatusNotFound)
	list := e.a(http.MethodGet, configsPath, nil).obj(t)["configurations"].([]any)
	if len(list) != 1 || id(t, list[0].(map[string]any), "id") != c2 {
		t.Fatalf("list after delete = %v", list)
	}
	// Its phone numbers went with it: the address is free again.
	e.createNumber(e.keyA, c2, map[string]any{"address": "+14155552671"})
	// And the name.
	e.createConfig(e.keyA, "one", false, validConfig("plivo"))
}
