package console_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// A PEM key pasted into a one-line secret input loses its line breaks
// (or gets spaces for them): the form puts them back, so the API takes
// the Vonage private key; an optional secret is cleared with its box.
func TestTelephonyPastedPEMAndClearedSecret(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.signIn(e.key)
	csrf := b.csrf()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	oneLine := strings.ReplaceAll(strings.TrimSpace(pemKey), "\n", "")
	a := b.postForm("/console/telephony/new", form(csrf, "provider", "vonage", "name", "vonage",
		"config.api_key", "k1", "config.api_secret", "s3cr3t-value", "config.application_id", "app-1",
		"config.private_key", oneLine, "config.signature_secret", "sig-secret-1234"))
	wantStatus(t, "create with a one-line PEM", a, http.StatusSeeOther)
	noSecret(t, "create", a)
	m := regexp.MustCompile(`/console/telephony/(\d+)`).FindStringSubmatch(a.header.Get("Location"))
	var id int64
	fmt.Sscan(m[1], &id)
	cfg, err := e.db.GetTelephonyConfig(context.Background(), e.p.OrganizationID, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Credentials.String("private_key"); got != pemKey {
		t.Errorf("stored key:\n%s\nwant:\n%s", got, pemKey)
	}

	// Line breaks turned into spaces come back too.
	spaced := b.postForm("/console/telephony/new", form(csrf, "provider", "vonage", "name", "vonage spaced",
		"config.api_key", "k1", "config.api_secret", "s3cr3t-value", "config.application_id", "app-1",
		"config.private_key", strings.ReplaceAll(strings.TrimSpace(pemKey), "\n", " ")))
	wantStatus(t, "create with a PEM of spaces", spaced, http.StatusSeeOther)

	edit := b.get(a.header.Get("Location"))
	if strings.Contains(edit.body, "sig-secret-1234") || !strings.Contains(edit.body, `name="config.signature_secret.clear"`) {
		t.Errorf("the edit page: %s", edit.body)
	}
	a = b.postForm(fmt.Sprintf("/console/telephony/%d", id), form(csrf, "name", "vonage", "config.api_key", "k1",
		"config.application_id", "app-1", "config.signature_secret.clear", "true"))
	wantStatus(t, "clear the signature secret", a, http.StatusSeeOther)
	cfg, err = e.db.GetTelephonyConfig(context.Background(), e.p.OrganizationID, id)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Credentials["signature_secret"] != nil || cfg.Credentials.String("private_key") != pemKey || cfg.Credentials.String("api_secret") != "s3cr3t-value" {
		t.Errorf("after clearing: signature_secret %v, the other secrets kept: %v %v", cfg.Credentials["signature_secret"],
			cfg.Credentials.String("private_key") == pemKey, cfg.Credentials.String("api_secret") == "s3cr3t-value")
	}
}
