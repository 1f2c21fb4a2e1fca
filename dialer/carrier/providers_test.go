package carrier_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"slices"
	"testing"

	"github.com/outdial/outdial/dialer/carrier"
)

func TestMask(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"a", "*"},
		{"abcd", "****"},
		{"abcde", "*bcde"},
		{"sk_live_abcd1234", "************1234"},
		{"äöüßéèñ", "***ßéèñ"},
	}
	for _, tt := range tests {
		if got := carrier.Mask(tt.in); got != tt.want {
			t.Errorf("Mask(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := carrier.Mask(carrier.Mask(tt.in)); got != tt.want {
			t.Errorf("Mask is not idempotent on %q: %q", tt.in, got)
		}
	}
}

func TestCatalogue(t *testing.T) {
	want := []string{"ari", "cloudonix", "plivo", "telnyx", "twilio", "vobiz", "vonage"}
	if got := carrier.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names = %v, want %v", got, want)
	}
	var specs []string
	for _, s := range carrier.Specs() {
		specs = append(specs, s.Provider)
		if s.RatePerSecond <= 0 {
			t.Errorf("%s: RatePerSecond = %v", s.Provider, s.RatePerSecond)
		}
		for _, f := range s.Fields {
			if f.Required && f.Default != nil {
				t.Errorf("%s.%s: required with a default", s.Provider, f.Name)
			}
			if f.Type == carrier.TypeBool && f.Default != false {
				t.Errorf("%s.%s: boolean default %v", s.Provider, f.Name, f.Default)
			}
		}
	}
	if !slices.Equal(specs, want) {
		t.Fatalf("Specs order = %v", specs)
	}
	if _, ok := carrier.Lookup("Twilio"); ok {
		t.Fatal("Lookup is case-insensitive")
	}
	sensitive, plain := carrier.Field{Name: "x", Sensitive: true}, carrier.Field{Name: "y"}
	if sensitive.MaskedInput("secret-1234") != "*******1234" || plain.MaskedInput("AC123") != "AC123" {
		t.Fatalf("MaskedInput = %q, %q", sensitive.MaskedInput("secret-1234"), plain.MaskedInput("AC123"))
	}
}

func check(t *testing.T, provider, field string) func(string) error {
	t.Helper()
	s, _ := carrier.Lookup(provider)
	f, ok := s.Field(field)
	if !ok || f.Check == nil {
		t.Fatalf("%s.%s has no check", provider, field)
	}
	return f.Check
}

func TestFieldChecks(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	pkcs1 := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)}))
	der, _ := x509.MarshalPKCS8PrivateKey(rsaKey)
	pkcs8 := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ecKey)
	ec := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}))
	pub := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&rsaKey.PublicKey)}))
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString(make([]byte, n)) }
	tests := []struct {
		provider, field, value string
		ok                     bool
	}{
		{"ari", "ari_endpoint", "http://pbx.example:8088", true},
		{"ari", "ari_endpoint", "https://10.0.0.1/ari", true},
		{"ari", "ari_endpoint", "HTTP://pbx", true},
		{"ari", "ari_endpoint", "pbx.example:8088", false},
		{"ari", "ari_endpoint", "ws://pbx.example", false},
		{"ari", "ari_endpoint", "http://", false},
		{"ari", "ari_endpoint", "/ari", false},
		{"vonage", "private_key", pkcs1, true},
		{"vonage", "private_key", pkcs8, true},
		{"vonage", "private_key", "  " + pkcs1 + "\n\n", true},
		{"vonage", "private_key", ec, false},
		{"vonage", "private_key", pub, false},
		{"vonage", "private_key", "not pem", false},
		{"telnyx", "webhook_public_key", b64(32), true},
		{"telnyx", "webhook_public_key", b64(31), false},
		{"telnyx", "webhook_public_key", b64(33), false},
		{"telnyx", "webhook_public_key", "%%%", false},
	}
	for _, tt := range tests {
		err := check(t, tt.provider, tt.field)(tt.value)
		if (err == nil) != tt.ok {
			t.Errorf("%s.%s(%.30q): err = %v, want ok %v", tt.provider, tt.field, tt.value, err, tt.ok)
		}
	}
}
