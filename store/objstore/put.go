package objstore

import (
	"crypto/md5"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// putObject stores the request body under key. The size limit is the
// handler's cap, lowered by a signed MaxSizeParam; a declared length over
// the limit is refused before any byte is read, and the bytes are counted
// while streaming too (chunked bodies declare nothing). The body is
// checked against x-amz-content-sha256 (a hex digest or the aws-chunked
// signatures) and Content-MD5 when present. Nothing is stored unless every
// check passes.
func (h *Handler) putObject(w http.ResponseWriter, r *http.Request, key string, query url.Values, auth *authResult, fail func(error)) {
	if r.Header.Get("X-Amz-Copy-Source") != "" || query.Has("uploadId") || query.Has("partNumber") ||
		query.Has("tagging") || query.Has("acl") || query.Has("retention") || query.Has("legal-hold") {
		fail(errNotImplemented)
		return
	}
	limit := h.maxSize
	if vs, ok := query[MaxSizeParam]; ok {
		n, err := strconv.ParseInt(vs[0], 10, 64)
		if len(vs) != 1 || err != nil || n < 0 {
			fail(errInvalidArgument(MaxSizeParam + " must be one non-negative integer."))
			return
		}
		limit = min(limit, n)
	}

	p := putParams{key: key, contentType: r.Header.Get("Content-Type"), limit: limit, size: r.ContentLength}
	if p.contentType == "" {
		p.contentType = "binary/octet-stream" // S3's default
	}
	if len(p.contentType) > maxContentType {
		fail(errInvalidArgument("Content-Type is too long."))
		return
	}
	var body io.Reader = r.Body
	switch auth.mode {
	case payloadHashed:
		p.sha256 = auth.sha256
	case payloadStreaming:
		decoded, err := strconv.ParseInt(r.Header.Get("X-Amz-Decoded-Content-Length"), 10, 64)
		if err != nil || decoded < 0 {
			fail(&s3Error{http.StatusLengthRequired, "MissingContentLength",
				"You must provide the x-amz-decoded-content-length header with a streaming upload."})
			return
		}
		p.size = decoded
		body = newChunkReader(r.Body, auth, decoded)
	}
	if p.size > limit {
		fail(errEntityTooLarge)
		return
	}
	if err := h.checkSpace(p.size, limit); err != nil {
		fail(err)
		return
	}
	if v := r.Header.Get("Content-MD5"); v != "" {
		sum, err := base64.StdEncoding.DecodeString(v)
		if err != nil || len(sum) != md5.Size {
			fail(errInvalidDigest)
			return
		}
		p.md5 = sum
	}

	info, err := h.files.put(p, body)
	if err != nil {
		fail(err)
		return
	}
	w.Header().Set("ETag", `"`+info.ETag+`"`)
	w.WriteHeader(http.StatusOK)
}
