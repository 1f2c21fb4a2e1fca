package objstore

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// AWS Signature Version 4 verification, following the published rules for
// S3 (canonical request, string to sign, derived signing key), for both the
// presigned query form and the Authorization header form.
const (
	sigAlgorithm     = "AWS4-HMAC-SHA256"
	amzDateFormat    = "20060102T150405Z"
	scopeDateFormat  = "20060102"
	scopeService     = "s3"
	scopeTerminator  = "aws4_request"
	unsignedPayload  = "UNSIGNED-PAYLOAD"
	streamingPayload = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	emptySHA256      = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	maxPresignExpiry = 7 * 24 * 60 * 60 // seconds, as S3
	maxClockSkew     = 15 * time.Minute
)

// verifier checks SigV4 signatures made with one access key and secret for
// one region. now is the clock the expiry and skew checks use.
type verifier struct {
	accessKey string
	secretKey string
	region    string
	now       func() time.Time
}

// payloadMode is how the body of a verified request is protected.
type payloadMode int

const (
	payloadUnsigned  payloadMode = iota // UNSIGNED-PAYLOAD: nothing to check
	payloadHashed                       // hex SHA-256 the body must have
	payloadStreaming                    // aws-chunked with per-chunk signatures
)

// authResult is what a verified request tells the body handling.
type authResult struct {
	presigned  bool
	mode       payloadMode
	sha256     []byte // payloadHashed: expected digest
	signingKey []byte // payloadStreaming: key, date, scope and seed
	amzDate    string
	scope      string
	seed       string
}

// sigParams are the signature inputs of either form.
type sigParams struct {
	credential    string
	amzDate       string
	signedHeaders string
	signature     string
}

// verify authenticates r, whose query string is already parsed into query.
// It accepts exactly one of the two forms; with neither it answers
// AccessDenied. Every failure is an S3 error to send as is. The canonical
// request is built from r.URL.Path (decoded, then re-encoded as SigV4
// says), r.Host and the signed header values, so the path and query that
// were verified are the ones the handler acts on.
func (v *verifier) verify(r *http.Request, query url.Values) (*authResult, *s3Error) {
	auth := r.Header.Get("Authorization")
	presigned := query.Has("X-Amz-Algorithm") || query.Has("X-Amz-Credential") || query.Has("X-Amz-Signature")
	switch {
	case auth != "" && presigned:
		return nil, errInvalidArgument("Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter or the Authorization header should be specified")
	case presigned:
		return v.verifyQuery(r, query)
	case auth != "":
		return v.verifyHeader(r, query, auth)
	default:
		return nil, errAccessDenied("")
	}
}

func (v *verifier) verifyQuery(r *http.Request, query url.Values) (*authResult, *s3Error) {
	names := []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature"}
	vals := make(map[string]string, len(names))
	for _, n := range names {
		if len(query[n]) != 1 || query[n][0] == "" {
			return nil, errQueryAuth("Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.")
		}
		vals[n] = query[n][0]
	}
	if vals["X-Amz-Algorithm"] != sigAlgorithm {
		return nil, errQueryAuth(`X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"`)
	}
	expires, err := strconv.ParseInt(vals["X-Amz-Expires"], 10, 64)
	switch {
	case err != nil || expires < 0:
		return nil, errQueryAuth("X-Amz-Expires should be a number between 0 and 604800")
	case expires > maxPresignExpiry:
		return nil, errQueryAuth("X-Amz-Expires must be less than a week (in seconds) that is 604800")
	}
	p := sigParams{
		credential:    vals["X-Amz-Credential"],
		amzDate:       vals["X-Amz-Date"],
		signedHeaders: vals["X-Amz-SignedHeaders"],
		signature:     vals["X-Amz-Signature"],
	}
	res, signedAt, declared, e := v.check(r, query, p, true)
	if e != nil {
		return nil, e
	}
	now := v.now()
	switch {
	case now.Before(signedAt.Add(-maxClockSkew)):
		return nil, errNotYet
	case now.After(signedAt.Add(time.Duration(expires) * time.Second)):
		return nil, errExpired
	}
	return res.classify(declared)
}

func (v *verifier) verifyHeader(r *http.Request, query url.Values, auth string) (*authResult, *s3Error) {
	rest, ok := strings.CutPrefix(auth, sigAlgorithm+" ")
	if !ok {
		return nil, errInvalidRequest("The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.")
	}
	fields := map[string]string{}
	for part := range strings.SplitSeq(rest, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if _, dup := fields[k]; !ok || dup {
			return nil, errHeaderAuth("The authorization header is malformed; the authorization header requires three components: Credential, SignedHeaders, and Signature.")
		}
		fields[k] = val
	}
	if len(fields) != 3 || fields["Credential"] == "" || fields["SignedHeaders"] == "" || fields["Signature"] == "" {
		return nil, errHeaderAuth("The authorization header is malformed; the authorization header requires three components: Credential, SignedHeaders, and Signature.")
	}
	p := sigParams{
		credential:    fields["Credential"],
		amzDate:       r.Header.Get("X-Amz-Date"),
		signedHeaders: fields["SignedHeaders"],
		signature:     fields["Signature"],
	}
	if p.amzDate == "" {
		return nil, errAccessDenied("AWS authentication requires a valid Date or x-amz-date header")
	}
	if r.Header.Get("X-Amz-Content-Sha256") == "" {
		return nil, errInvalidRequest("Missing required header for this request: x-amz-content-sha256")
	}
	res, signedAt, declared, e := v.check(r, query, p, false)
	if e != nil {
		return nil, e
	}
	if d := v.now().Sub(signedAt); d > maxClockSkew || d < -maxClockSkew {
		return nil, errSkewed
	}
	return res.classify(declared)
}

// check does the work common to both forms: parse and scope-check the
// credential, enforce that the headers which matter are signed, and compare
// the signature in constant time. It returns the payload hash the client
// declares (see payloadHashes), which the caller classifies once the
// request's time is checked too: only an authenticated request learns what
// the endpoint makes of it.
func (v *verifier) check(r *http.Request, query url.Values, p sigParams, presigned bool) (*authResult, time.Time, string, *s3Error) {
	malformed := errHeaderAuth
	if presigned {
		malformed = errQueryAuth
	}
	signedAt, err := time.Parse(amzDateFormat, p.amzDate)
	if err != nil {
		return nil, time.Time{}, "", malformed(`X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd'T'HHmmss'Z'"`)
	}
	parts := strings.Split(p.credential, "/")
	if len(parts) < 5 {
		return nil, time.Time{}, "", malformed("Error parsing the Credential parameter; the Credential is mal-formed; expecting \"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".")
	}
	n := len(parts)
	accessKey := strings.Join(parts[:n-4], "/")
	date, region, service, term := parts[n-4], parts[n-3], parts[n-2], parts[n-1]
	switch {
	case subtle.ConstantTimeCompare([]byte(accessKey), []byte(v.accessKey)) != 1:
		return nil, time.Time{}, "", errUnknownAccessKey
	case term != scopeTerminator:
		return nil, time.Time{}, "", malformed("Error parsing the Credential parameter; incorrect terminal \"" + term + "\". This endpoint uses \"aws4_request\".")
	case service != scopeService:
		return nil, time.Time{}, "", malformed("Error parsing the Credential parameter; incorrect service \"" + service + "\". This endpoint belongs to \"s3\".")
	case region != v.region:
		return nil, time.Time{}, "", malformed("Error parsing the Credential parameter; the region '" + region + "' is wrong; expecting '" + v.region + "'")
	case date != signedAt.Format(scopeDateFormat):
		return nil, time.Time{}, "", malformed("Invalid credential date. Date is not the same as X-Amz-Date.")
	}

	signed, e := parseSignedHeaders(p.signedHeaders, malformed)
	if e != nil {
		return nil, time.Time{}, "", e
	}
	if e := requireSigned(r, signed); e != nil {
		return nil, time.Time{}, "", e
	}
	declared, canonPayload, e := payloadHashes(r, signed, presigned)
	if e != nil {
		return nil, time.Time{}, "", e
	}

	scope := strings.Join(parts[n-4:], "/")
	canonical := canonicalRequest(r, query, signed, canonPayload, presigned)
	key := signingKey(v.secretKey, date, region)
	want := hex.EncodeToString(hmacSHA256(key, stringToSign(p.amzDate, scope, canonical)))
	if subtle.ConstantTimeCompare([]byte(want), []byte(p.signature)) != 1 {
		return nil, time.Time{}, "", errSigMismatch
	}
	return &authResult{presigned: presigned, signingKey: key, amzDate: p.amzDate, scope: scope, seed: p.signature},
		signedAt, declared, nil
}

// classify sets how the body of the authenticated request a is checked,
// from the payload hash the client declared (see classifyPayload).
func (a *authResult) classify(declared string) (*authResult, *s3Error) {
	mode, sum, e := classifyPayload(declared, a.presigned)
	if e != nil {
		return nil, e
	}
	a.mode, a.sha256 = mode, sum
	return a, nil
}

// payloadHashes returns the payload hash the client declares (how the body
// is to be checked) and the one its signature covers (the last line of the
// canonical request).
//
// In the header form both are the x-amz-content-sha256 header, which the
// caller has checked is present: its value is bound into the signature
// whether or not the header is also listed in SignedHeaders.
//
// A presigned URL is made before the body exists, so its signer hashes the
// constant UNSIGNED-PAYLOAD (minio-go, the AWS SDKs). As AWS S3 does, a
// client may still add an x-amz-content-sha256 header that the URL does not
// sign (several SDKs add one to every PUT): the signature then covers
// UNSIGNED-PAYLOAD and the header only declares the body's hash, which the
// upload checks. Only when the signer listed the header in
// X-Amz-SignedHeaders does the signature cover its value (minio-go and
// aws-sdk-go v1 sign the value of a header set before presigning). Without
// the header the body is unsigned. The X-Amz-Content-Sha256 query
// parameter some presigners add is an ordinary signed parameter: it takes
// no part here, as on AWS.
func payloadHashes(r *http.Request, signed []string, presigned bool) (declared, canonical string, e *s3Error) {
	if len(r.Header.Values("X-Amz-Content-Sha256")) > 1 {
		return "", "", errInvalidArgument("x-amz-content-sha256 must be sent at most once.")
	}
	declared = r.Header.Get("X-Amz-Content-Sha256")
	if !presigned {
		return declared, declared, nil
	}
	if declared == "" {
		declared = unsignedPayload
	}
	if slices.Contains(signed, "x-amz-content-sha256") {
		return declared, declared, nil
	}
	return declared, unsignedPayload, nil
}

// classifyPayload turns the declared payload hash of an authenticated
// request into how the body is checked: not at all (UNSIGNED-PAYLOAD),
// against a SHA-256 (64 lower-case hex digits), or chunk by chunk
// (STREAMING-AWS4-HMAC-SHA256-PAYLOAD, header form only: its chunk
// signatures chain from the Authorization header's signature). The other
// aws-chunked variants S3 defines (STREAMING-UNSIGNED-PAYLOAD-TRAILER and
// the trailer and ECDSA forms) answer NotImplemented: they need trailer
// headers a presigned URL does not sign, and the only other clients of this
// endpoint (minio-go) never send them.
func classifyPayload(declared string, presigned bool) (payloadMode, []byte, *s3Error) {
	switch declared {
	case unsignedPayload:
		return payloadUnsigned, nil, nil
	case streamingPayload:
		if presigned {
			return 0, nil, errInvalidRequest("x-amz-content-sha256 " + streamingPayload +
				" needs the Authorization header form; with a presigned URL send the body as is, with no x-amz-content-sha256, UNSIGNED-PAYLOAD or the body's hex SHA-256.")
		}
		return payloadStreaming, nil, nil
	case "STREAMING-UNSIGNED-PAYLOAD-TRAILER", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER",
		"STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD", "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER":
		return 0, nil, &s3Error{http.StatusNotImplemented, "NotImplemented",
			"x-amz-content-sha256 " + declared + " (an aws-chunked body) is not supported by this endpoint; send the body as is, with no x-amz-content-sha256, UNSIGNED-PAYLOAD or the body's hex SHA-256."}
	}
	sum, err := hex.DecodeString(declared)
	if err != nil || len(sum) != sha256.Size || declared != strings.ToLower(declared) {
		return 0, nil, errInvalidArgument("x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD or a valid sha256 value.")
	}
	return payloadHashed, sum, nil
}

// parseSignedHeaders splits a SignedHeaders value. Names must be non-empty,
// lower case and unique, and "host" must be one of them.
func parseSignedHeaders(s string, malformed func(string) *s3Error) ([]string, *s3Error) {
	names := strings.Split(s, ";")
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if n == "" || n != strings.ToLower(n) || seen[n] {
			return nil, malformed("SignedHeaders must be a ';'-separated list of unique lower-case header names.")
		}
		seen[n] = true
	}
	if !seen["host"] {
		return nil, malformed("SignedHeaders must include host.")
	}
	return names, nil
}

// requireSigned refuses a request carrying an x-amz-* header, or a
// Content-Type on a PUT, that is not among the signed headers: such a
// header would change what the request does without the signer having
// agreed to it. As on AWS S3, x-amz-content-sha256 is the one exception
// (see payloadHashes): it can only make the body's check stricter. Every
// other x-amz-* header, x-amz-date, x-amz-decoded-content-length and
// x-amz-trailer included, must be signed.
func requireSigned(r *http.Request, signed []string) *s3Error {
	for name := range r.Header {
		lower := strings.ToLower(name)
		mustSign := (strings.HasPrefix(lower, "x-amz-") && lower != "x-amz-content-sha256") ||
			(lower == "content-type" && r.Method == http.MethodPut)
		if mustSign && !slices.Contains(signed, lower) {
			return errUnsignedHeaders
		}
	}
	return nil
}

// canonicalRequest builds the SigV4 canonical request of r.
func canonicalRequest(r *http.Request, query url.Values, signed []string, payload string, presigned bool) string {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	b.WriteString(encodePath(r.URL.Path))
	b.WriteByte('\n')
	b.WriteString(canonicalQuery(query, presigned))
	b.WriteByte('\n')
	for _, name := range signed {
		b.WriteString(name)
		b.WriteByte(':')
		b.WriteString(canonicalHeaderValue(r, name))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(signed, ";"))
	b.WriteByte('\n')
	b.WriteString(payload)
	return b.String()
}

// canonicalQuery encodes every parameter (but X-Amz-Signature in the
// presigned form) as key=value with SigV4 URI encoding, sorted by key and
// then value.
func canonicalQuery(query url.Values, presigned bool) string {
	type pair struct{ k, v string }
	pairs := make([]pair, 0, len(query))
	for k, vs := range query {
		if presigned && k == "X-Amz-Signature" {
			continue
		}
		ek := uriEncode(k, true)
		for _, v := range vs {
			pairs = append(pairs, pair{ek, uriEncode(v, true)})
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		return strings.Compare(a.v, b.v)
	})
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(p.v)
	}
	return b.String()
}

// canonicalHeaderValue is the value of one signed header: its values with
// surrounding space trimmed and inner runs of space collapsed, joined by
// ",". Go's server moves Host, and for chunked bodies Content-Length and
// Transfer-Encoding, out of r.Header; those are read from r itself.
func canonicalHeaderValue(r *http.Request, name string) string {
	var vals []string
	switch name {
	case "host":
		vals = []string{r.Host}
	default:
		vals = r.Header.Values(name)
		if len(vals) == 0 {
			switch {
			case name == "content-length" && r.ContentLength >= 0:
				vals = []string{strconv.FormatInt(r.ContentLength, 10)}
			case name == "transfer-encoding":
				vals = r.TransferEncoding
			}
		}
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = strings.Join(strings.Fields(v), " ")
	}
	return strings.Join(out, ",")
}

func stringToSign(amzDate, scope, canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	return sigAlgorithm + "\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
}

// signingKey derives the SigV4 key for one day, region and S3.
func signingKey(secret, date, region string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, scopeService)
	return hmacSHA256(k, scopeTerminator)
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}
