package plivosim

// What the simulator recorded, the signature schemes (the simulator's own
// copy, independent of the carrier's), and helpers for tests to sign,
// forge and replay webhooks.

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"math/big"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// CallRecord is a snapshot of one call.
type CallRecord struct {
	CallInfo
	// Script is the script the call plays (Outcome never "").
	Script Script
	// Status is the call's CallStatus (queued, ringing, in-progress, or
	// the final one).
	Status string
	// Machine is the Machine verdict sent ("true", "false"; "" when
	// detection was not asked for or the call was not answered).
	Machine string
	// Duration is the reported talk time in seconds, once ended.
	Duration int
	// Final is true once the call is over (see Stats.Final).
	Final bool
	// XML is the body the answer URL answered, XMLContentType its
	// Content-Type, AnswerStatus its HTTP status (0: not asked yet, or a
	// transport error).
	XML            string
	XMLContentType string
	AnswerStatus   int
	// Callbacks are the webhooks sent (answer included), in order, when
	// Config.RecordCallbacks is set.
	Callbacks []Callback
}

// Callback is one webhook sent.
type Callback struct {
	// Kind is KindRing, KindAnswer, KindMachineDetection or KindHangup.
	Kind string
	// URL, Method and Header are the request as sent (signature headers
	// included); Params its form parameters.
	URL    string
	Method string
	Header http.Header
	Params url.Values
	// Status is the HTTP status answered, 0 on a transport error (Err).
	Status int
	Err    string
}

// AppRecord is one application created.
type AppRecord struct {
	AppID string
	// Body is the create request's parameters.
	Body map[string]string
}

// record is a snapshot of the call.
func (c *call) record() CallRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CallRecord{CallInfo: c.info, Script: c.script, Status: c.status, Machine: c.machine,
		Duration: c.duration, Final: c.final, XML: c.xml, XMLContentType: c.xmlType,
		AnswerStatus: c.answerStatus, Callbacks: append([]Callback(nil), c.callbacks...)}
}

// Calls returns a snapshot of every call created, in creation order.
func (s *Server) Calls() []CallRecord {
	s.mu.Lock()
	calls := append([]*call(nil), s.calls...)
	s.mu.Unlock()
	out := make([]CallRecord, len(calls))
	for i, c := range calls {
		out[i] = c.record()
	}
	return out
}

// Call returns a snapshot of the call with request_uuid or CallUUID id.
func (s *Server) Call(id string) (CallRecord, bool) {
	c := s.lookupRequest(id)
	if c == nil {
		c = s.lookupCall(id)
	}
	if c == nil {
		return CallRecord{}, false
	}
	return c.record(), true
}

// Apps returns the applications created, in order.
func (s *Server) Apps() []AppRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]AppRecord(nil), s.apps...)
}

// Nonce returns a fresh random 20-digit nonce, as both providers send.
func Nonce() string {
	n, _ := rand.Int(rand.Reader, new(big.Int).Exp(big.NewInt(10), big.NewInt(20), nil))
	s := n.String()
	return strings.Repeat("0", 20-len(s)) + s
}

// SignatureV3 is X-Plivo-Signature-V3 of a request to rawURL (as requested,
// query included) with method, form parameters params (nil for a GET whose
// parameters are in rawURL) and nonce, as plivo-go's ComputeSignatureV3
// computes it: base64 HMAC-SHA256 keyed with authToken over
//
//	scheme://host/path + "?" + sorted query k=v joined by "&" + "." +
//	sorted POST params as k+v + "." + nonce
//
// (without a query: path + "?" + the POST params; a GET signs the query and
// params merged as sorted k=v pairs).
func SignatureV3(authToken, rawURL, method, nonce string, params url.Values) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	s := u.Scheme + "://" + u.Host + u.Path
	query := map[string]string{}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		if k, v, ok := strings.Cut(kv, "="); ok && !strings.Contains(v, "=") {
			query[k] = v
		}
	}
	if method == http.MethodGet {
		for k := range params {
			query[k] = params.Get(k)
		}
		if len(query) > 0 {
			s += "?" + joinSorted(query, "=", "&")
		}
	} else {
		post := map[string]string{}
		for k := range params {
			post[k] = params.Get(k)
		}
		switch {
		case len(query) > 0 && len(post) > 0:
			s += "?" + joinSorted(query, "=", "&") + "." + joinSorted(post, "", "")
		case len(query) > 0:
			s += "?" + joinSorted(query, "=", "&")
		case len(post) > 0:
			s += "?" + joinSorted(post, "", "")
		}
	}
	return mac(authToken, s+"."+nonce)
}

// VobizSignature is X-Vobiz-Signature-V3 (v3) or -V2 of a request to
// rawURL: base64 HMAC-SHA256 keyed with authToken over the URL without its
// query, then "." (V3 only) and the nonce.
func VobizSignature(authToken, rawURL, nonce string, v3 bool) string {
	base := rawURL
	if i := strings.IndexAny(base, "?#"); i >= 0 {
		base = base[:i]
	}
	if v3 {
		return mac(authToken, base+"."+nonce)
	}
	return mac(authToken, base+nonce)
}

// joinSorted writes m's pairs as key+kvSep+value, sorted by key, joined by sep.
func joinSorted(m map[string]string, kvSep, sep string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + kvSep + m[k]
	}
	return strings.Join(parts, sep)
}

// mac is base64 of HMAC-SHA256 keyed with key over msg.
func mac(key, msg string) string {
	h := hmac.New(sha256.New, []byte(key))
	h.Write([]byte(msg))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// SignHeaders returns the signature headers the simulator's dialect sends
// with a request to rawURL (as requested) with method and form params,
// signed with authToken and fresh nonces: Plivo X-Plivo-Signature-V3 and
// -V3-Nonce; Vobiz X-Vobiz-Signature-V3, -V2 and their nonces (each its
// own).
func (s *Server) SignHeaders(authToken, rawURL, method string, params url.Values) http.Header {
	h := http.Header{}
	if s.dialect == Vobiz {
		n3, n2 := Nonce(), Nonce()
		h.Set("X-Vobiz-Signature-V3", VobizSignature(authToken, rawURL, n3, true))
		h.Set("X-Vobiz-Signature-V3-Nonce", n3)
		h.Set("X-Vobiz-Signature-V2", VobizSignature(authToken, rawURL, n2, false))
		h.Set("X-Vobiz-Signature-V2-Nonce", n2)
		return h
	}
	n := Nonce()
	signed := params
	if method == http.MethodGet {
		signed = nil
	}
	h.Set("X-Plivo-Signature-V3", SignatureV3(authToken, rawURL, method, n, signed))
	h.Set("X-Plivo-Signature-V3-Nonce", n)
	return h
}

// signedRequest builds a webhook request to target: a form POST, or a GET
// with params added to the query; signed with authToken as the dialect
// signs.
func (s *Server) signedRequest(ctx context.Context, authToken, target, method string, params url.Values) (*http.Request, error) {
	var req *http.Request
	var err error
	if method == http.MethodGet {
		sep := "?"
		if strings.Contains(target, "?") {
			sep = "&"
		}
		target += sep + params.Encode()
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	} else {
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(params.Encode()))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	if err != nil {
		return nil, err
	}
	for k, vs := range s.SignHeaders(authToken, target, method, params) {
		req.Header[k] = vs
	}
	ua := "PlivoHTTP/1.0"
	if s.dialect == Vobiz {
		ua = "VobizHTTP/1.0"
	}
	req.Header.Set("User-Agent", ua)
	return req, nil
}

// PostSigned posts params to rawURL as a callback of this account would,
// signed with authToken (pass a wrong token to forge one; "" sends no
// signature headers at all), and returns the HTTP status answered.
func (s *Server) PostSigned(ctx context.Context, rawURL string, params url.Values, authToken string) (int, error) {
	req, err := s.signedRequest(ctx, authToken, rawURL, http.MethodPost, params)
	if err != nil {
		return 0, err
	}
	if authToken == "" {
		for k := range req.Header {
			if strings.HasPrefix(k, "X-Plivo-") || strings.HasPrefix(k, "X-Vobiz-") {
				req.Header.Del(k)
			}
		}
	}
	return s.send(req)
}

// Replay sends a recorded webhook again, byte for byte (same URL, headers,
// nonce and signature, same body), and returns the HTTP status answered.
func (s *Server) Replay(ctx context.Context, cb Callback) (int, error) {
	var req *http.Request
	var err error
	if cb.Method == http.MethodGet {
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, cb.URL, nil)
	} else {
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, cb.URL, strings.NewReader(cb.Params.Encode()))
	}
	if err != nil {
		return 0, err
	}
	req.Header = cb.Header.Clone()
	return s.send(req)
}

// send sends req with the simulator's client and returns the status.
func (s *Server) send(req *http.Request) (int, error) {
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, nil
}
