package objstore

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"net/http"
	"strings"
)

// ErrNotFound reports that no object exists under the requested key. Open,
// Stat and Delete wrap it; compare with errors.Is.
var ErrNotFound = errors.New("object not found")

// ErrInvalidKey reports an object key this package refuses: empty, longer
// than 1024 bytes, not valid UTF-8, containing a control character (NUL
// included), starting with "/", or having a "." or ".." path segment.
// Compare with errors.Is.
var ErrInvalidKey = errors.New("invalid object key")

// Errors of the bundled writer, mapped to S3 codes by the handler.
var (
	errTooLarge       = errors.New("object larger than the allowed size")
	errSHA256Mismatch = errors.New("payload sha256 does not match x-amz-content-sha256")
	errBadDigest      = errors.New("payload md5 does not match content-md5")
	errIncompleteBody = errors.New("body shorter than declared length")
	errReadBody       = errors.New("read body")
)

// s3Error is one S3 error answer: HTTP status, code and message, written as
// the XML body real S3 sends (no body for HEAD).
type s3Error struct {
	status  int
	code    string
	message string
}

func (e *s3Error) Error() string { return e.code + ": " + e.message }

// The S3 errors the bundled endpoint answers, with S3's own wording.
func errAccessDenied(msg string) *s3Error {
	if msg == "" {
		msg = "Access Denied."
	}
	return &s3Error{http.StatusForbidden, "AccessDenied", msg}
}

var (
	errExpired     = &s3Error{http.StatusForbidden, "AccessDenied", "Request has expired"}
	errNotYet      = &s3Error{http.StatusForbidden, "AccessDenied", "Request is not valid yet"}
	errSigMismatch = &s3Error{http.StatusForbidden, "SignatureDoesNotMatch",
		"The request signature we calculated does not match the signature you provided. Check your key and signing method."}
	errUnknownAccessKey = &s3Error{http.StatusForbidden, "InvalidAccessKeyId",
		"The AWS Access Key Id you provided does not exist in our records."}
	errSkewed = &s3Error{http.StatusForbidden, "RequestTimeTooSkewed",
		"The difference between the request time and the current time is too large."}
	errUnsignedHeaders = &s3Error{http.StatusForbidden, "AccessDenied",
		"There were headers present in the request which were not signed"}
	errNoSuchKey      = &s3Error{http.StatusNotFound, "NoSuchKey", "The specified key does not exist."}
	errNoSuchBucket   = &s3Error{http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist."}
	errEntityTooLarge = &s3Error{http.StatusBadRequest, "EntityTooLarge",
		"Your proposed upload exceeds the maximum allowed object size."}
	errMethodNotAllowed = &s3Error{http.StatusMethodNotAllowed, "MethodNotAllowed",
		"The specified method is not allowed against this resource."}
	errContentSHA256Mismatch = &s3Error{http.StatusBadRequest, "XAmzContentSHA256Mismatch",
		"The provided 'x-amz-content-sha256' header does not match what was computed."}
	errBadDigestS3 = &s3Error{http.StatusBadRequest, "BadDigest",
		"The Content-MD5 you specified did not match what we received."}
	errInvalidDigest = &s3Error{http.StatusBadRequest, "InvalidDigest",
		"The Content-MD5 you specified is not valid."}
	errIncompleteBodyS3 = &s3Error{http.StatusBadRequest, "IncompleteBody",
		"You did not provide the number of bytes specified by the Content-Length HTTP header."}
	errInvalidKeyS3 = &s3Error{http.StatusBadRequest, "InvalidArgument",
		"Object key is empty, too long, not UTF-8, or contains a control character, a leading '/' or a '.' or '..' segment."}
	errNotImplemented = &s3Error{http.StatusNotImplemented, "NotImplemented",
		"A header you provided implies functionality that is not implemented."}
	errInternal = &s3Error{http.StatusInternalServerError, "InternalError",
		"We encountered an internal error. Please try again."}
)

func errInvalidArgument(msg string) *s3Error {
	return &s3Error{http.StatusBadRequest, "InvalidArgument", msg}
}

func errInvalidRequest(msg string) *s3Error {
	return &s3Error{http.StatusBadRequest, "InvalidRequest", msg}
}

func errQueryAuth(msg string) *s3Error {
	return &s3Error{http.StatusBadRequest, "AuthorizationQueryParametersError", msg}
}

func errHeaderAuth(msg string) *s3Error {
	return &s3Error{http.StatusBadRequest, "AuthorizationHeaderMalformed", msg}
}

// errorBody is the XML document of an S3 error. Method and ResourceType
// are set for MethodNotAllowed only, as S3 does.
type errorBody struct {
	XMLName      xml.Name `xml:"Error"`
	Code         string   `xml:"Code"`
	Message      string   `xml:"Message"`
	Method       string   `xml:"Method,omitempty"`
	ResourceType string   `xml:"ResourceType,omitempty"`
	Resource     string   `xml:"Resource"`
	RequestID    string   `xml:"RequestId"`
}

// writeError answers e for the request r. The body is omitted for HEAD, as
// S3 does; the status and the x-amz-request-id header are always set. A
// MethodNotAllowed answer carries an Allow header listing the methods of
// the resource (bucket or object) the path names.
func writeError(w http.ResponseWriter, r *http.Request, reqID string, e *s3Error) {
	h := w.Header()
	for _, k := range []string{"Content-Length", "Content-Range", "ETag", "Last-Modified", "Accept-Ranges"} {
		h.Del(k)
	}
	h.Set("x-amz-request-id", reqID)
	doc := errorBody{Code: e.code, Message: e.message, Resource: r.URL.Path, RequestID: reqID}
	if e.code == errMethodNotAllowed.code {
		doc.Method, doc.ResourceType = r.Method, "OBJECT"
		h.Set("Allow", "DELETE, GET, HEAD, PUT")
		if _, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/"); key == "" {
			doc.ResourceType = "BUCKET"
			h.Set("Allow", "GET, HEAD, PUT")
		}
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(e.status)
		return
	}
	body, err := xml.Marshal(doc)
	if err != nil {
		body = nil // cannot happen with string fields; answer the status alone
	}
	h.Set("Content-Type", "application/xml")
	w.WriteHeader(e.status)
	_, _ = w.Write([]byte(xml.Header))
	_, _ = w.Write(body)
}

// newRequestID returns a random identifier for one request, sent back in
// x-amz-request-id and in error bodies.
func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}
