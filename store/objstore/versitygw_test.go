package objstore

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// findVersitygw locates the versitygw binary: $OUTDIAL_VERSITYGW, then
// <repo root>/.cache/bin/versitygw (where .ci/versitygw.sh installs it),
// then PATH. It returns "" when there is none.
func findVersitygw(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("OUTDIAL_VERSITYGW"); p != "" {
		return p
	}
	if dir, err := os.Getwd(); err == nil {
		for ; ; dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				p := filepath.Join(dir, ".cache", "bin", "versitygw")
				if _, err := os.Stat(p); err == nil {
					return p
				}
				break
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	return ""
}

// freePort returns a loopback port nothing listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startVersitygw runs versitygw on a temp directory and returns its
// host:port; the process is killed when the test ends.
func startVersitygw(t *testing.T, bin, accessKey, secretKey string) string {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	var out bytes.Buffer
	cmd := exec.Command(bin, "--port", addr, "posix", t.TempDir())
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+accessKey, "ROOT_SECRET_KEY="+secretKey)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start versitygw: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})

	// It answers unsigned requests with 403 once it listens.
	deadline := time.Now().Add(30 * time.Second)
	client := &http.Client{Timeout: time.Second}
	for {
		select {
		case err := <-exited:
			t.Fatalf("versitygw exited: %v\n%s", err, out.String())
		default:
		}
		resp, err := client.Get("http://" + addr + "/")
		if err == nil {
			_ = resp.Body.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw not answering on %s: %v", addr, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Remote mode against an independent S3 implementation: the bucket is
// created on start, the presigned URL is accepted by versitygw's own SigV4
// check, and Open reads the bytes back through minio-go.
func TestRemoteStoreAgainstVersitygw(t *testing.T) {
	bin := findVersitygw(t)
	if bin == "" {
		t.Skip("versitygw not found: run .ci/versitygw.sh (installs <repo>/.cache/bin/versitygw) or set OUTDIAL_VERSITYGW")
	}
	const ak, sk = "outdialremote", "remote-secret+with/odd=chars"
	addr := startVersitygw(t, bin, ak, sk)
	ctx := context.Background()

	st, err := NewRemote(ctx, RemoteConfig{Endpoint: addr, Bucket: "outdial-uploads", AccessKey: ak, SecretKey: sk, Insecure: true})
	if err != nil {
		t.Fatalf("NewRemote: %v", err)
	}
	// A second start finds the bucket.
	if _, err := NewRemote(ctx, RemoteConfig{Endpoint: addr, Bucket: "outdial-uploads", AccessKey: ak, SecretKey: sk, Insecure: true}); err != nil {
		t.Fatalf("NewRemote on an existing bucket: %v", err)
	}
	exerciseStore(t, st)

	// versitygw enforces the signed Content-Type too.
	u, err := st.PresignPut(ctx, "campaigns/12/typed.csv", "text/csv", 100, time.Minute)
	if err != nil {
		t.Fatalf("PresignPut: %v", err)
	}
	resp := plainPut(t, u, "application/json", strings.NewReader(testCSV))
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("PUT with another content type: status = %d, want %d", resp.StatusCode, http.StatusForbidden)
	}
	if _, err := st.Open(ctx, "campaigns/12/typed.csv"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Open after refused PUT = %v, want ErrNotFound", err)
	}

	// Listing by prefix (the upload quota, the retention sweep) and
	// deleting (RemoveObject) against an independent S3 implementation.
	for _, k := range []string{"campaigns/13/b.csv", "campaigns/13/a.csv", "campaigns/14/c.csv"} {
		if _, err := st.Put(ctx, k, "text/csv", strings.NewReader("ab"), 2); err != nil {
			t.Fatalf("Put(%q): %v", k, err)
		}
	}
	objs, err := st.List(ctx, "campaigns/13/")
	if err != nil || len(objs) != 2 || objs[0].Key != "campaigns/13/a.csv" || objs[1].Key != "campaigns/13/b.csv" ||
		objs[0].Size != 2 || objs[0].LastModified.IsZero() {
		t.Fatalf("List(campaigns/13/) = %+v, %v", objs, err)
	}
	if err := st.Delete(ctx, "campaigns/13/a.csv"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if objs, err := st.List(ctx, "campaigns/13/"); err != nil || len(objs) != 1 || objs[0].Key != "campaigns/13/b.csv" {
		t.Fatalf("List after Delete = %+v, %v", objs, err)
	}

	if _, err := NewRemote(ctx, RemoteConfig{Endpoint: addr, Bucket: "outdial-uploads", AccessKey: ak, SecretKey: "wrong", Insecure: true}); err == nil {
		t.Fatal("NewRemote with a wrong secret succeeded")
	}
}
