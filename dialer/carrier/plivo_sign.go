package carrier

// Webhook signature schemes of Plivo (X-Plivo-Signature-V3) and Vobiz
// (X-Vobiz-Signature-V3, else -V2). Both are base64 HMAC-SHA256 keyed with
// the account's auth token and carry a random nonce in a companion header;
// neither has a timestamp, so the verified nonces are the request's replay
// keys (Status.ReplayKeys): the store applies a status of one nonce once,
// for ReplayTTL, across carrier swaps and restarts.

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// Signature headers.
const (
	plivoSigHeader   = "X-Plivo-Signature-V3"
	plivoNonceHeader = "X-Plivo-Signature-V3-Nonce"
	vobizSigV3       = "X-Vobiz-Signature-V3"
	vobizNonceV3     = "X-Vobiz-Signature-V3-Nonce"
	vobizSigV2       = "X-Vobiz-Signature-V2"
	vobizNonceV2     = "X-Vobiz-Signature-V2-Nonce"
)

// plivoSignedURL is the string Plivo's V3 signature covers before the nonce,
// built as plivo-go's GenerateUrl builds it (utils.go):
//
//   - base is scheme://host/path of rawURL (no query, no fragment);
//   - the URL's query is read raw (not unescaped): pairs split at "&" and
//     "=", a pair that does not split into exactly two parts dropped, a
//     repeated name keeping its value that sorts last;
//   - POST: with a query, base + "?" + the query's name=value pairs sorted
//     by name and joined by "&" + "." + the POST parameters as name+value,
//     sorted by name, no separators (a trailing "." trimmed when there are
//     none); without a query, base + "?" + the POST parameters so written
//     (no "?" when there are none);
//   - GET: base + "?" + the query and params merged (params win) as sorted
//     name=value pairs joined by "&" (no "?" when both are empty).
//
// A repeated POST parameter contributes each value, values sorted, as
// plivo-node does (plivo-go signs one value per name).
func plivoSignedURL(rawURL, method string, params url.Values) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL // signs as given; it cannot match what Plivo signed
	}
	base := u.Scheme + "://" + u.Host + u.Path
	query := plivoQueryMap(u.RawQuery)
	if method == http.MethodGet {
		for k, vs := range params {
			if len(vs) > 0 {
				query[k] = vs[len(vs)-1]
			}
		}
		if len(query) == 0 {
			return base
		}
		return base + "?" + plivoPairs(query)
	}
	post := plivoParamString(params)
	switch {
	case len(query) > 0:
		return strings.TrimRight(base+"?"+plivoPairs(query)+"."+post, ".")
	case post != "":
		return base + "?" + post
	}
	return base
}

// plivoQueryMap reads a raw query the way plivo-go does (see plivoSignedURL).
func plivoQueryMap(raw string) map[string]string {
	m := map[string]string{}
	if raw == "" {
		return m
	}
	pairs := strings.Split(raw, "&")
	sort.Strings(pairs)
	for _, p := range pairs {
		if kv := strings.Split(p, "="); len(kv) == 2 {
			m[kv[0]] = kv[1]
		}
	}
	return m
}

// plivoPairs writes m as name=value pairs sorted by name, joined by "&".
func plivoPairs(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(k + "=" + m[k])
	}
	return b.String()
}

// plivoParamString writes params as name+value, sorted by name (a repeated
// name's values sorted), without separators.
func plivoParamString(params url.Values) string {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		vs := append([]string(nil), params[k]...)
		sort.Strings(vs)
		for _, v := range vs {
			b.WriteString(k)
			b.WriteString(v)
		}
	}
	return b.String()
}

// plivoSignatureV3 is X-Plivo-Signature-V3 for a request to rawURL (exactly
// as handed to Plivo) with method and params (the POST form; for GET, any
// parameters not already in rawURL) and nonce: base64 of HMAC-SHA256 keyed
// with authToken over plivoSignedURL + "." + nonce.
func plivoSignatureV3(authToken, rawURL, method, nonce string, params url.Values) string {
	return plivoHMAC(authToken, plivoSignedURL(rawURL, method, params)+"."+nonce)
}

// vobizSignature is Vobiz's V3 signature of a request to rawURL with nonce
// (v3 false: the V2 signature): base64 of HMAC-SHA256 keyed with authToken
// over the URL without its query + "." + nonce (V2: without the ".").
// Neither covers the query or the body.
func vobizSignature(authToken, rawURL, nonce string, v3 bool) string {
	base, _, _ := strings.Cut(rawURL, "#")
	base, _, _ = strings.Cut(base, "?")
	if v3 {
		return plivoHMAC(authToken, base+"."+nonce)
	}
	return plivoHMAC(authToken, base+nonce)
}

// plivoHMAC is base64 of HMAC-SHA256 keyed with key over msg.
func plivoHMAC(key, msg string) string {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(msg))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// plivoSigMatch reports whether want is one of the comma-separated
// signatures of header (a provider rotating its token sends several),
// comparing in constant time.
func plivoSigMatch(header, want string) bool {
	ok := false
	for _, sig := range strings.Split(header, ",") {
		if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(sig)), []byte(want)) == 1 {
			ok = true
		}
	}
	return ok
}

// plivoVerify checks X-Plivo-Signature-V3 (with X-Plivo-Signature-V3-Nonce)
// of a webhook whose form parameters are params, over w.PublicURL with the
// request's method. The replay key is the nonce.
func plivoVerify(token string, w Webhook, params url.Values) ([]string, error) {
	sig := w.Request.Header.Get(plivoSigHeader)
	nonce := w.Request.Header.Get(plivoNonceHeader)
	if sig == "" || nonce == "" {
		return nil, fmt.Errorf("no %s with nonce: %w", plivoSigHeader, ErrForged)
	}
	if !plivoSigMatch(sig, plivoSignatureV3(token, w.PublicURL, w.Request.Method, nonce, params)) {
		return nil, fmt.Errorf("%s mismatch: %w", plivoSigHeader, ErrForged)
	}
	return []string{"plivo|" + nonce}, nil
}

// vobizVerify checks X-Vobiz-Signature-V3 (with its nonce) of a webhook over
// w.PublicURL; only when the request carries no V3 signature at all is
// X-Vobiz-Signature-V2 checked instead (Vobiz sends both; V2 is the same
// construction without the "." and is accepted for accounts or proxies that
// pass only it). V1 (HMAC-SHA1) is never accepted. The replay keys are
// every nonce the request carries (V3 and V2), so a captured request cannot
// be replayed by stripping its V3 headers and presenting its V2 ones.
// Neither scheme covers the body or the query string, so the attempt's URL
// token, TLS and the nonce cache carry the rest of the trust.
func vobizVerify(token string, w Webhook, _ url.Values) ([]string, error) {
	h := w.Request.Header
	sigName, nonceName, v3 := vobizSigV3, vobizNonceV3, true
	if h.Get(vobizSigV3) == "" && h.Get(vobizNonceV3) == "" {
		sigName, nonceName, v3 = vobizSigV2, vobizNonceV2, false
	}
	sig, nonce := h.Get(sigName), h.Get(nonceName)
	if sig == "" || nonce == "" {
		return nil, fmt.Errorf("no %s with nonce: %w", vobizSigV3, ErrForged)
	}
	if !plivoSigMatch(sig, vobizSignature(token, w.PublicURL, nonce, v3)) {
		return nil, fmt.Errorf("%s mismatch: %w", sigName, ErrForged)
	}
	keys := []string{"vobiz|" + nonce}
	if v3 {
		if n2 := h.Get(vobizNonceV2); n2 != "" && n2 != nonce {
			keys = append(keys, "vobiz|"+n2)
		}
	}
	return keys, nil
}
