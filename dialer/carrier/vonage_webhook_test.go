package carrier

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// vonageTestHS256 signs claims HS256 with secret under header hdr (nil:
// {"alg":"HS256","typ":"JWT"}), with its own code.
func vonageTestHS256(secret string, hdr, claims map[string]any) string {
	if hdr == nil {
		hdr = map[string]any{"alg": "HS256", "typ": "JWT"}
	}
	h, _ := json.Marshal(hdr)
	p, _ := json.Marshal(claims)
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(input))
	return input + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func vonageTestHash(body string) string {
	s := sha256.Sum256([]byte(body))
	return hex.EncodeToString(s[:])
}

// vonageTestClaims are the claims Vonage puts in a signed webhook of body
// issued at now.
func vonageTestClaims(body string, now time.Time, jti string) map[string]any {
	return map[string]any{"iat": now.Unix(), "jti": jti, "iss": "Vonage", "payload_hash": vonageTestHash(body),
		"api_key": vonageTestAPIKey, "application_id": vonageTestAppID}
}

// vonageTestHook is a POST webhook with body and Authorization auth ("" =
// none).
func vonageTestHook(body, auth string) Webhook {
	r := httptest.NewRequest(http.MethodPost, "https://svc.example/api/v1/telephony/vonage/status/7?t=tok", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	return Webhook{Request: r, Body: []byte(body), PublicURL: "https://svc.example/api/v1/telephony/vonage/status/7?t=tok"}
}

// TestVonageHS256Vectors checks the HS256 verification against tokens and
// secrets published in Vonage's SDK tests: vonage-python-sdk
// jwt/tests/test_verify_jwt.py and vonage-jwt-jdk
// src/test/kotlin/com/vonage/jwt/JwtValidatorTest.kt. The secret is used as
// its UTF-8 bytes.
func TestVonageHS256Vectors(t *testing.T) {
	const jdkBase = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhZG1pbiIsIm5hbWUiOiJTaW5hIiwiaWF0IjoxNjk4MjU4NjY3fQ."
	for _, tc := range []struct {
		name, token, secret string
		ok                  bool
		iat                 float64
	}{
		{"python sdk valid", "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJPbmxpbmUgSldUIEJ1aWxkZXIiLCJpYXQiOjE2OTc2MzQ2ODAsImV4cCI6MzMyNTQ1NDA4MjgsImF1ZCI6IiIsInN1YiI6IiJ9.88vJc3I2HhuqEDixHXVhc9R30tA6U_HQHZTC29y6CGM",
			"qwertyuiopasdfghjklzxcvbnm123456", true, 1697634680},
		{"python sdk invalid secret", "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJPbmxpbmUgSldUIEJ1aWxkZXIiLCJpYXQiOjE2OTc2MzQ2ODAsImV4cCI6MzMyNTQ1NDA4MjgsImF1ZCI6IiIsInN1YiI6IiJ9.88vJc3I2HhuqEDixHXVhc9R30tA6U_HQHZTC29y6CGM",
			"asdf", false, 0},
		{"python sdk not a jwt", "asdf", "qwertyuiopasdfghjklzxcvbnm123456", false, 0},
		{"jdk valid", jdkBase + "ZVSrJeaES6iaBOwd6vMk93my2gq1uCwDi3c7aCIMqa0", "0c15c425fe48dd59dab5fb3eea57d528f405a71d78ae4998deacab4deeb02ca5", true, 1698258667},
		{"jdk altered secret", jdkBase + "ZVSrJeaES6iaBOwd6vMk93my2gq1uCwDi3c7aCIMqa0", strings.ReplaceAll("0c15c425fe48dd59dab5fb3eea57d528f405a71d78ae4998deacab4deeb02ca5", "e", "f"), false, 0},
		{"jdk other secret", jdkBase + "ZVSrJeaES6iaBOwd6vMk93my2gq1uCwDi3c7aCIMqa0", "decafea1deadbeef0123456789abcdef0123456789abcdef0123456789abcdef", false, 0},
		{"jdk matching token", jdkBase + "pZ2YiYpipVpf59vZgUHLYICJwhVISwBhy_q9WokKm2A", "decafea1deadbeef0123456789abcdef0123456789abcdef0123456789abcdef", true, 1698258667},
		{"jdk different token", jdkBase + "YNz-ojcIge37-LwXjOY835p64iXKPR_iHzLnn1msR50", "0c15c425fe48dd59dab5fb3eea57d528f405a71d78ae4998deacab4deeb02ca5", false, 0},
		{"jdk different token, its secret", jdkBase + "YNz-ojcIge37-LwXjOY835p64iXKPR_iHzLnn1msR50", "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c", true, 1698258667},
	} {
		c, err := vonageVerifyHS256(tc.token, tc.secret)
		if (err == nil) != tc.ok {
			t.Fatalf("%s: err %v, want ok %v", tc.name, err, tc.ok)
		}
		if tc.ok && (c.IssuedAt == nil || *c.IssuedAt != tc.iat) {
			t.Fatalf("%s: iat %v, want %v", tc.name, c.IssuedAt, tc.iat)
		}
	}
}

func TestVonageHS256RefusesOtherAlgs(t *testing.T) {
	claims := map[string]any{"iat": 1}
	for _, hdr := range []map[string]any{{"alg": "none"}, {"alg": "RS256"}, {"alg": "HS512"}, {"alg": "hs256"}, {}} {
		tok := vonageTestHS256(vonageTestSecret, hdr, claims)
		if _, err := vonageVerifyHS256(tok, vonageTestSecret); err == nil {
			t.Fatalf("header %v accepted", hdr)
		}
	}
	unsigned := strings.TrimRight(vonageTestHS256(vonageTestSecret, map[string]any{"alg": "none"}, claims), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
	if _, err := vonageVerifyHS256(unsigned, vonageTestSecret); err == nil {
		t.Fatal("unsigned token accepted")
	}
}

func TestVonageWebhookVerification(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	body := `{"uuid":"u1","conversation_uuid":"CON-1","status":"answered","direction":"outbound","timestamp":"2027-01-15T08:00:00.000Z"}`
	claims := func(mod func(map[string]any)) map[string]any {
		c := vonageTestClaims(body, now, "jti-1")
		if mod != nil {
			mod(c)
		}
		return c
	}
	bearer := func(c map[string]any) string { return "Bearer " + vonageTestHS256(vonageTestSecret, nil, c) }
	for _, tc := range []struct {
		name string
		body string
		auth string
		ok   bool
	}{
		{"genuine", body, bearer(claims(nil)), true},
		{"lower-case scheme", body, "bearer " + vonageTestHS256(vonageTestSecret, nil, claims(nil)), true},
		{"without optional claims", body, bearer(claims(func(c map[string]any) { delete(c, "api_key"); delete(c, "application_id") })), true},
		{"iat 299 s old", body, bearer(claims(func(c map[string]any) { c["iat"] = now.Unix() - 299 })), true},
		{"iat 299 s ahead", body, bearer(claims(func(c map[string]any) { c["iat"] = now.Unix() + 299 })), true},
		{"exp and nbf fine", body, bearer(claims(func(c map[string]any) { c["exp"] = now.Unix() + 60; c["nbf"] = now.Unix() - 60 })), true},
		{"hash of the compact body", " {\n" + body[1:], bearer(claims(nil)), true},
		{"upper-case payload hash", body, bearer(claims(func(c map[string]any) { c["payload_hash"] = strings.ToUpper(vonageTestHash(body)) })), true},
		{"no Authorization", body, "", false},
		{"basic auth", body, "Basic dXNlcjpwYXNz", false},
		{"empty bearer", body, "Bearer ", false},
		{"another secret", body, "Bearer " + vonageTestHS256("not-the-secret", nil, claims(nil)), false},
		{"alg none", body, "Bearer " + vonageTestHS256(vonageTestSecret, map[string]any{"alg": "none"}, claims(nil)), false},
		{"body changed", strings.Replace(body, "answered", "completed", 1), bearer(claims(nil)), false},
		{"no payload hash", body, bearer(claims(func(c map[string]any) { delete(c, "payload_hash") })), false},
		{"hash of nothing", body, bearer(claims(func(c map[string]any) { c["payload_hash"] = vonageTestHash("") })), false},
		{"no iat", body, bearer(claims(func(c map[string]any) { delete(c, "iat") })), false},
		{"iat 301 s old", body, bearer(claims(func(c map[string]any) { c["iat"] = now.Unix() - 301 })), false},
		{"iat 301 s ahead", body, bearer(claims(func(c map[string]any) { c["iat"] = now.Unix() + 301 })), false},
		{"iat not a number", body, bearer(claims(func(c map[string]any) { c["iat"] = "now" })), false},
		{"expired", body, bearer(claims(func(c map[string]any) { c["exp"] = now.Unix() - 301 })), false},
		{"not yet valid", body, bearer(claims(func(c map[string]any) { c["nbf"] = now.Unix() + 301 })), false},
		{"another account", body, bearer(claims(func(c map[string]any) { c["api_key"] = "zzz" })), false},
		{"another application", body, bearer(claims(func(c map[string]any) { c["application_id"] = "other" })), false},
		{"no jti", body, bearer(claims(func(c map[string]any) { delete(c, "jti") })), false},
	} {
		c := newVonageTest(t, "http://x", now, nil)
		_, err := c.ParseStatus(vonageTestHook(tc.body, tc.auth))
		if tc.ok && err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !tc.ok && !errors.Is(err, ErrForged) {
			t.Fatalf("%s: err %v, want ErrForged", tc.name, err)
		}
		_, err = c.VerifyAnswer(vonageTestHook(tc.body, tc.auth))
		if !tc.ok && !errors.Is(err, ErrForged) {
			t.Fatalf("%s (answer): err %v, want ErrForged", tc.name, err)
		}
	}
}

// The jti is a signed event's replay key: the same request verifies again
// with the same key (the store applies one status per key), another jti is
// another key.
func TestVonageWebhookReplayKeys(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	c := newVonageTest(t, "http://x", now, nil)
	body := `{"uuid":"u1","status":"completed","duration":"3"}`
	auth := "Bearer " + vonageTestHS256(vonageTestSecret, nil, vonageTestClaims(body, now, "jti-replayed"))
	first, err := c.ParseStatus(vonageTestHook(body, auth))
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.ParseStatus(vonageTestHook(body, auth))
	if err != nil || len(first.ReplayKeys) != 1 || !slices.Equal(first.ReplayKeys, again.ReplayKeys) {
		t.Fatalf("replay: %q then %q, %v; want the same one key", first.ReplayKeys, again.ReplayKeys, err)
	}
	if _, err := c.VerifyAnswer(vonageTestHook(body, auth)); err != nil {
		t.Fatalf("the answer request verified again: %v (a provider retries it)", err)
	}
	// A forgery with a fresh jti is refused; the genuine request with that
	// jti is accepted.
	forged := "Bearer " + vonageTestHS256("wrong", nil, vonageTestClaims(body, now, "jti-2"))
	if _, err := c.ParseStatus(vonageTestHook(body, forged)); !errors.Is(err, ErrForged) {
		t.Fatal("forgery accepted")
	}
	genuine := "Bearer " + vonageTestHS256(vonageTestSecret, nil, vonageTestClaims(body, now, "jti-2"))
	st, err := c.ParseStatus(vonageTestHook(body, genuine))
	if err != nil || slices.Equal(st.ReplayKeys, first.ReplayKeys) {
		t.Fatalf("genuine after a forgery with its jti: %q, %v", st.ReplayKeys, err)
	}
}

func TestVonageWebhookWithoutSignatureSecret(t *testing.T) {
	c := newVonageTest(t, "http://x", time.Now(), func(m map[string]any) { m["signature_secret"] = nil })
	body := `{"uuid":"u1","status":"busy"}`
	for _, auth := range []string{"", "Bearer garbage"} {
		s, err := c.ParseStatus(vonageTestHook(body, auth))
		if err != nil || s.Outcome != OutcomeBusy {
			t.Fatalf("auth %q: %+v %v, want accepted on the URL token alone", auth, s, err)
		}
	}
	if _, err := c.ParseStatus(vonageTestHook("not json", "")); err == nil || errors.Is(err, ErrForged) {
		t.Fatalf("non-JSON body: %v, want a plain error", err)
	}
}

func TestVonageStatusMapping(t *testing.T) {
	for _, tc := range []struct {
		body string
		want Status
	}{
		{`{"uuid":"u","status":"started"}`, Status{ProviderCallID: "u", Raw: "started"}},
		{`{"uuid":"u","status":"ringing"}`, Status{ProviderCallID: "u", Raw: "ringing"}},
		{`{"uuid":"u","status":"answered"}`, Status{ProviderCallID: "u", Raw: "answered", Answered: true}},
		{`{"call_uuid":"u","status":"machine"}`, Status{ProviderCallID: "u", Raw: "machine", Answered: true, AnsweredBy: "machine"}},
		{`{"call_uuid":"u","status":"human"}`, Status{ProviderCallID: "u", Raw: "human", Answered: true, AnsweredBy: "human"}},
		{`{"uuid":"u","status":"completed","duration":"17"}`, Status{ProviderCallID: "u", Raw: "completed", Answered: true, Final: true, Outcome: OutcomeAnswered, DurationSeconds: 17}},
		{`{"uuid":"u","status":"completed","duration":5}`, Status{ProviderCallID: "u", Raw: "completed", Answered: true, Final: true, Outcome: OutcomeAnswered, DurationSeconds: 5}},
		{`{"uuid":"u","status":"busy"}`, Status{ProviderCallID: "u", Raw: "busy", Final: true, Outcome: OutcomeBusy}},
		{`{"uuid":"u","status":"timeout"}`, Status{ProviderCallID: "u", Raw: "timeout", Final: true, Outcome: OutcomeNoAnswer}},
		{`{"uuid":"u","status":"unanswered"}`, Status{ProviderCallID: "u", Raw: "unanswered", Final: true, Outcome: OutcomeNoAnswer}},
		{`{"uuid":"u","status":"cancelled"}`, Status{ProviderCallID: "u", Raw: "cancelled", Final: true, Outcome: OutcomeCanceled}},
		{`{"uuid":"u","status":"rejected"}`, Status{ProviderCallID: "u", Raw: "rejected", Final: true, Outcome: OutcomeFailed}},
		{`{"uuid":"u","status":"failed"}`, Status{ProviderCallID: "u", Raw: "failed", Final: true, Outcome: OutcomeFailed}},
		{`{"uuid":"u","status":"disconnected"}`, Status{ProviderCallID: "u", Raw: "disconnected"}},
		{`{"uuid":"u","conversation_uuid_from":"a","conversation_uuid_to":"b"}`, Status{ProviderCallID: "u"}},
	} {
		c := newVonageTest(t, "http://x", time.Now(), func(m map[string]any) { m["signature_secret"] = "" })
		got, err := c.ParseStatus(vonageTestHook(tc.body, ""))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(withoutReplayKeys(got), tc.want) {
			t.Fatalf("%s: %+v, want %+v", tc.body, got, tc.want)
		}
		if IsMachine(got.AnsweredBy) != (got.AnsweredBy == "machine") {
			t.Fatalf("%s: IsMachine(%q) wrong", tc.body, got.AnsweredBy)
		}
	}
}

func TestVonageAnswerGET(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	c := newVonageTest(t, "http://x", now, nil)
	// Vonage hashes the JSON object of the query parameters, in order; with
	// or without our own token t.
	for i, payload := range []string{`{"t":"tok","uuid":"u1","to":"14155550123","x":"a&b"}`, `{"uuid":"u1","to":"14155550123","x":"a&b"}`} {
		r := httptest.NewRequest(http.MethodGet, "https://svc.example/answer/7?t=tok&uuid=u1&to=14155550123&x=a%26b", nil)
		r.Header.Set("Authorization", "Bearer "+vonageTestHS256(vonageTestSecret, nil, vonageTestClaims(payload, now, fmt.Sprint("get-", i))))
		if _, err := c.VerifyAnswer(Webhook{Request: r, PublicURL: r.URL.String()}); err != nil {
			t.Fatalf("signed GET answer (%s): %v", payload, err)
		}
	}
	r := httptest.NewRequest(http.MethodGet, "https://svc.example/answer/7?t=tok&uuid=u1&to=14155550123", nil)
	r.Header.Set("Authorization", "Bearer "+vonageTestHS256(vonageTestSecret, nil, vonageTestClaims(`{"uuid":"u2"}`, now, "get-9")))
	if _, err := c.VerifyAnswer(Webhook{Request: r, PublicURL: r.URL.String()}); !errors.Is(err, ErrForged) {
		t.Fatalf("GET answer with another payload's hash: %v, want ErrForged", err)
	}
	if _, err := c.VerifyAnswer(Webhook{Request: httptest.NewRequest(http.MethodGet, "https://svc.example/answer/7?uuid=u1", nil)}); !errors.Is(err, ErrForged) {
		t.Fatalf("unsigned GET answer: %v, want ErrForged", err)
	}
}

func TestVonageAnswerMarkup(t *testing.T) {
	c := newVonageTest(t, "http://x", time.Now(), nil)
	for _, tc := range []struct {
		name    string
		a       Answer
		want    string
		headers map[string]string // the websocket endpoint's headers, decoded
	}{
		{"agent", Answer{AttemptID: 42, AgentURL: "wss://agent.example/ws?x=1&y=2",
			Context: map[string]string{"first_name": "Zoë <\"x\">", "attempt_id": "spoofed", "account": "A-1"}},
			`[{"action":"connect","endpoint":[{"type":"websocket","uri":"wss://agent.example/ws?x=1\u0026y=2",` +
				`"content-type":"audio/l16;rate=16000","headers":{"account":"A-1","attempt_id":"42","first_name":"Zoë \u003c\"x\"\u003e"}}]}]`,
			map[string]string{"account": "A-1", "attempt_id": "42", "first_name": "Zoë <\"x\">"}},
		{"agent with opt-out", optOutAnswer("wss://agent.example/ws"),
			`[{"action":"connect","endpoint":[{"type":"websocket","uri":"wss://agent.example/ws","content-type":"audio/l16;rate=16000",` +
				`"headers":{"agent_events_url":"https://svc.example/api/v1/telephony/agent/42?t=tok-_9Zx",` +
				`"attempt_id":"42","first_name":"Ann","opt_out_token":"tok-_9Zx",` +
				`"opt_out_url":"https://svc.example/api/v1/telephony/opt-out/42?t=tok-_9Zx","token":"tok-_9Zx"}}]}]`,
			optOutParams},
		{"agent without context", Answer{AttemptID: 1, AgentURL: "wss://a/ws"},
			`[{"action":"connect","endpoint":[{"type":"websocket","uri":"wss://a/ws","content-type":"audio/l16;rate=16000","headers":{"attempt_id":"1"}}]}]`,
			map[string]string{"attempt_id": "1"}},
		{"greeting", Answer{AttemptID: 1, Greeting: "Hello \"Ann\" & co\n"}, `[{"action":"talk","text":"Hello \"Ann\" \u0026 co\n"}]`, nil},
		{"invalid utf-8", Answer{AttemptID: 1, Greeting: "a\xffb"}, `[{"action":"talk","text":"a\ufffdb"}]`, nil},
		{"nothing to say", Answer{AttemptID: 1}, `[]`, nil},
	} {
		ct, body := c.AnswerMarkup(tc.a)
		// Invalid UTF-8 becomes U+FFFD: Go 1.27's encoding/json writes the
		// character, earlier ones its escape; both are the same JSON string.
		got := strings.ReplaceAll(string(body), "\uFFFD", `\ufffd`)
		if ct != "application/json" || got != tc.want {
			t.Fatalf("%s: %s %s\nwant %s", tc.name, ct, body, tc.want)
		}
		var ncco []struct {
			Action   string `json:"action"`
			Endpoint []struct {
				Type    string            `json:"type"`
				Headers map[string]string `json:"headers"`
			} `json:"endpoint"`
		}
		if err := json.Unmarshal(body, &ncco); err != nil {
			t.Fatalf("%s: not an NCCO: %v", tc.name, err)
		}
		var headers map[string]string
		if len(ncco) == 1 && ncco[0].Action == "connect" {
			if len(ncco[0].Endpoint) != 1 || ncco[0].Endpoint[0].Type != "websocket" {
				t.Fatalf("%s: endpoints %+v", tc.name, ncco[0].Endpoint)
			}
			headers = ncco[0].Endpoint[0].Headers
		}
		if !reflect.DeepEqual(headers, tc.headers) {
			t.Fatalf("%s: websocket headers %v, want %v", tc.name, headers, tc.headers)
		}
	}
}

// BenchmarkVonageParseStatus measures the verification and parsing of one
// signed event (HS256, payload hash, replay cache).
func BenchmarkVonageParseStatus(b *testing.B) {
	now := time.Now()
	c := newVonageTest(b, "http://x", now, nil)
	body := `{"from":"14155550100","to":"14155550123","uuid":"63f61863-4a51-4f6b-86e1-46edebcf9356","conversation_uuid":"CON-1","status":"completed","direction":"outbound","timestamp":"2027-01-15T08:00:00.000Z","duration":"12"}`
	auths := make([]string, b.N)
	for i := range auths {
		auths[i] = "Bearer " + vonageTestHS256(vonageTestSecret, nil, vonageTestClaims(body, now, fmt.Sprint("jti-", i)))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.ParseStatus(vonageTestHook(body, auths[i])); err != nil {
			b.Fatal(err)
		}
	}
}
