package objstore

import "net/http"

// storageFullCode is the S3 error code of an upload refused for lack of
// disk space. AWS S3 has no such answer (it never runs out); MinIO, the
// most common self-hosted S3 service, answers 507 XMinioStorageFull when
// its drives reach their free-space threshold, and S3 clients (minio-go,
// the AWS SDKs' generic error path) surface that code as is. The bundled
// endpoint answers the same.
const storageFullCode = "XMinioStorageFull"

// checkSpace asks the configured SpaceCheck whether an upload of size bytes
// (-1: unknown, then up to limit) may be written; a refusal is a 507 S3
// error whose message is the check's error text (how much is free and
// the reserve).
func (h *Handler) checkSpace(size, limit int64) error {
	if h.space == nil {
		return nil
	}
	need := size
	if need < 0 {
		need = limit
	}
	if err := h.space(need); err != nil {
		return &s3Error{http.StatusInsufficientStorage, storageFullCode, err.Error()}
	}
	return nil
}
