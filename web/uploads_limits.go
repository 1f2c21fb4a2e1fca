package web

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/store/diskspace"
)

// checkDisk refuses work that would write need bytes (0: a campaign import
// of unknown size) while free space is, or would be, below the disk
// reserve: 507 with how much is free and the reserve. A failure to measure
// the disk is logged and lets the work through: the reserve protects the
// dialer from uploads, it must not stop the service when statfs fails.
func (s *Server) checkDisk(ctx context.Context, need int64) error {
	err := s.limits.DiskReserve.Check(need)
	if err == nil {
		return nil
	}
	if diskspace.IsLowSpace(err) {
		return errStatus(http.StatusInsufficientStorage, err.Error())
	}
	s.log.WarnContext(ctx, "disk reserve not checked", slog.String("error", err.Error()))
	return nil
}

// needsDiskRoom wraps a handler that writes an unknown amount to the
// database (a campaign create) so that it answers 507 while free space is
// below the disk reserve, before doing anything.
func (s *Server) needsDiskRoom(h authedHandler) authedHandler {
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
		if err := s.checkDisk(r.Context(), 0); err != nil {
			return err
		}
		return h(w, r, ps, org)
	}
}

// uploadQuota keeps each organization's uploads within Limits'
// UploadQuotaBytes and UploadQuotaFiles. The stored uploads are listed from
// the object store at each presign; the presigned ones not yet uploaded
// are remembered here (in memory: a restart forgets them, and they expire
// with their URL anyway) so that many presigns in a row cannot each see
// the same free quota.
type uploadQuota struct {
	maxBytes  int64
	maxFiles  int
	retention time.Duration
	now       func() time.Time

	mu      sync.Mutex
	orgs    map[int64]*sync.Mutex              // one presign at a time per organization
	pending map[int64]map[string]pendingUpload // organization → key → reservation
}

// pendingUpload is a presigned upload not seen in the store yet.
type pendingUpload struct {
	size    int64
	expires time.Time
}

func newUploadQuota(l Limits) *uploadQuota {
	q := &uploadQuota{maxBytes: l.UploadQuotaBytes, maxFiles: l.UploadQuotaFiles, retention: l.UploadRetention, now: l.Now,
		orgs: map[int64]*sync.Mutex{}, pending: map[int64]map[string]pendingUpload{}}
	if q.now == nil {
		q.now = time.Now
	}
	return q
}

func (q *uploadQuota) orgLock(org int64) *sync.Mutex {
	q.mu.Lock()
	defer q.mu.Unlock()
	m := q.orgs[org]
	if m == nil {
		m = &sync.Mutex{}
		q.orgs[org] = m
	}
	return m
}

// admit checks that org may presign one more upload of size bytes under
// key, and if so reserves it until the URL expires. Over quota: 413 with
// what is stored, what is pending, the file and the quota.
func (q *uploadQuota) admit(ctx context.Context, uploads Uploader, org int64, key string, size int64) error {
	if q.maxBytes <= 0 && q.maxFiles <= 0 {
		return nil
	}
	lock := q.orgLock(org)
	lock.Lock()
	defer lock.Unlock()
	objs, err := uploads.List(ctx, UploadKeyPrefix(org))
	if err != nil {
		return fmt.Errorf("upload quota: %w", err)
	}
	stored := make(map[string]bool, len(objs))
	var storedBytes int64
	for _, o := range objs {
		stored[o.Key] = true
		storedBytes += o.Size
	}
	now := q.now()
	q.mu.Lock()
	defer q.mu.Unlock()
	var pendingBytes int64
	var pendingFiles int
	for k, p := range q.pending[org] {
		if stored[k] || !now.Before(p.expires) {
			delete(q.pending[org], k)
			continue
		}
		pendingBytes += p.size
		pendingFiles++
	}
	bytes, files := storedBytes+pendingBytes, len(objs)+pendingFiles
	over := ""
	switch {
	case q.maxBytes > 0 && bytes+size > q.maxBytes:
		over = fmt.Sprintf("this %s file would pass the organization's upload quota of %s",
			diskspace.Format(uint64(size)), diskspace.Format(uint64(q.maxBytes)))
	case q.maxFiles > 0 && files+1 > q.maxFiles:
		over = fmt.Sprintf("one more file would pass the organization's quota of %d uploads", q.maxFiles)
	}
	if over != "" {
		detail := fmt.Sprintf("upload quota exceeded: the organization has %s in %d %s (%d of them presigned and not uploaded yet); %s. "+
			"An upload is deleted once a campaign has been created from it", diskspace.Format(uint64(bytes)), files, plural(files, "upload"), pendingFiles, over)
		if q.retention > 0 {
			detail += fmt.Sprintf(", or %s after it was uploaded", formatAge(q.retention))
		}
		return errStatus(http.StatusRequestEntityTooLarge, detail+".")
	}
	if q.pending[org] == nil {
		q.pending[org] = map[string]pendingUpload{}
	}
	q.pending[org][key] = pendingUpload{size: size, expires: now.Add(uploadExpiry)}
	return nil
}

// formatAge writes d as "24 h", "90 min" or "30 s".
func formatAge(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%d h", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%d min", d/time.Minute)
	}
	return fmt.Sprintf("%d s", d/time.Second)
}
