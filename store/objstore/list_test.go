package objstore

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func listKeys(t *testing.T, st *Store, prefix string) []string {
	t.Helper()
	objs, err := st.List(context.Background(), prefix)
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	return keys
}

// The bundled store lists by prefix from its index: objects already on disk
// when it starts (read by one walk), uploads through the endpoint and
// Store.Put, deletes through both; temp files and foreign files are not
// objects.
func TestBundledList(t *testing.T) {
	ctx := context.Background()
	env := newBundledEnv(t, 0)
	// Written before the first listing: found by the walk.
	if _, err := env.store.Put(ctx, "campaigns/1/a.csv", "text/csv", strings.NewReader("abc"), 3); err != nil {
		t.Fatal(err)
	}
	if _, err := env.store.Put(ctx, "campaigns/2/b.csv", "text/csv", strings.NewReader("hello"), 5); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env.dir, "stray-file"), []byte("not an object"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir, _ := pathFor(env.dir, "campaigns/1/x.csv")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".tmp-123"), []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := listKeys(t, env.store, "campaigns/"), []string{"campaigns/1/a.csv", "campaigns/2/b.csv"}; !slices.Equal(got, want) {
		t.Fatalf("List = %q, want %q", got, want)
	}
	objs, _ := env.store.List(ctx, "campaigns/2/")
	if len(objs) != 1 || objs[0].Size != 5 || objs[0].ContentType != "text/csv" || objs[0].LastModified.IsZero() || len(objs[0].ETag) != 32 {
		t.Fatalf("List(campaigns/2/) = %+v", objs)
	}

	// After the walk: the index follows uploads and deletes.
	u := presignedPut(t, env, "campaigns/1/c.csv", 100, time.Minute)
	if resp := plainPut(t, u, "text/csv", strings.NewReader(testCSV)); resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT status = %d", resp.StatusCode)
	}
	if err := env.store.Delete(ctx, "campaigns/1/a.csv"); err != nil {
		t.Fatal(err)
	}
	if got, want := listKeys(t, env.store, "campaigns/1/"), []string{"campaigns/1/c.csv"}; !slices.Equal(got, want) {
		t.Fatalf("List after upload and delete = %q, want %q", got, want)
	}
	objs, _ = env.store.List(ctx, "campaigns/1/c")
	if len(objs) != 1 || objs[0].Size != int64(len(testCSV)) {
		t.Fatalf("uploaded object listed as %+v", objs)
	}
	// A refused upload lists nothing new.
	u = presignedPut(t, env, "campaigns/1/d.csv", 2, time.Minute)
	if resp := plainPut(t, u, "text/csv", strings.NewReader(testCSV)); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("oversized PUT status = %d", resp.StatusCode)
	}
	if got := listKeys(t, env.store, "campaigns/1/d"); len(got) != 0 {
		t.Fatalf("refused upload listed: %q", got)
	}

	// A second Store on the same directory (a restart) sees the same.
	st2, _, err := NewBundled(BundledConfig{Dir: env.dir, Endpoint: "x.test", AccessKey: "k", SecretKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := listKeys(t, st2, ""), []string{"campaigns/1/c.csv", "campaigns/2/b.csv"}; !slices.Equal(got, want) {
		t.Fatalf("List after restart = %q, want %q", got, want)
	}
}

// In remote mode List is a ListObjectsV2 listing under the prefix.
func TestRemoteList(t *testing.T) {
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodHead: // BucketExists
		case r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2":
			asked = append(asked, r.URL.Query().Get("prefix"))
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>uploads</Name><Prefix>campaigns/3/</Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>
<Contents><Key>campaigns/3/z.csv</Key><LastModified>2026-11-20T10:00:00.000Z</LastModified><ETag>&quot;abc&quot;</ETag><Size>7</Size></Contents>
<Contents><Key>campaigns/3/a.csv</Key><LastModified>2026-11-21T10:00:00.000Z</LastModified><ETag>&quot;def&quot;</ETag><Size>9</Size></Contents>
</ListBucketResult>`)
		default:
			http.Error(w, "unexpected", http.StatusTeapot)
		}
	}))
	defer srv.Close()
	st, err := NewRemote(context.Background(), RemoteConfig{Endpoint: strings.TrimPrefix(srv.URL, "http://"), Bucket: "uploads",
		AccessKey: "k", SecretKey: "s", Insecure: true})
	if err != nil {
		t.Fatalf("NewRemote: %v", err)
	}
	objs, err := st.List(context.Background(), "campaigns/3/")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if !slices.Equal(asked, []string{"campaigns/3/"}) {
		t.Fatalf("listing asked for prefixes %q", asked)
	}
	if len(objs) != 2 || objs[0].Key != "campaigns/3/a.csv" || objs[0].Size != 9 || objs[0].ETag != "def" ||
		!objs[1].LastModified.Equal(time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("List = %+v", objs)
	}
}
