// Package carrier describes the telephony providers Outdial can dial through
// and, per provider, how to place, query and hang up calls, answer them and
// verify their webhooks. This file is the catalogue: each provider's
// configuration fields, which of them are secrets, and how each is checked.
package carrier

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"net/url"
	"sort"
	"strings"
)

// Provider names, the values of a configuration's `provider` discriminator.
const (
	ARI       = "ari"
	Cloudonix = "cloudonix"
	Plivo     = "plivo"
	Telnyx    = "telnyx"
	Twilio    = "twilio"
	Vobiz     = "vobiz"
	Vonage    = "vonage"
)

// Field types of a provider configuration field.
const (
	TypeString = "string"
	TypeBool   = "boolean"
)

// Field describes one field of a provider's `config` object.
type Field struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Required    bool   `json:"required"`
	Sensitive   bool   `json:"sensitive"`
	Description string `json:"description"`
	// Default is the value stored when the field is absent on create: a
	// string, a bool, or nil (JSON null).
	Default any `json:"-"`
	// Check validates a non-empty string value; its error message is shown to
	// the client after "Value error, ".
	Check func(string) error `json:"-"`
}

// Spec is one provider of the catalogue.
type Spec struct {
	Provider    string  `json:"provider"`
	DisplayName string  `json:"display_name"`
	Fields      []Field `json:"fields"`
	// RatePerSecond is the default campaign pacing (new calls per second).
	RatePerSecond float64 `json:"-"`
}

// Field returns the named field and whether the provider has it.
func (s Spec) Field(name string) (Field, bool) {
	for _, f := range s.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

func str(name, desc string, required, sensitive bool) Field {
	return Field{Name: name, Type: TypeString, Required: required, Sensitive: sensitive, Description: desc}
}

func optStr(name, desc string, def any) Field {
	return Field{Name: name, Type: TypeString, Description: desc, Default: def}
}

func machineDetection() Field {
	return Field{Name: "machine_detection", Type: TypeBool, Default: false,
		Description: "Ask the provider to tell a person from an answering machine; a machine answer is the voicemail outcome."}
}

var specs = map[string]Spec{
	ARI: {Provider: ARI, DisplayName: "Asterisk (ARI)", RatePerSecond: 10, Fields: []Field{
		withCheck(str("ari_endpoint", "Base URL of the Asterisk REST Interface, e.g. http://pbx.example:8088.", true, false), checkHTTPURL),
		str("app_name", "Stasis application name registered in Asterisk (also the ARI user name).", true, false),
		str("app_password", "Password of the ARI user.", true, true),
		optStr("ws_client_name", "Name of the websocket client configuration used for external media.", ""),
		optStr("dial_template", "Dial string; {number} is replaced by the dialled number, e.g. PJSIP/{number}@trunk.", "PJSIP/{number}"),
	}},
	Cloudonix: {Provider: Cloudonix, DisplayName: "Cloudonix", RatePerSecond: 1, Fields: []Field{
		str("bearer_token", "Cloudonix API bearer token.", true, true),
		str("domain_id", "Cloudonix domain id or name.", true, false),
		optStr("application_name", "Voice application name; created automatically when absent.", ""),
	}},
	Plivo: {Provider: Plivo, DisplayName: "Plivo", RatePerSecond: 2, Fields: []Field{
		str("auth_id", "Plivo Auth ID.", true, false),
		str("auth_token", "Plivo Auth Token.", true, true),
		optStr("application_id", "Plivo application id; created automatically when absent.", ""),
		machineDetection(),
	}},
	Telnyx: {Provider: Telnyx, DisplayName: "Telnyx", RatePerSecond: 10, Fields: []Field{
		str("api_key", "Telnyx API v2 key.", true, true),
		optStr("connection_id", "Call Control application (connection) id; created automatically when absent.", ""),
		withCheck(optStr("webhook_public_key", "Base64 Ed25519 public key that verifies Telnyx webhook signatures.", nil), checkEd25519Key),
		machineDetection(),
	}},
	Twilio: {Provider: Twilio, DisplayName: "Twilio", RatePerSecond: 1, Fields: []Field{
		str("account_sid", "Twilio Account SID (AC...).", true, false),
		str("auth_token", "Twilio Auth Token; also verifies X-Twilio-Signature on webhooks.", true, true),
		machineDetection(),
	}},
	Vobiz: {Provider: Vobiz, DisplayName: "Vobiz", RatePerSecond: 2, Fields: []Field{
		str("auth_id", "Vobiz Auth ID.", true, false),
		str("auth_token", "Vobiz Auth Token.", true, true),
		optStr("application_id", "Vobiz application id; created automatically when absent.", ""),
	}},
	Vonage: {Provider: Vonage, DisplayName: "Vonage", RatePerSecond: 3, Fields: []Field{
		str("api_key", "Vonage API key.", true, false),
		str("api_secret", "Vonage API secret.", true, true),
		str("application_id", "Vonage Voice application id.", true, false),
		withCheck(str("private_key", "PEM RSA private key of the application, used to sign API JWTs.", true, true), checkRSAPrivateKey),
		Field{Name: "signature_secret", Type: TypeString, Sensitive: true, Default: nil,
			Description: "Signature secret that verifies Vonage signed webhooks (HS256 JWT)."},
		machineDetection(),
	}},
}

func withCheck(f Field, check func(string) error) Field {
	f.Check = check
	return f
}

// Lookup returns the spec of provider p.
func Lookup(p string) (Spec, bool) {
	s, ok := specs[p]
	return s, ok
}

// Specs returns every provider's spec sorted by provider name.
func Specs() []Spec {
	out := make([]Spec, 0, len(specs))
	for _, s := range specs {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Provider < out[j].Provider })
	return out
}

// Names returns the provider names sorted.
func Names() []string {
	out := make([]string, 0, len(specs))
	for p := range specs {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Mask hides a sensitive value: every character but the last 4 becomes '*',
// keeping the length in characters; 4 characters or fewer are all '*'; an
// empty value stays empty.
func Mask(v string) string {
	r := []rune(v)
	keep := 0
	if len(r) > 4 {
		keep = 4
	}
	return strings.Repeat("*", len(r)-keep) + string(r[len(r)-keep:])
}

func checkHTTPURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("must be an absolute http or https URL")
	}
	return nil
}

func checkEd25519Key(v string) error {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
	if err != nil || len(b) != 32 {
		return errors.New("must be the base64 encoding of a 32-byte Ed25519 public key")
	}
	return nil
}

func checkRSAPrivateKey(v string) error {
	block, _ := pem.Decode([]byte(strings.TrimSpace(v)))
	if block == nil {
		return errors.New("must be a PEM encoded RSA private key")
	}
	if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return nil
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return errors.New("must be a PEM encoded RSA private key")
	}
	if _, ok := key.(*rsa.PrivateKey); !ok {
		return errors.New("must be an RSA private key")
	}
	return nil
}

// MaskedInput returns v as it may be echoed back to a client in an error:
// masked when the field is sensitive.
func (f Field) MaskedInput(v string) string {
	if f.Sensitive {
		return Mask(v)
	}
	return v
}
