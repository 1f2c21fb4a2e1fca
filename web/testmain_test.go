package web_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"testing"
)

// rsaPEM is a PEM (PKCS#1) RSA private key, generated once for every test
// that needs a valid Vonage private_key; rsaPKCS8PEM is the same key in
// PKCS#8 form.
var rsaPEM, rsaPKCS8PEM string

func TestMain(m *testing.M) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		fmt.Fprintln(os.Stderr, "generate rsa key:", err)
		os.Exit(2)
	}
	rsaPEM = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		fmt.Fprintln(os.Stderr, "marshal pkcs8:", err)
		os.Exit(2)
	}
	rsaPKCS8PEM = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	os.Exit(m.Run())
}
