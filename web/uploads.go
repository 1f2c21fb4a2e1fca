package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/store/objstore"
)

// Uploader makes presigned upload URLs and reads uploaded files back;
// *objstore.Store implements it for the bundled and remote object stores
// alike.
type Uploader interface {
	PresignPut(ctx context.Context, key, contentType string, maxSize int64, expires time.Duration) (string, error)
	// Open streams the object at key; a missing one wraps objstore.ErrNotFound.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	// List describes the objects under prefix (the upload quota).
	List(ctx context.Context, prefix string) ([]objstore.ObjectInfo, error)
}

// uploadExpiry is how long a presigned upload URL stays valid.
const uploadExpiry = 900 * time.Second

// DefaultMaxUploadBytes is the default largest contacts file (256 MiB).
const DefaultMaxUploadBytes = 256 << 20

// UploadsPrefix starts every upload's object key; the uploads sweep
// (store.SweepUploads) looks under it only.
const UploadsPrefix = "campaigns/"

// UploadKeyPrefix returns the object-key prefix of organization org's
// uploads; a key outside it is not the organization's.
func UploadKeyPrefix(org int64) string { return fmt.Sprintf("%s%d/", UploadsPrefix, org) }

// safeFileName keeps letters, digits, '.', '-' and '_' of name (others become
// '_') and at most 100 characters, so the object key is plain ASCII.
func safeFileName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > 100 {
		s = s[len(s)-100:]
	}
	return s
}

func (s *Server) presignUpload(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	body, err := readJSONObject(r)
	if err != nil {
		return err
	}
	var p Problems
	f := fields{obj: body, loc: []any{"body"}, p: &p}
	name, _, nameOK := f.String("file_name", true, false, 1, 255)
	if nameOK && !strings.HasSuffix(strings.ToLower(name), ".csv") {
		p.Add([]any{"body", "file_name"}, "value_error", "Value error, file_name must end in .csv", name, nil)
	}
	size, _, _ := f.Int("file_size", true, ptr[int64](1), ptr(s.maxUpload))
	contentType, hasType, typeOK := f.String("content_type", false, true, 0, 0)
	if hasType && typeOK && !strings.EqualFold(strings.TrimSpace(contentType), "text/csv") {
		p.Add([]any{"body", "content_type"}, "value_error", "Value error, content_type must be text/csv", contentType, nil)
	}
	if err := p.Err(); err != nil {
		return err
	}
	if s.uploads == nil {
		return errStatus(http.StatusServiceUnavailable, "no object store is configured")
	}
	if err := s.checkDisk(r.Context(), size); err != nil {
		return err
	}
	key := UploadKeyPrefix(org) + uuid.NewString() + "_" + safeFileName(name)
	if err := s.quota.admit(r.Context(), s.uploads, org, key, size); err != nil {
		return err
	}
	url, err := s.uploads.PresignPut(r.Context(), key, "text/csv", size, uploadExpiry)
	if err != nil {
		return fmt.Errorf("presign upload: %w", err)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"upload_url": url, "file_key": key, "s3_key": key, "expires_in": int(uploadExpiry / time.Second),
	})
	return nil
}
