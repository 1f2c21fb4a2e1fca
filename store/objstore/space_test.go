package objstore

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// A PUT the space check refuses answers 507 XMinioStorageFull with the
// check's message, before reading the body, and stores nothing; the check
// is asked for the declared length.
func TestUploadRefusedBelowDiskReserve(t *testing.T) {
	env := newBundledEnv(t, 0)
	var mu sync.Mutex
	var asked []int64
	refuse := true
	env.h.space = func(need int64) error {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, need)
		if refuse {
			return errors.New("insufficient storage: 900 MiB free, below the 1 GiB reserve")
		}
		return nil
	}
	const key = "campaigns/5/full.csv"
	u := presignedPut(t, env, key, 1000, time.Minute)
	resp := plainPut(t, u, "text/csv", strings.NewReader(testCSV))
	e := wantS3Error(t, resp, http.StatusInsufficientStorage, "XMinioStorageFull")
	if e.Message != "insufficient storage: 900 MiB free, below the 1 GiB reserve" {
		t.Fatalf("message = %q", e.Message)
	}
	if got := files(t, env.dir); len(got) != 0 {
		t.Fatalf("files after a refused upload: %q", got)
	}
	mu.Lock()
	if len(asked) != 1 || asked[0] != int64(len(testCSV)) {
		t.Fatalf("space check asked for %v, want [%d]", asked, len(testCSV))
	}
	refuse = false
	mu.Unlock()
	if resp := plainPut(t, u, "text/csv", strings.NewReader(testCSV)); resp.StatusCode != http.StatusOK {
		t.Fatalf("status with room = %d, want 200", resp.StatusCode)
	}
	if got := readObject(t, env.store, key); got != testCSV {
		t.Fatalf("object = %q", got)
	}
}

// NewBundled hands SpaceCheck to its handler.
func TestBundledConfigSpaceCheck(t *testing.T) {
	_, h, err := NewBundled(BundledConfig{Dir: t.TempDir(), Endpoint: "x.test", AccessKey: "k", SecretKey: "s",
		SpaceCheck: func(int64) error { return errors.New("full") }})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.checkSpace(-1, 10); err == nil || !strings.Contains(err.Error(), "XMinioStorageFull: full") {
		t.Fatalf("checkSpace = %v", err)
	}
}
