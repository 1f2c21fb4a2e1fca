package objstore

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/s3utils"
	"github.com/minio/minio-go/v7/pkg/signer"
)

// Keys the vectors are computed for: plain, spaces, unicode, '+', and
// characters SigV4 must percent-encode.
var vectorKeys = []string{
	"campaigns/3/0b6f0c1e-uuid_contacts.csv",
	"campaigns/3/with space.csv",
	"campaigns/3/ünïcødé/ファイル.csv",
	"campaigns/3/plus+sign+.csv",
	"campaigns/3/odd %2B&=?;#!*'()[]@$,~.csv",
}

// clientRequest is the request a client would build before signing.
func clientRequest(t *testing.T, method, key string, query url.Values, header http.Header) *http.Request {
	t.Helper()
	u := "http://" + testHost + "/" + BundledBucket + "/" + s3utils.EncodePath(key)
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	return req
}

// asReceived turns a signed client request into the request the server
// sees: request URI parsed again, Host moved out of the header.
func asReceived(signed *http.Request) *http.Request {
	r := httptest.NewRequest(signed.Method, signed.URL.RequestURI(), nil)
	r.Host = signed.URL.Host
	r.Header = signed.Header.Clone()
	return r
}

func presign(ak, sk, region string, expires int64) func(*http.Request) *http.Request {
	return func(req *http.Request) *http.Request {
		return signer.PreSignV4(*req, ak, sk, "", region, expires)
	}
}

func headerSign(ak, sk, region, payload string) func(*http.Request) *http.Request {
	return func(req *http.Request) *http.Request {
		if payload != "" {
			req.Header.Set("X-Amz-Content-Sha256", payload)
		}
		return signer.SignV4(*req, ak, sk, "", region)
	}
}

func setQuery(name, value string) func(*http.Request) {
	return func(r *http.Request) {
		q := r.URL.Query()
		if value == "" {
			q.Del(name)
		} else {
			q.Set(name, value)
		}
		r.URL.RawQuery = q.Encode()
	}
}

func TestVerifySignatureVectors(t *testing.T) {
	csv := http.Header{"Content-Type": {"text/csv"}}
	maxSize := url.Values{MaxSizeParam: {"1024"}}
	bodySum := sha256.Sum256([]byte("phone_number\n+14155550100\n"))
	bodyHash := hex.EncodeToString(bodySum[:])

	type sigCase struct {
		name    string
		method  string
		query   url.Values
		header  http.Header
		sign    func(*http.Request) *http.Request
		mutate  func(*http.Request)
		clock   time.Duration // offset of the server clock from the signer's
		code    string        // "" means accepted
		msg     string        // substring of the message, if set
		payload payloadMode
	}
	cases := []sigCase{
		{name: "presigned put", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900)},
		{name: "presigned get", method: "GET", sign: presign(testAccessKey, testSecretKey, DefaultRegion, 60)},
		{name: "presigned at the last second", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900), clock: 899 * time.Second},
		{name: "header get empty payload", method: "GET", header: http.Header{"Range": {"bytes=0-9"}}, sign: headerSign(testAccessKey, testSecretKey, DefaultRegion, emptySHA256), payload: payloadHashed},
		{name: "header put payload hash", method: "PUT", header: csv, sign: headerSign(testAccessKey, testSecretKey, DefaultRegion, bodyHash), payload: payloadHashed},
		{name: "header put unsigned payload", method: "PUT", header: csv, sign: headerSign(testAccessKey, testSecretKey, DefaultRegion, unsignedPayload), payload: payloadUnsigned},
		{name: "header put streaming", method: "PUT", header: csv, sign: headerSign(testAccessKey, testSecretKey, DefaultRegion, streamingPayload), payload: payloadStreaming},
		{name: "header within clock skew", method: "GET", sign: headerSign(testAccessKey, testSecretKey, DefaultRegion, emptySHA256), clock: 14 * time.Minute, payload: payloadHashed},

		// Tampering with anything signed.
		{name: "tampered path", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: func(r *http.Request) { r.URL.Path += "x" }, code: "SignatureDoesNotMatch"},
		{name: "tampered max size", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: setQuery(MaxSizeParam, "999999999"), code: "SignatureDoesNotMatch"},
		{name: "removed max size", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: setQuery(MaxSizeParam, ""), code: "SignatureDoesNotMatch"},
		{name: "added query parameter", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: setQuery("versionId", "1"), code: "SignatureDoesNotMatch"},
		{name: "extended expiry", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: setQuery("X-Amz-Expires", "604800"), code: "SignatureDoesNotMatch"},
		{name: "tampered signature", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: func(r *http.Request) {
				sig := r.URL.Query().Get("X-Amz-Signature")
				flipped := "0"
				if sig[0] == '0' {
					flipped = "1"
				}
				setQuery("X-Amz-Signature", flipped+sig[1:])(r)
			}, code: "SignatureDoesNotMatch"},
		{name: "upper-case signature", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: func(r *http.Request) {
				setQuery("X-Amz-Signature", strings.ToUpper(r.URL.Query().Get("X-Amz-Signature")))(r)
			}, code: "SignatureDoesNotMatch"},
		{name: "other method", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: func(r *http.Request) { r.Method = http.MethodDelete }, code: "SignatureDoesNotMatch"},
		{name: "other host", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: func(r *http.Request) { r.Host = "evil.test:8080" }, code: "SignatureDoesNotMatch"},
		{name: "wrong content type", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: func(r *http.Request) { r.Header.Set("Content-Type", "application/json") }, code: "SignatureDoesNotMatch"},
		{name: "missing content type", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: func(r *http.Request) { r.Header.Del("Content-Type") }, code: "SignatureDoesNotMatch"},
		{name: "second content type", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: func(r *http.Request) { r.Header.Add("Content-Type", "application/json") }, code: "SignatureDoesNotMatch"},
		{name: "unsigned content type", method: "PUT", query: maxSize, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: func(r *http.Request) { r.Header.Set("Content-Type", "text/csv") }, code: "AccessDenied", msg: "not signed"},
		{name: "unsigned amz header", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: func(r *http.Request) { r.Header.Set("X-Amz-Meta-Owner", "mallory") }, code: "AccessDenied", msg: "not signed"},
		{name: "unsigned x-amz-date", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: func(r *http.Request) { r.Header.Set("X-Amz-Date", r.URL.Query().Get("X-Amz-Date")) }, code: "AccessDenied", msg: "not signed"},
		{name: "unsigned decoded length", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: func(r *http.Request) { r.Header.Set("X-Amz-Decoded-Content-Length", "26") }, code: "AccessDenied", msg: "not signed"},

		// x-amz-content-sha256 on a presigned request: allowed unsigned (as
		// on AWS), then it only declares how the body is checked.
		{name: "presigned unsigned payload header", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", unsignedPayload) }, payload: payloadUnsigned},
		{name: "presigned unsigned hash header", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", bodyHash) }, payload: payloadHashed},
		{name: "presigned signed hash header", method: "PUT", query: maxSize, header: http.Header{"Content-Type": {"text/csv"}, "X-Amz-Content-Sha256": {bodyHash}},
			sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900), payload: payloadHashed},
		{name: "presigned signed hash header changed", method: "PUT", query: maxSize, header: http.Header{"Content-Type": {"text/csv"}, "X-Amz-Content-Sha256": {bodyHash}},
			sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900), mutate: func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", unsignedPayload) }, code: "SignatureDoesNotMatch"},
		{name: "presigned two hash headers", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: func(r *http.Request) { r.Header["X-Amz-Content-Sha256"] = []string{unsignedPayload, bodyHash} }, code: "InvalidArgument"},
		{name: "presigned bad hash header", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", "not-a-hash") }, code: "InvalidArgument"},
		{name: "presigned streaming header", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", streamingPayload) }, code: "InvalidRequest"},
		{name: "presigned unsigned trailer header", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900),
			mutate: func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER") }, code: "NotImplemented", msg: "STREAMING-UNSIGNED-PAYLOAD-TRAILER"},
		{name: "presigned hash header, wrong secret", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, "not-the-secret", DefaultRegion, 900),
			mutate: func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER") }, code: "SignatureDoesNotMatch"},
		{name: "presigned trailer header, expired", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900), clock: 901 * time.Second,
			mutate: func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER") }, code: "AccessDenied", msg: "Request has expired"},
		{name: "header tampered range", method: "GET", header: http.Header{"Range": {"bytes=0-9"}}, sign: headerSign(testAccessKey, testSecretKey, DefaultRegion, emptySHA256),
			mutate: func(r *http.Request) { r.Header.Set("Range", "bytes=0-999") }, code: "SignatureDoesNotMatch"},
		{name: "header tampered payload hash", method: "PUT", header: csv, sign: headerSign(testAccessKey, testSecretKey, DefaultRegion, bodyHash),
			mutate: func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", unsignedPayload) }, code: "SignatureDoesNotMatch"},
		{name: "header tampered path", method: "DELETE", sign: headerSign(testAccessKey, testSecretKey, DefaultRegion, emptySHA256),
			mutate: func(r *http.Request) { r.URL.Path = "/outdial/campaigns/4/other.csv" }, code: "SignatureDoesNotMatch"},
		{name: "header unsigned amz header", method: "GET", sign: headerSign(testAccessKey, testSecretKey, DefaultRegion, emptySHA256),
			mutate: func(r *http.Request) { r.Header.Set("X-Amz-Copy-Source", "/outdial/x") }, code: "AccessDenied", msg: "not signed"},

		// Other credentials.
		{name: "wrong secret", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, "not-the-secret", DefaultRegion, 900), code: "SignatureDoesNotMatch"},
		{name: "other access key", method: "PUT", query: maxSize, header: csv, sign: presign("SOMEONEELSE", testSecretKey, DefaultRegion, 900), code: "InvalidAccessKeyId"},
		{name: "header wrong secret", method: "GET", sign: headerSign(testAccessKey, "not-the-secret", DefaultRegion, emptySHA256), code: "SignatureDoesNotMatch"},
		{name: "header other access key", method: "GET", sign: headerSign("SOMEONEELSE", testSecretKey, DefaultRegion, emptySHA256), code: "InvalidAccessKeyId"},
		{name: "other region", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, "eu-west-1", 900), code: "AuthorizationQueryParametersError", msg: "region"},
		{name: "header other region", method: "GET", sign: headerSign(testAccessKey, testSecretKey, "eu-west-1", emptySHA256), code: "AuthorizationHeaderMalformed", msg: "region"},

		// Time.
		{name: "expired", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900), clock: 901 * time.Second, code: "AccessDenied", msg: "Request has expired"},
		{name: "not yet valid", method: "PUT", query: maxSize, header: csv, sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900), clock: -16 * time.Minute, code: "AccessDenied", msg: "not valid yet"},
		{name: "header skewed late", method: "GET", sign: headerSign(testAccessKey, testSecretKey, DefaultRegion, emptySHA256), clock: 16 * time.Minute, code: "RequestTimeTooSkewed"},
		{name: "header skewed early", method: "GET", sign: headerSign(testAccessKey, testSecretKey, DefaultRegion, emptySHA256), clock: -16 * time.Minute, code: "RequestTimeTooSkewed"},
		{name: "expiry over a week", method: "GET", sign: presign(testAccessKey, testSecretKey, DefaultRegion, 604801), code: "AuthorizationQueryParametersError"},
		{name: "bad expiry", method: "GET", sign: presign(testAccessKey, testSecretKey, DefaultRegion, 60), mutate: setQuery("X-Amz-Expires", "soon"), code: "AuthorizationQueryParametersError"},
		{name: "bad date", method: "GET", sign: presign(testAccessKey, testSecretKey, DefaultRegion, 60), mutate: setQuery("X-Amz-Date", "yesterday"), code: "AuthorizationQueryParametersError"},

		// Missing or malformed authentication.
		{name: "unsigned", method: "PUT", header: csv, sign: func(r *http.Request) *http.Request { return r }, code: "AccessDenied"},
		{name: "both forms", method: "GET", sign: presign(testAccessKey, testSecretKey, DefaultRegion, 60),
			mutate: func(r *http.Request) { r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=x") }, code: "InvalidArgument"},
		{name: "wrong algorithm", method: "GET", sign: presign(testAccessKey, testSecretKey, DefaultRegion, 60), mutate: setQuery("X-Amz-Algorithm", "AWS4-HMAC-SHA1"), code: "AuthorizationQueryParametersError"},
		{name: "header sigv2", method: "GET", sign: func(r *http.Request) *http.Request {
			r.Header.Set("Authorization", "AWS "+testAccessKey+":c2lnbmF0dXJl")
			return r
		}, code: "InvalidRequest"},
		{name: "header malformed", method: "GET", sign: headerSign(testAccessKey, testSecretKey, DefaultRegion, emptySHA256),
			mutate: func(r *http.Request) {
				r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "SignedHeaders=", "Headers=", 1))
			}, code: "AuthorizationHeaderMalformed"},
		{name: "header without host signed", method: "GET", sign: headerSign(testAccessKey, testSecretKey, DefaultRegion, emptySHA256),
			mutate: func(r *http.Request) {
				r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "host;", "", 1))
			}, code: "AuthorizationHeaderMalformed"},
		{name: "header without payload hash", method: "GET", sign: headerSign(testAccessKey, testSecretKey, DefaultRegion, ""), code: "InvalidRequest", msg: "x-amz-content-sha256"},
		{name: "header without date", method: "GET", sign: headerSign(testAccessKey, testSecretKey, DefaultRegion, emptySHA256),
			mutate: func(r *http.Request) { r.Header.Del("X-Amz-Date") }, code: "AccessDenied"},
		{name: "header streaming trailer", method: "PUT", sign: headerSign(testAccessKey, testSecretKey, DefaultRegion, "STREAMING-UNSIGNED-PAYLOAD-TRAILER"), code: "NotImplemented"},
		{name: "header bad payload hash", method: "PUT", sign: headerSign(testAccessKey, testSecretKey, DefaultRegion, "not-a-hash"), code: "InvalidArgument"},
		{name: "credential without scope", method: "GET", sign: presign(testAccessKey, testSecretKey, DefaultRegion, 60), mutate: setQuery("X-Amz-Credential", testAccessKey), code: "AuthorizationQueryParametersError"},
		{name: "credential date differs", method: "GET", sign: presign(testAccessKey, testSecretKey, DefaultRegion, 60),
			mutate: func(r *http.Request) {
				c := strings.Split(r.URL.Query().Get("X-Amz-Credential"), "/")
				c[1] = "19990101"
				setQuery("X-Amz-Credential", strings.Join(c, "/"))(r)
			}, code: "AuthorizationQueryParametersError"},
		{name: "credential other service", method: "GET", sign: presign(testAccessKey, testSecretKey, DefaultRegion, 60),
			mutate: func(r *http.Request) {
				setQuery("X-Amz-Credential", strings.Replace(r.URL.Query().Get("X-Amz-Credential"), "/s3/", "/sts/", 1))(r)
			}, code: "AuthorizationQueryParametersError"},
	}
	for _, p := range []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature"} {
		cases = append(cases, sigCase{name: "missing " + p, method: "PUT", query: maxSize, header: csv,
			sign: presign(testAccessKey, testSecretKey, DefaultRegion, 900), mutate: setQuery(p, ""), code: "AuthorizationQueryParametersError"})
	}

	for _, tc := range cases {
		for _, key := range vectorKeys {
			t.Run(tc.name+"/"+key, func(t *testing.T) {
				clock := &testClock{}
				v := verifier{accessKey: testAccessKey, secretKey: testSecretKey, region: DefaultRegion, now: clock.now}
				r := asReceived(tc.sign(clientRequest(t, tc.method, key, tc.query, tc.header)))
				if tc.mutate != nil {
					tc.mutate(r)
				}
				clock.set(tc.clock)
				query, err := url.ParseQuery(r.URL.RawQuery)
				if err != nil {
					t.Fatalf("parse query: %v", err)
				}
				res, e := v.verify(r, query)
				switch {
				case tc.code == "" && e != nil:
					t.Fatalf("verify = %v, want accepted", e)
				case tc.code == "":
					if res.mode != tc.payload {
						t.Fatalf("payload mode = %d, want %d", res.mode, tc.payload)
					}
				case e == nil:
					t.Fatalf("verify accepted, want %s", tc.code)
				case e.code != tc.code || !strings.Contains(e.message, tc.msg):
					t.Fatalf("verify = %v, want %s containing %q", e, tc.code, tc.msg)
				}
			})
		}
	}
}

// The canonical URI must match minio-go's encoding for every key.
func TestEncodePathMatchesMinio(t *testing.T) {
	for _, key := range append(vectorKeys, "a~b_c-d.e/f", "é", "%", " ") {
		if got, want := encodePath("/outdial/"+key), s3utils.EncodePath("/outdial/"+key); got != want {
			t.Fatalf("encodePath(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestCanonicalQueryOrder(t *testing.T) {
	q := url.Values{"b": {"2", "1"}, "a-b": {"x y"}, "a": {"+"}, "location": {""}}
	if got, want := canonicalQuery(q, false), "a=%2B&a-b=x%20y&b=1&b=2&location="; got != want {
		t.Fatalf("canonicalQuery = %q, want %q", got, want)
	}
}
