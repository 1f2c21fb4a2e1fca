package web_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/store/diskspace"
	"github.com/outdial/outdial/web"
)

// fakeDisk is an injected free-space source.
type fakeDisk struct {
	mu   sync.Mutex
	free uint64
	err  error
}

func (d *fakeDisk) usage() (diskspace.Usage, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return diskspace.Usage{Free: d.free, Total: 100 << 30}, d.err
}

func (d *fakeDisk) set(free uint64, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.free, d.err = free, err
}

// Below the disk reserve, presigns whose file would cut into it, the
// object store PUT and campaign creates answer 507 with how much is free
// and the reserve; webhooks and reads are not concerned.
func TestDiskReserve(t *testing.T) {
	disk := &fakeDisk{free: 10 << 30}
	lim := web.Limits{DiskReserve: diskspace.NewReserve(disk.usage, 1<<30)}
	le := newLimitedEnv(t, 512<<20, lim, web.ConnLimits{}, nil)

	// Room for the file: 200, and the upload is stored.
	csv := "phone_number\n+14155550100\n"
	p := le.presign(le.keyA, "ok.csv", len(csv))

	// 1.1 GiB free: a 256 MiB file would leave less than 1 GiB.
	disk.set(1<<30+100<<20, nil)
	r := le.a(http.MethodPost, presignPath, map[string]any{"file_name": "big.csv", "file_size": 256 << 20})
	wantDetail(t, r, http.StatusInsufficientStorage,
		"insufficient storage: 1.1 GiB free; 256 MiB more would leave less than the 1 GiB reserve")
	// A small file still fits.
	le.presign(le.keyA, "small.csv", 10<<20)

	// Below the reserve: the PUT of an already presigned URL is refused
	// with S3's 507 and stores nothing.
	disk.set(900<<20, nil)
	status, raw := put(t, p.URL, "text/csv", strings.NewReader(csv))
	e := wantS3Error(t, status, raw, http.StatusInsufficientStorage, "XMinioStorageFull")
	if e.Message != "insufficient storage: 900 MiB free, below the 1 GiB reserve" {
		t.Fatalf("S3 message = %q", e.Message)
	}
	le.wantNoObjectKey(p.Key)
	r = le.a(http.MethodPost, presignPath, map[string]any{"file_name": "tiny.csv", "file_size": 1})
	wantDetail(t, r, http.StatusInsufficientStorage, "insufficient storage: 900 MiB free, below the 1 GiB reserve")
	// Campaign create answers 507 before anything else.
	r = le.a(http.MethodPost, "/api/v1/campaign", map[string]any{"name": "c", "workflow_id": 1, "source_id": p.Key})
	wantDetail(t, r, http.StatusInsufficientStorage, "insufficient storage: 900 MiB free, below the 1 GiB reserve")
	// Authentication still comes first.
	wantStatus(t, le.do(http.MethodPost, "/api/v1/campaign", "", map[string]any{}), http.StatusUnauthorized)
	// Reads are not concerned.
	wantStatus(t, le.a(http.MethodGet, "/api/v1/campaign", nil), http.StatusOK)

	// Space freed: everything works again.
	disk.set(5<<30, nil)
	if status, raw := put(t, p.URL, "text/csv", strings.NewReader(csv)); status != http.StatusOK {
		t.Fatalf("PUT with room: %d %s", status, raw)
	}
	r = le.a(http.MethodPost, "/api/v1/campaign", map[string]any{"name": "c", "workflow_id": 1, "source_id": p.Key})
	if r.Status == http.StatusInsufficientStorage {
		t.Fatalf("campaign create with room answered 507")
	}

	// The disk cannot be measured: work goes on, a warning is logged.
	disk.set(0, errors.New("statfs: no such device"))
	le.presign(le.keyA, "unmeasured.csv", 100)
	if !strings.Contains(le.logs.String(), "disk reserve not checked") {
		t.Fatalf("no warning logged for the failed measure:\n%s", le.logs.String())
	}
}

// quotaClock is the injected clock of presign reservations.
type quotaClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *quotaClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *quotaClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Each organization's uploads, stored and presigned-not-yet-uploaded, stay
// within its quota of bytes and files: a presign that would pass it answers
// 413. A presign's reservation counts until its upload is stored (then the
// stored size counts) or its URL expires; a deleted upload frees its room.
func TestUploadQuota(t *testing.T) {
	clock := &quotaClock{t: time.Now()}
	lim := web.Limits{UploadQuotaBytes: 1000, UploadQuotaFiles: 3, UploadRetention: 24 * time.Hour, Now: clock.now}
	le := newLimitedEnv(t, 4096, lim, web.ConnLimits{}, nil)
	presign := func(key string, size int) response {
		return le.do(http.MethodPost, presignPath, key, map[string]any{"file_name": "c.csv", "file_size": size})
	}

	first := le.presign(le.keyA, "first.csv", 600)
	r := presign(le.keyA, 500)
	wantDetail(t, r, http.StatusRequestEntityTooLarge, "upload quota exceeded: the organization has 600 B in 1 upload "+
		"(1 of them presigned and not uploaded yet); this 500 B file would pass the organization's upload quota of 1000 B. "+
		"An upload is deleted once a campaign has been created from it, or 24 h after it was uploaded.")
	// Another organization has its own quota.
	le.presign(le.keyB, "b.csv", 1000)

	// The first upload is stored, smaller than presigned: its real size
	// counts from now on.
	if status, raw := put(t, first.URL, "text/csv", bytes.NewReader(bytes.Repeat([]byte("a"), 300))); status != http.StatusOK {
		t.Fatalf("PUT: %d %s", status, raw)
	}
	le.presign(le.keyA, "second.csv", 500) // 300 stored + 500
	wantStatus(t, presign(le.keyA, 201), http.StatusRequestEntityTooLarge)
	le.presign(le.keyA, "third.csv", 200) // 1000 exactly
	// Three files (one stored, two presigned): the count is full too.
	r = presign(le.keyA, 1)
	wantStatus(t, r, http.StatusRequestEntityTooLarge)
	if d := r.obj(t)["detail"].(string); !strings.Contains(d, "has 1000 B in 3 uploads (2 of them presigned") {
		t.Fatalf("detail = %q", d)
	}

	// Unused presigns lapse with their URL (900 s).
	clock.advance(899 * time.Second)
	wantStatus(t, presign(le.keyA, 1), http.StatusRequestEntityTooLarge)
	clock.advance(time.Second)
	le.presign(le.keyA, "after-expiry.csv", 700) // 300 stored + 700

	// Deleting the stored upload (the retention sweep) frees its room.
	if err := le.objects.Delete(t.Context(), first.Key); err != nil {
		t.Fatal(err)
	}
	le.presign(le.keyA, "after-delete.csv", 300)
}

// The file-count quota alone, and quotas off.
func TestUploadQuotaFilesAndOff(t *testing.T) {
	le := newLimitedEnv(t, 4096, web.Limits{UploadQuotaFiles: 2}, web.ConnLimits{}, nil)
	le.presign(le.keyA, "1.csv", 4096)
	le.presign(le.keyA, "2.csv", 4096)
	r := le.a(http.MethodPost, presignPath, map[string]any{"file_name": "3.csv", "file_size": 1})
	wantDetail(t, r, http.StatusRequestEntityTooLarge, "upload quota exceeded: the organization has 8 KiB in 2 uploads "+
		"(2 of them presigned and not uploaded yet); one more file would pass the organization's quota of 2 uploads. "+
		"An upload is deleted once a campaign has been created from it.")

	off := newLimitedEnv(t, 4096, web.Limits{}, web.ConnLimits{}, nil)
	for i := range 20 {
		off.presign(off.keyA, fmt.Sprintf("%d.csv", i), 4096)
	}
}
