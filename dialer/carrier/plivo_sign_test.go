package carrier

import (
	"net/http"
	"net/url"
	"testing"
)

// plivoVectorParams are the callback parameters of plivo-go's
// utils_test.go TestValidateSignatureV3Pass1..4, signatures recorded from
// Plivo's own (non-production) servers.
var plivoVectorParams = url.Values{
	"Direction":       {"outbound"},
	"From":            {"19792014278"},
	"ALegUUID":        {"3e82ae9d-2c78-4d85-b1a4-6eae7dbafb36"},
	"CallStatus":      {"in-progress"},
	"BillRate":        {"0.002"},
	"ParentAuthID":    {"MANWVLYTK4ZWU1YTY4QA"},
	"To":              {"sip:PlivoSignature382029104058171078704104@phone-qa.voice.plivodev.com"},
	"ALegRequestUUID": {"3e82ae9d-2c78-4d85-b1a4-6eae7dbafb36"},
	"CallUUID":        {"3e82ae9d-2c78-4d85-b1a4-6eae7dbafb36"},
	"RequestUUID":     {"3e82ae9d-2c78-4d85-b1a4-6eae7dbafb36"},
	"SIP-H-To":        {"<sip:PlivoSignature382029104058171078704104@52.9.11.55;transport=udp>;tag=1"},
	"SessionStart":    {"2020-04-08 11:34:33.238707"},
	"Event":           {"StartApp"},
}

// Known vectors from the providers' SDK tests: plivo-go utils_test.go
// TestValidateSignatureV3Pass1..4 (POST and GET, with and without a query
// string) and TestValidateSignatureV2Pass/Fail (the V2 vector is also in
// plivo-python tests/resources/test_signature.py). Plivo's V2
// construction, HMAC-SHA256 over the URL without query + nonce, is exactly
// Vobiz's documented V2 (docs.vobiz.ai/concepts/validating-callbacks), so
// it doubles as a Vobiz V2 vector.
func TestPlivoSignatureKnownVectors(t *testing.T) {
	const (
		token = "Y2Q2ZDgxZmY5YWRiOTI5YmQ1Njg0MTAxZWIyOTc4"
		nonce = "31627761595286130198"
		withQ = "https://plivobin.non-prod.plivops.com/api/v1/validate_signature03.xml/?a=b&c=d"
		noQ   = "https://plivobin.non-prod.plivops.com/api/v1/validate_signature03.xml"
	)
	for _, tc := range []struct {
		name, url, method, want string
	}{
		{"Pass1 POST with query", withQ, http.MethodPost, "k7Pusd4OxCIjR5IfA9iedDNu/h/gbdYqdzG/MiYtd1c="},
		{"Pass2 GET with query", withQ, http.MethodGet, "UBq8jAtd32wR8EK9VgxbBn4n5rpI/l1H9iN4WfSEHFQ="},
		{"Pass3 POST", noQ, http.MethodPost, "iAjE5QqI37mbkYe4w3jTMudqEzbDufdqi7sYwTu64e0="},
		{"Pass4 GET", noQ, http.MethodGet, "i/MQsaQSAd6fiKhOh2qeeeLHZ9faldADSb3/7+Akfbc="},
	} {
		got := plivoSignatureV3(token, tc.url, tc.method, nonce, plivoVectorParams)
		if got != tc.want {
			t.Errorf("%s: signature = %s, want %s", tc.name, got, tc.want)
		}
		if !plivoSigMatch("AAAA,"+tc.want, got) {
			t.Errorf("%s: a list holding the signature does not match", tc.name)
		}
		if plivoSignatureV3(token+"x", tc.url, tc.method, nonce, plivoVectorParams) == tc.want {
			t.Errorf("%s: another token gives the same signature", tc.name)
		}
	}
	if got, want := vobizSignature("my_auth_token", "https://answer.url", "12345", false),
		"ehV3IKhLysWBxC1sy8INm0qGoQYdYsHwuoKjsX7FsXc="; got != want {
		t.Fatalf("V2 vector = %s, want %s", got, want)
	}
	if vobizSignature("my_auth_tokens", "https://answer.url", "12345", false) == "ehV3IKhLysWBxC1sy8INm0qGoQYdYsHwuoKjsX7FsXc=" {
		t.Fatal("V2 fail vector matches")
	}
}

// TestPlivoSignedURL pins the string V3 signs, per plivo-go GenerateUrl.
func TestPlivoSignedURL(t *testing.T) {
	form := url.Values{"To": {"14155550100"}, "CallStatus": {"completed"}, "CallUUID": {"u-1"}}
	for _, tc := range []struct {
		name, url, method string
		params            url.Values
		want              string
	}{
		{"post with query", "https://svc.example/api/v1/telephony/plivo/status/7?t=abc&z=1", http.MethodPost, form,
			"https://svc.example/api/v1/telephony/plivo/status/7?t=abc&z=1.CallStatuscompletedCallUUIDu-1To14155550100"},
		{"post query sorted", "http://h:8080/p?z=1&a=2", http.MethodPost, url.Values{"B": {"x"}, "A": {"y"}},
			"http://h:8080/p?a=2&z=1.AyBx"},
		{"post with query, no params", "https://h/p?t=abc", http.MethodPost, nil, "https://h/p?t=abc"},
		{"post no query", "https://h/answer", http.MethodPost, form,
			"https://h/answer?CallStatuscompletedCallUUIDu-1To14155550100"},
		{"post nothing", "https://h/answer", http.MethodPost, nil, "https://h/answer"},
		{"query pair without value dropped", "https://h/p?t=abc&flag", http.MethodPost, url.Values{"A": {"1"}},
			"https://h/p?t=abc.A1"},
		{"repeated post param", "https://h/p", http.MethodPost, url.Values{"A": {"2", "1"}}, "https://h/p?A1A2"},
		{"get merges", "https://h/p?t=abc", http.MethodGet, url.Values{"A": {"1"}}, "https://h/p?A=1&t=abc"},
		{"get nothing", "https://h/p", http.MethodGet, nil, "https://h/p"},
	} {
		if got := plivoSignedURL(tc.url, tc.method, tc.params); got != tc.want {
			t.Errorf("%s: signed URL = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestPlivoSigMatchSeveral(t *testing.T) {
	want := plivoHMAC("k", "m")
	for _, tc := range []struct {
		header string
		ok     bool
	}{
		{want, true},
		{"AAAA," + want, true},
		{"AAAA, " + want + " ,BBBB", true},
		{"AAAA,BBBB", false},
		{"", false},
		{want + "x", false},
	} {
		if got := plivoSigMatch(tc.header, want); got != tc.ok {
			t.Errorf("plivoSigMatch(%q) = %v, want %v", tc.header, got, tc.ok)
		}
	}
}

// TestVobizSignatureBase: the V3 signature covers the URL without its query
// (and fragment) + "." + nonce.
func TestVobizSignatureBase(t *testing.T) {
	a := vobizSignature("tok", "https://h/api/v1/telephony/vobiz/status/7?t=abc", "01234567890123456789", true)
	b := vobizSignature("tok", "https://h/api/v1/telephony/vobiz/status/7", "01234567890123456789", true)
	if a != b || a != plivoHMAC("tok", "https://h/api/v1/telephony/vobiz/status/7.01234567890123456789") {
		t.Fatalf("V3 signatures %s, %s differ from the documented construction", a, b)
	}
	if vobizSignature("tok", "https://h/x", "1", false) != plivoHMAC("tok", "https://h/x1") {
		t.Fatal("V2 is not HMAC(url + nonce)")
	}
}
