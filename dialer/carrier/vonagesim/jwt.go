package vonagesim

// The simulator's own JWT code (independent of the carrier's): checking the
// RS256 application JWTs of API requests, and signing webhooks HS256 as
// Vonage does.

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
	"math"
	"strings"
	"sync"
	"time"
)

// apiTokenSkew is how far an application JWT's iat may be from the
// simulator's clock.
const apiTokenSkew = 5 * time.Minute

var processKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic("vonagesim: generate RSA key: " + err.Error())
	}
	return k
})

// PrivateKeyPEM is key as a PEM "PRIVATE KEY" (PKCS#8), the form Vonage's
// dashboard hands out.
func PrivateKeyPEM(key *rsa.PrivateKey) string {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		panic("vonagesim: marshal key: " + err.Error())
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// verifyAPIToken checks the Authorization header of an API request: a
// bearer JWT signed RS256 with the application's key whose claims have the
// application's application_id, an iat within 5 minutes of now, an exp
// after now and a jti.
func (s *Server) verifyAPIToken(auth string, now time.Time) error {
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		return errors.New("no bearer token")
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return errors.New("not a JWT")
	}
	var hdr struct {
		Alg string `json:"alg"`
	}
	if err := decodeSegment(parts[0], &hdr); err != nil || hdr.Alg != "RS256" {
		return errors.New("alg is not RS256")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return errors.New("bad signature encoding")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&s.key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		return errors.New("signature does not verify with the application's public key")
	}
	var c struct {
		ApplicationID string   `json:"application_id"`
		IAT           *float64 `json:"iat"`
		EXP           *float64 `json:"exp"`
		JTI           string   `json:"jti"`
	}
	if err := decodeSegment(parts[1], &c); err != nil {
		return errors.New("claims are not JSON")
	}
	t := float64(now.Unix())
	switch {
	case c.ApplicationID != s.appID:
		return errors.New("application_id is not this application")
	case c.IAT == nil || math.Abs(t-*c.IAT) > apiTokenSkew.Seconds():
		return errors.New("iat missing or too far from now")
	case c.EXP != nil && t >= *c.EXP:
		return errors.New("token expired")
	case c.JTI == "":
		return errors.New("no jti")
	}
	return nil
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Claims are the claims of a signed webhook's JWT. Zero values are left
// out (IssuedAt too: tests may forge a token without one).
type Claims struct {
	IssuedAt      time.Time
	ExpiresAt     time.Time
	NotBefore     time.Time
	JTI           string
	Issuer        string
	PayloadHash   string
	APIKey        string
	ApplicationID string
}

// Token returns the compact JWT of c signed HS256 with secret, as Vonage
// signs webhooks (header {"alg":"HS256","typ":"JWT"}). Tests use it to
// forge tokens with a wrong secret, a stale iat or another payload hash.
func Token(secret string, c Claims) string {
	m := map[string]any{}
	if !c.IssuedAt.IsZero() {
		m["iat"] = c.IssuedAt.Unix()
	}
	if !c.ExpiresAt.IsZero() {
		m["exp"] = c.ExpiresAt.Unix()
	}
	if !c.NotBefore.IsZero() {
		m["nbf"] = c.NotBefore.Unix()
	}
	for k, v := range map[string]string{"jti": c.JTI, "iss": c.Issuer, "payload_hash": c.PayloadHash,
		"api_key": c.APIKey, "application_id": c.ApplicationID} {
		if v != "" {
			m[k] = v
		}
	}
	payload, _ := json.Marshal(m) // a map of strings and numbers always encodes
	input := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
		base64.RawURLEncoding.EncodeToString(payload)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(input))
	return input + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// PayloadHash is the payload_hash claim of a webhook with body: the hex
// SHA-256 of the raw body.
func PayloadHash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// Claims returns the claims this account signs a webhook with body with,
// issued now, with a fresh jti.
func (s *Server) Claims(body []byte) Claims {
	return Claims{IssuedAt: time.Now(), JTI: newUUID(), Issuer: "Vonage", PayloadHash: PayloadHash(body),
		APIKey: s.apiKey, ApplicationID: s.appID}
}

// Authorization is the Authorization header this account sends with a
// webhook of body: "Bearer " and a fresh token ("" when Unsigned).
func (s *Server) Authorization(body []byte) string {
	if s.unsigned {
		return ""
	}
	return "Bearer " + Token(s.secret, s.Claims(body))
}

// newUUID is a random version-4 UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
