package cmd

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/objstore"
	"github.com/outdial/outdial/web"
)

// objects is the object store the service presigns uploads for and reads
// contact files from, and, in bundled mode, the S3 endpoint to mount.
type objects struct {
	store   *objstore.Store
	handler *objstore.Handler // nil for a remote store
}

// publicURL returns --public-url without a trailing slash; when it is
// empty, http://<listen address>, or with TLS on (t not nil)
// t.defaultPublicURL. With TLS on it must be https: the listener speaks
// nothing else.
func publicURL(f *pflag.FlagSet, listenAddr string, t *tlsSetup) (*url.URL, error) {
	raw, _ := f.GetString("public-url")
	if raw == "" {
		raw = "http://" + listenAddr
		if t != nil {
			raw = t.defaultPublicURL(listenAddr)
		}
	}
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--public-url must be an absolute http(s) URL, got %q", raw)
	}
	if t != nil && u.Scheme != "https" {
		return nil, fmt.Errorf("--public-url must be an https URL when serve terminates TLS (--tls-cert or --acme-domain), got %q", raw)
	}
	return u, nil
}

// buildObjects returns the remote S3 store when --s3-endpoint is set, else the
// bundled store under DATA/objects, served at the public URL's host with
// credentials derived from the server secret.
func buildObjects(ctx context.Context, f *pflag.FlagSet, dataDir string, public *url.URL, sealer *store.Sealer, maxUpload int64, log *slog.Logger) (*objects, error) {
	endpoint, _ := f.GetString("s3-endpoint")
	region, _ := f.GetString("s3-region")
	if endpoint != "" {
		bucket, _ := f.GetString("s3-bucket")
		access, _ := f.GetString("s3-access-key")
		secret, _ := f.GetString("s3-secret-key")
		insecure, _ := f.GetBool("s3-insecure")
		st, err := objstore.NewRemote(ctx, objstore.RemoteConfig{
			Endpoint: endpoint, Bucket: bucket, AccessKey: access, SecretKey: secret, Region: region, Insecure: insecure,
		})
		if err != nil {
			return nil, fmt.Errorf("remote object store: %w", err)
		}
		return &objects{store: st}, nil
	}
	st, h, err := objstore.NewBundled(objstore.BundledConfig{
		Dir:           filepath.Join(dataDir, "objects"),
		Endpoint:      public.Host,
		Insecure:      public.Scheme == "http",
		AccessKey:     "outdial-" + hex.EncodeToString(sealer.Derive("s3-access-key")[:8]),
		SecretKey:     base64.RawURLEncoding.EncodeToString(sealer.Derive("s3-secret-key")),
		Region:        region,
		MaxObjectSize: maxUpload,
		Logger:        log,
		SpaceCheck:    objectSpaceCheck(f, dataDir, log),
	})
	if err != nil {
		return nil, fmt.Errorf("bundled object store: %w", err)
	}
	return &objects{store: st, handler: h}, nil
}

// webConfig fills the object-store fields of cfg.
func (o *objects) webConfig(cfg *web.Config) {
	cfg.Uploads = o.store
	if o.handler != nil {
		cfg.Objects = o.handler
		cfg.ObjectsPrefix = objstore.PathPrefix
	}
}
