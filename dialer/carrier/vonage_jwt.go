package carrier

// Vonage's two JWTs, with the standard library only: the RS256 application
// token that authenticates our API requests, and the HS256 token Vonage puts
// in the Authorization header of signed webhooks.

import (
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"
)

// vonageTokenTTL is the lifetime (exp - iat) of an application JWT. Every
// request gets a fresh token, so a short one is enough.
const vonageTokenTTL = 5 * time.Minute

// vonageRS256Header is the JOSE header of an application JWT, encoded.
var vonageRS256Header = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))

// vonageParseKey parses a PEM RSA private key, PKCS#1 ("RSA PRIVATE KEY")
// or PKCS#8 ("PRIVATE KEY"). Its errors never quote the key.
func vonageParseKey(pemText string) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(strings.TrimSpace(pemText)))
	if block == nil {
		return nil, errors.New("not a PEM encoded private key")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("not a PKCS#1 or PKCS#8 RSA private key")
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("not an RSA private key")
	}
	return rk, nil
}

// vonageAPIClaims are the claims of an application JWT: application_id,
// iat, exp (iat + vonageTokenTTL) and a random jti.
type vonageAPIClaims struct {
	ApplicationID string `json:"application_id"`
	IssuedAt      int64  `json:"iat"`
	ExpiresAt     int64  `json:"exp"`
	JTI           string `json:"jti"`
}

// apiToken mints the application JWT of one API request: RS256 with the
// application's private key over claims with a new jti each time. A fresh
// token per request (as Vonage's own SDKs do) keeps every jti unique; the
// RSA signature costs about a millisecond, against Vonage's limits of 3
// create and 15 other requests per second.
func (v *vonage) apiToken() (string, error) {
	now := v.now()
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", fmt.Errorf("mint jwt: %w", err)
	}
	c := vonageAPIClaims{ApplicationID: v.applicationID, IssuedAt: now.Unix(),
		ExpiresAt: now.Add(vonageTokenTTL).Unix(), JTI: vonageUUID(id)}
	return vonageSignRS256(v.key, c)
}

// vonageUUID formats 16 random bytes as a version-4 UUID.
func vonageUUID(b [16]byte) string {
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// vonageSignRS256 returns the compact JWS of claims signed RS256
// (RSASSA-PKCS1-v1_5 with SHA-256) with key.
func vonageSignRS256(key *rsa.PrivateKey, claims any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("mint jwt: %w", err)
	}
	input := vonageRS256Header + "." + base64.RawURLEncoding.EncodeToString(payload)
	sum := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("mint jwt: %w", err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// vonageWebhookClaims are the claims of a signed webhook's JWT we check.
// Times are numbers (seconds); pointers tell absent from zero.
type vonageWebhookClaims struct {
	IssuedAt      *float64 `json:"iat"`
	ExpiresAt     *float64 `json:"exp"`
	NotBefore     *float64 `json:"nbf"`
	JTI           string   `json:"jti"`
	Issuer        string   `json:"iss"`
	PayloadHash   string   `json:"payload_hash"`
	APIKey        string   `json:"api_key"`
	ApplicationID string   `json:"application_id"`
}

// vonageVerifyHS256 checks a compact JWS signed HS256 with secret (the key
// is the secret's bytes as given) and returns its claims. The header's alg
// must be exactly HS256 (no "none", no RS256 with the secret as a public
// key); the signature is compared in constant time. Claims are not checked
// here.
func vonageVerifyHS256(token, secret string) (vonageWebhookClaims, error) {
	var c vonageWebhookClaims
	h, rest, ok := strings.Cut(token, ".")
	if !ok {
		return c, errors.New("jwt is not a compact JWS")
	}
	p, s, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(s, ".") {
		return c, errors.New("jwt is not a compact JWS")
	}
	hdrJSON, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		return c, errors.New("jwt header is not base64url")
	}
	var hdr struct {
		Alg string `json:"alg"`
	}
	if err := json.Unmarshal(hdrJSON, &hdr); err != nil {
		return c, errors.New("jwt header is not JSON")
	}
	if hdr.Alg != "HS256" {
		return c, fmt.Errorf("jwt alg %q, want HS256", hdr.Alg)
	}
	sig, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return c, errors.New("jwt signature is not base64url")
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(token[:len(h)+1+len(p)]))
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return c, errors.New("jwt signature mismatch")
	}
	payload, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return c, errors.New("jwt payload is not base64url")
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return c, errors.New("jwt payload is not a JSON object")
	}
	return c, nil
}
