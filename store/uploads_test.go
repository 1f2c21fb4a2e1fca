package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/objstore"
)

// sweepClock is the store's injected clock for the sweep tests.
type sweepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *sweepClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *sweepClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func bundledObjects(t *testing.T) *objstore.Store {
	t.Helper()
	st, _, err := objstore.NewBundled(objstore.BundledConfig{Dir: t.TempDir(), Endpoint: "outdial.test", AccessKey: "k", SecretKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func putObject(t *testing.T, st *objstore.Store, key, body string) {
	t.Helper()
	if _, err := st.Put(context.Background(), key, "text/csv", strings.NewReader(body), int64(len(body))); err != nil {
		t.Fatal(err)
	}
}

func objectKeys(t *testing.T, st *objstore.Store) []string {
	t.Helper()
	objs, err := st.List(context.Background(), "campaigns/")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	return keys
}

func campaignFrom(key string) store.NewCampaign {
	nc := newCampaignInput("from " + key)
	nc.SourceID = key
	return nc
}

// The sweep deletes an upload once a campaign has been created from it,
// keeps one a campaign is importing, deletes unused ones after the
// retention age, and never touches the campaigns: their contacts, report
// and redials do not need the file.
func TestSweepUploads(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	clock := &sweepClock{t: time.Now()}
	db.Now = clock.now
	org := newOrg(t, db.DB, "acme")
	objs := bundledObjects(t)
	const (
		used     = "campaigns/1/used.csv"
		unused   = "campaigns/1/unused.csv"
		failed   = "campaigns/1/failed.csv"
		other    = "campaigns/2/other.csv"
		elsewise = "exports/keep.csv" // outside the prefix
	)
	for _, k := range []string{used, unused, failed, other, elsewise} {
		putObject(t, objs, k, "phone_number\n+14155550100\n")
	}
	sweep := func() store.SweepResult {
		t.Helper()
		res, err := db.SweepUploads(ctx, objs, "campaigns/", 24*time.Hour)
		if err != nil {
			t.Fatalf("SweepUploads: %v", err)
		}
		return res
	}

	// Nothing used, nothing old: everything stays.
	if res := sweep(); res != (store.SweepResult{Kept: 4}) {
		t.Fatalf("first sweep = %+v, want 4 kept", res)
	}

	// A campaign created from "used": while it imports, the sweep keeps the
	// file; once it is visible, the next sweep deletes it.
	var during store.SweepResult
	c, err := db.CreateCampaign(ctx, org, campaignFrom(used), func(add func(store.ContactInput) error) ([]string, error) {
		during = sweep()
		return feedContacts(3, nil, nil)(add)
	})
	if err != nil {
		t.Fatal(err)
	}
	if during != (store.SweepResult{Kept: 4}) || !slices.Contains(objectKeys(t, objs), used) {
		t.Fatalf("sweep during the import = %+v; objects %q", during, objectKeys(t, objs))
	}
	// A failed create is no use: its file stays for a corrected retry.
	if _, err := db.CreateCampaign(ctx, org, campaignFrom(failed), feedContacts(2, nil, errors.New("bad row"))); err == nil {
		t.Fatal("failed create succeeded")
	}
	clock.advance(time.Minute)
	if res := sweep(); res.Used != 1 || res.Expired != 0 || res.Kept != 3 || res.Bytes == 0 {
		t.Fatalf("sweep after the create = %+v, want 1 used deleted, 3 kept", res)
	}
	if got, want := objectKeys(t, objs), []string{failed, unused, other}; !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Fatalf("objects = %q, want %q", got, want)
	}

	// The campaign does not need its file: its contacts are stored.
	got, err := db.GetCampaign(ctx, org, c.ID)
	if err != nil || got.TotalRows != 3 || got.SourceID != used {
		t.Fatalf("campaign after its file was deleted = %+v, %v", got, err)
	}

	// After the retention age the unused ones go too.
	clock.advance(23*time.Hour + 58*time.Minute)
	if res := sweep(); res.Expired != 0 {
		t.Fatalf("sweep before 24 h = %+v, want nothing expired", res)
	}
	clock.advance(2 * time.Minute)
	if res := sweep(); res.Expired != 3 || res.Kept != 0 {
		t.Fatalf("sweep after 24 h = %+v, want 3 expired", res)
	}
	if got := objectKeys(t, objs); len(got) != 0 {
		t.Fatalf("objects after retention = %q", got)
	}
	if rest, _ := objs.List(ctx, ""); len(rest) != 1 || rest[0].Key != elsewise {
		t.Fatalf("objects outside the prefix = %+v", rest)
	}
}

// A campaign created before an upload was (re)written under its key does
// not make the new file "used".
func TestSweepUploadsRewrittenKey(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	clock := &sweepClock{t: time.Now().Add(-time.Hour)}
	db.Now = clock.now
	org := newOrg(t, db.DB, "acme")
	objs := bundledObjects(t)
	const key = "campaigns/1/again.csv"
	if _, err := db.CreateCampaign(ctx, org, campaignFrom(key), feedContacts(1, nil, nil)); err != nil {
		t.Fatal(err)
	}
	putObject(t, objs, key, "phone_number\n+14155550100\n") // written an hour after the campaign
	clock.advance(time.Hour)
	res, err := db.SweepUploads(ctx, objs, "campaigns/", 24*time.Hour)
	if err != nil || res != (store.SweepResult{Kept: 1}) {
		t.Fatalf("SweepUploads = %+v, %v; want the rewritten file kept", res, err)
	}
}

// failingObjects lists like its Store but refuses one delete.
type failingObjects struct {
	*objstore.Store
	refuse string
}

func (f failingObjects) Delete(ctx context.Context, key string) error {
	if key == f.refuse {
		return errors.New("remote says no")
	}
	return f.Store.Delete(ctx, key)
}

// A failed delete is reported; the others are still done.
func TestSweepUploadsDeleteError(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	clock := &sweepClock{t: time.Now().Add(48 * time.Hour)}
	db.Now = clock.now
	objs := bundledObjects(t)
	putObject(t, objs, "campaigns/1/a.csv", "a")
	putObject(t, objs, "campaigns/1/b.csv", "b")
	res, err := db.SweepUploads(ctx, failingObjects{objs, "campaigns/1/a.csv"}, "campaigns/", 24*time.Hour)
	if err == nil || !strings.Contains(err.Error(), "remote says no") {
		t.Fatalf("err = %v, want the delete error", err)
	}
	if res.Expired != 1 || res.Kept != 1 {
		t.Fatalf("res = %+v, want 1 expired, 1 kept", res)
	}
}
