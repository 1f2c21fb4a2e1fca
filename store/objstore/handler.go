package objstore

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Names the bundled endpoint and the service agree on.
const (
	// BundledBucket is the only bucket of the bundled endpoint.
	BundledBucket = "outdial"
	// PathPrefix is the path prefix to route to the bundled [Handler]:
	// path-style requests for BundledBucket.
	PathPrefix = "/" + BundledBucket + "/"
	// MaxSizeParam is the query parameter of a presigned PUT URL that
	// carries the most bytes the upload may have. It is part of the
	// signed canonical query, so it cannot be changed or removed without
	// breaking the signature.
	MaxSizeParam = "x-outdial-max-size"
	// DefaultRegion is the SigV4 region used when a config leaves it empty.
	DefaultRegion = "us-east-1"
	// DefaultMaxObjectSize is the bundled endpoint's size cap when
	// HandlerConfig.MaxObjectSize is zero (S3's single-PUT limit).
	DefaultMaxObjectSize int64 = 5 << 30
)

// HandlerConfig configures the bundled S3-compatible endpoint.
type HandlerConfig struct {
	// Dir holds the objects (the service passes DATA/objects); created if
	// missing. Only files this package writes belong there.
	Dir string
	// AccessKey and SecretKey are the one credential requests must be
	// signed with. SecretKey is never logged.
	AccessKey string
	SecretKey string
	// Region is the SigV4 region requests must be scoped to; empty means
	// DefaultRegion.
	Region string
	// MaxObjectSize caps every upload, signed size parameter or not; zero
	// means DefaultMaxObjectSize.
	MaxObjectSize int64
	// Now is the clock for expiry and skew checks; nil means time.Now.
	Now func() time.Time
	// Logger receives one line per 5xx answer; nil discards.
	Logger *slog.Logger
	// SpaceCheck, when set, is asked before a PUT reads its body whether
	// need more bytes (the declared length, else the size limit) may be
	// written; a non-nil error refuses the upload with 507
	// XMinioStorageFull, the error's text as the message. See space.go.
	SpaceCheck func(need int64) error
}

// LogValue keeps the secret key out of logs.
func (c HandlerConfig) LogValue() slog.Value {
	return slog.GroupValue(slog.String("dir", c.Dir), slog.String("access_key", c.AccessKey),
		slog.String("secret_key", "REDACTED"), slog.String("region", c.Region))
}

// Handler is the bundled S3-compatible endpoint. Mount it, unstripped, for
// [PathPrefix] on the service's listener (for example
// mux.Handle(objstore.PathPrefix, h)); it reads the bucket from the first
// segment of r.URL.Path and signs over the full path, so a prefix-stripping
// mount breaks every signature.
//
// Every request must carry a valid SigV4 signature (presigned query or
// Authorization header) for the configured credential, or it is answered
// with an S3 XML error. Supported: PUT, GET (with Range and conditional
// headers), HEAD and DELETE of objects; HEAD of the bucket and GET
// ?location. Multipart uploads, copies and listings answer NotImplemented;
// other methods MethodNotAllowed. Mount it for the bucket path without its
// trailing slash ("/outdial") too, so that every request for the bucket
// gets an S3 answer.
type Handler struct {
	files   fileStore
	ver     verifier
	maxSize int64
	log     *slog.Logger
	space   func(need int64) error // nil: no check
}

// NewHandler returns the bundled endpoint for cfg, creating cfg.Dir.
func NewHandler(cfg HandlerConfig) (*Handler, error) {
	if cfg.Dir == "" || cfg.AccessKey == "" || cfg.SecretKey == "" {
		return nil, errors.New("bundled object store: dir, access key and secret key are required")
	}
	if err := os.MkdirAll(cfg.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("create object directory: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	if cfg.MaxObjectSize <= 0 {
		cfg.MaxObjectSize = DefaultMaxObjectSize
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handler{
		files:   fileStore{root: cfg.Dir, idx: &keyIndex{}},
		ver:     verifier{accessKey: cfg.AccessKey, secretKey: cfg.SecretKey, region: cfg.Region, now: cfg.Now},
		maxSize: cfg.MaxObjectSize,
		log:     cfg.Logger,
		space:   cfg.SpaceCheck,
	}, nil
}

// ServeHTTP authenticates the request and then routes it by method and
// path. Every answer under the bucket path is S3's: an S3 XML error body
// (none for HEAD) with a code, never the API's JSON. A method S3 has no
// use for here (PATCH, OPTIONS, ...) answers 405 MethodNotAllowed, with
// S3's Allow header and Method and ResourceType elements, before
// authentication: that answer depends on nothing but the method and
// whether the path names the bucket or an object. For the other methods
// authentication comes first, so an unsigned request (a bucket listing, a
// HEAD, a GET of any key) answers 403 AccessDenied and learns nothing
// about buckets or keys. Only PUT reads a body, so only PUT bodies are
// checked against x-amz-content-sha256; the bodies of other methods are
// ignored unread.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reqID := newRequestID()
	w.Header().Set("x-amz-request-id", reqID)
	w.Header().Set("Server", "Outdial")
	fail := func(err error) { h.fail(w, r, reqID, err) }

	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodPost:
	default:
		fail(errMethodNotAllowed)
		return
	}
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		fail(errInvalidArgument("The query string is malformed."))
		return
	}
	auth, s3err := h.ver.verify(r, query)
	if s3err != nil {
		fail(s3err)
		return
	}
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if bucket != BundledBucket {
		fail(errNoSuchBucket)
		return
	}
	if key == "" {
		h.serveBucket(w, r, query, fail)
		return
	}
	if len(key) > maxKeyLen {
		fail(&s3Error{http.StatusBadRequest, "KeyTooLongError", "Your key is too long."})
		return
	}
	if ValidateKey(key) != nil {
		fail(errInvalidKeyS3)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		h.getObject(w, r, key, fail)
	case http.MethodPut:
		h.putObject(w, r, key, query, auth, fail)
	case http.MethodDelete:
		// As in S3, deleting a missing key succeeds.
		if err := h.files.remove(key); err != nil && !errors.Is(err, ErrNotFound) {
			fail(err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case http.MethodPost:
		fail(errNotImplemented)
	default:
		fail(errMethodNotAllowed)
	}
}

// serveBucket answers the bucket-level calls minio-go makes: HEAD (bucket
// exists), GET ?location (bucket region) and PUT (make bucket: the bucket
// always exists).
func (h *Handler) serveBucket(w http.ResponseWriter, r *http.Request, query url.Values, fail func(error)) {
	switch {
	case r.Method == http.MethodHead:
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodGet && query.Has("location"):
		type location struct {
			XMLName xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ LocationConstraint"`
			Region  string   `xml:",chardata"`
		}
		body, err := xml.Marshal(location{Region: h.ver.region})
		if err != nil {
			fail(fmt.Errorf("encode location: %w", err))
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write([]byte(xml.Header))
		_, _ = w.Write(body)
	case r.Method == http.MethodPut:
		fail(&s3Error{http.StatusConflict, "BucketAlreadyOwnedByYou",
			"Your previous request to create the named bucket succeeded and you already own it."})
	case r.Method == http.MethodGet || r.Method == http.MethodPost:
		fail(errNotImplemented)
	default:
		fail(errMethodNotAllowed)
	}
}

// getObject answers GET and HEAD through http.ServeContent, which handles
// Range, If-Match, If-None-Match, If-Modified-Since and friends.
func (h *Handler) getObject(w http.ResponseWriter, r *http.Request, key string, fail func(error)) {
	obj, err := h.files.open(key)
	if err != nil {
		fail(err)
		return
	}
	defer obj.Close()
	hd := w.Header()
	hd.Set("Content-Type", obj.hdr.ContentType)
	hd.Set("ETag", `"`+obj.hdr.MD5+`"`)
	hd.Set("Accept-Ranges", "bytes")
	http.ServeContent(&rangeErrorWriter{ResponseWriter: w, r: r, fail: fail}, r, "", obj.modTime, obj.content())
}

// rangeErrorWriter turns http.ServeContent's plain-text 416 answer into
// S3's InvalidRange XML error.
type rangeErrorWriter struct {
	http.ResponseWriter
	r       *http.Request
	fail    func(error)
	swallow bool
}

func (w *rangeErrorWriter) WriteHeader(status int) {
	if status == http.StatusRequestedRangeNotSatisfiable {
		w.swallow = true
		w.fail(&s3Error{status, "InvalidRange", "The requested range is not satisfiable"})
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *rangeErrorWriter) Write(b []byte) (int, error) {
	if w.swallow {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// fail answers err: an *s3Error as is, ErrNotFound as NoSuchKey, a write
// error of the bundled store as its S3 code, anything else as a logged
// InternalError. A body read error means the client went away; it is
// answered (to nobody, most likely) without logging.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, reqID string, err error) {
	var s3err *s3Error
	switch {
	case errors.As(err, &s3err):
	case errors.Is(err, ErrNotFound):
		s3err = errNoSuchKey
	case errors.Is(err, errTooLarge):
		s3err = errEntityTooLarge
	case errors.Is(err, errIncompleteBody):
		s3err = errIncompleteBodyS3
	case errors.Is(err, errSHA256Mismatch):
		s3err = errContentSHA256Mismatch
	case errors.Is(err, errBadDigest):
		s3err = errBadDigestS3
	case errors.Is(err, errReadBody):
		s3err = errIncompleteBodyS3
	default:
		s3err = errInternal
		h.log.ErrorContext(context.WithoutCancel(r.Context()), "bundled object store request",
			"method", r.Method, "path", r.URL.Path, "request_id", reqID, "error", err)
	}
	writeError(w, r, reqID, s3err)
}
