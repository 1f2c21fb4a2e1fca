package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// ObjectInfo describes a stored object.
type ObjectInfo struct {
	Key          string
	Size         int64
	ContentType  string
	ETag         string // without quotes
	LastModified time.Time
}

// Store is the service's object storage, bundled or remote. Upload URLs
// are made by minio-go in both modes. Reads go to the files directly in
// bundled mode and through minio-go in remote mode. A Store is safe for
// concurrent use.
type Store struct {
	client *minio.Client // presigning in both modes; all calls in remote mode
	bucket string
	files  *fileStore // bundled mode only
	max    int64      // bundled mode: size cap of Put
}

// RemoteConfig configures a Store on an S3 service.
type RemoteConfig struct {
	// Endpoint is the service's host:port, without scheme.
	Endpoint string
	Bucket   string
	// AccessKey and SecretKey sign every request and upload URL;
	// SecretKey is never logged.
	AccessKey string
	SecretKey string
	// Region is the SigV4 region; empty means DefaultRegion. Setting it
	// keeps presigning free of network calls.
	Region string
	// Insecure selects http instead of https.
	Insecure bool
	// Transport replaces minio-go's default HTTP transport (tests).
	Transport http.RoundTripper
}

// LogValue keeps the secret key out of logs.
func (c RemoteConfig) LogValue() slog.Value {
	return slog.GroupValue(slog.String("endpoint", c.Endpoint), slog.String("bucket", c.Bucket),
		slog.String("access_key", c.AccessKey), slog.String("secret_key", "REDACTED"),
		slog.String("region", c.Region), slog.Bool("insecure", c.Insecure))
}

// NewRemote returns a Store on the S3 service of cfg. It checks the bucket
// exists and creates it when missing, so wrong credentials or an
// unreachable endpoint fail at startup rather than at the first upload.
func NewRemote(ctx context.Context, cfg RemoteConfig) (*Store, error) {
	if cfg.Endpoint == "" || cfg.Bucket == "" || cfg.AccessKey == "" || cfg.SecretKey == "" {
		return nil, errors.New("remote object store: endpoint, bucket, access key and secret key are required")
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:     credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:    !cfg.Insecure,
		Region:    cfg.Region,
		Transport: cfg.Transport,
	})
	if err != nil {
		return nil, fmt.Errorf("remote object store client: %w", err)
	}
	exists, err := client.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return nil, fmt.Errorf("check bucket %q: %w", cfg.Bucket, err)
	}
	if !exists {
		// Nodes starting together race to create it: the one that lost
		// finds it made (BucketAlreadyOwnedByYou), which is what it wanted.
		err := client.MakeBucket(ctx, cfg.Bucket, minio.MakeBucketOptions{Region: cfg.Region})
		if code := minio.ToErrorResponse(err).Code; err != nil && code != "BucketAlreadyOwnedByYou" {
			return nil, fmt.Errorf("create bucket %q: %w", cfg.Bucket, err)
		}
	}
	return &Store{client: client, bucket: cfg.Bucket}, nil
}

// BundledConfig configures the bundled Store and its endpoint.
type BundledConfig struct {
	// Dir holds the objects (DATA/objects).
	Dir string
	// Endpoint is the host[:port], without scheme or path, clients reach
	// the service at (its public address); upload URLs point there and sign
	// it as the Host, so a proxy in front must pass the Host header through
	// unchanged. minio-go drops :80 and :443 from URLs.
	Endpoint string
	// Insecure makes upload URLs http instead of https.
	Insecure bool
	// AccessKey and SecretKey sign and verify; the service derives them
	// from its server secret. SecretKey is never logged.
	AccessKey string
	SecretKey string
	// Region, MaxObjectSize, Now, Logger and SpaceCheck are as in
	// HandlerConfig.
	Region        string
	MaxObjectSize int64
	Now           func() time.Time
	Logger        *slog.Logger
	SpaceCheck    func(need int64) error
}

// LogValue keeps the secret key out of logs.
func (c BundledConfig) LogValue() slog.Value {
	return slog.GroupValue(slog.String("dir", c.Dir), slog.String("endpoint", c.Endpoint),
		slog.String("access_key", c.AccessKey), slog.String("secret_key", "REDACTED"),
		slog.String("region", c.Region), slog.Bool("insecure", c.Insecure))
}

// NewBundled returns the bundled Store and the [Handler] to mount for
// [PathPrefix] on the service's listener. It makes no network call.
//
// Reads (Open, Stat) and Put/Delete use the files directly instead of
// going through minio-go to the service's own listener: the public
// endpoint may not be reachable from the server itself (TLS terminated
// by a proxy, NAT, hairpin), a loopback HTTP hop would cost a copy of
// every byte for nothing, and the Handler and the Store share one
// key-to-file mapping (pathFor) and one writer (fileStore.put), so there is
// no second implementation to drift. minio-go's compatibility with the
// endpoint is covered by the package's tests.
func NewBundled(cfg BundledConfig) (*Store, *Handler, error) {
	if cfg.Endpoint == "" {
		return nil, nil, errors.New("bundled object store: endpoint is required")
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	h, err := NewHandler(HandlerConfig{
		Dir: cfg.Dir, AccessKey: cfg.AccessKey, SecretKey: cfg.SecretKey, Region: cfg.Region,
		MaxObjectSize: cfg.MaxObjectSize, Now: cfg.Now, Logger: cfg.Logger, SpaceCheck: cfg.SpaceCheck,
	})
	if err != nil {
		return nil, nil, err
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:       !cfg.Insecure,
		Region:       cfg.Region,
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("bundled object store client: %w", err)
	}
	return &Store{client: client, bucket: BundledBucket, files: &h.files, max: h.maxSize}, h, nil
}

// Bucket returns the bucket objects live in.
func (s *Store) Bucket() string { return s.bucket }

// Bundled reports whether s is the bundled store.
func (s *Store) Bundled() bool { return s.files != nil }

// PresignPut returns a SigV4 query-signed URL (made by minio-go, no network
// call) that lets anyone holding it PUT one object under key until expires
// (1 s to 7 days) has passed. The request must send Content-Type equal to
// contentType, which is signed; maxSize (> 0) travels in the signed
// [MaxSizeParam] query parameter.
//
// The bundled endpoint enforces maxSize. A remote S3 service ignores the
// parameter (it only keeps it from being altered), so in remote mode the
// reader must check the object's size itself (Stat) before trusting it.
func (s *Store) PresignPut(ctx context.Context, key, contentType string, maxSize int64, expires time.Duration) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	if contentType == "" || maxSize <= 0 {
		return "", errors.New("presign put: content type and a positive max size are required")
	}
	params := url.Values{MaxSizeParam: {strconv.FormatInt(maxSize, 10)}}
	headers := http.Header{"Content-Type": {contentType}}
	u, err := s.client.PresignHeader(ctx, http.MethodPut, s.bucket, key, expires, params, headers)
	if err != nil {
		return "", fmt.Errorf("presign put: %w", err)
	}
	return u.String(), nil
}

// Open streams the object key; the caller must Close the reader. A
// missing object is an error wrapping [ErrNotFound]. Nothing is buffered
// beyond a transport read; objects of any size are fine.
func (s *Store) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	if s.files != nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		obj, err := s.files.open(key)
		if err != nil {
			return nil, err
		}
		return openObject{Reader: obj.content(), obj: obj}, nil
	}
	obj, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, fmt.Errorf("get object: %w", remoteErr(err))
	}
	// Stat sends the GET; reads continue on the same response.
	if _, err := obj.Stat(); err != nil {
		_ = obj.Close()
		return nil, fmt.Errorf("get object %q: %w", key, remoteErr(err))
	}
	return obj, nil
}

// openObject is a bundled object opened for reading.
type openObject struct {
	io.Reader
	obj *storedObject
}

func (o openObject) Close() error { return o.obj.Close() }

// Stat describes the object key; a missing object wraps [ErrNotFound].
func (s *Store) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	if err := ValidateKey(key); err != nil {
		return ObjectInfo{}, err
	}
	if s.files != nil {
		obj, err := s.files.open(key)
		if err != nil {
			return ObjectInfo{}, err
		}
		defer obj.Close()
		return obj.info(), nil
	}
	info, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("stat object %q: %w", key, remoteErr(err))
	}
	return ObjectInfo{Key: key, Size: info.Size, ContentType: info.ContentType, ETag: info.ETag, LastModified: info.LastModified}, nil
}

// Put stores size bytes (or, with size -1, everything) read from r under
// key, replacing any object there. The bundled store writes atomically
// (temp file, fsync, rename) and refuses more than its MaxObjectSize.
// It exists for tests, tools and seeding; clients upload with PresignPut.
func (s *Store) Put(ctx context.Context, key, contentType string, r io.Reader, size int64) (ObjectInfo, error) {
	if err := ValidateKey(key); err != nil {
		return ObjectInfo{}, err
	}
	if contentType == "" {
		contentType = "binary/octet-stream" // S3's default
	}
	if s.files != nil {
		limit := s.max
		if size >= 0 {
			limit = min(limit, size)
		}
		info, err := s.files.put(putParams{key: key, contentType: contentType, limit: limit, size: size}, ctxReader{ctx, r})
		if err != nil {
			return ObjectInfo{}, fmt.Errorf("put object %q: %w", key, err)
		}
		return info, nil
	}
	info, err := s.client.PutObject(ctx, s.bucket, key, r, size, minio.PutObjectOptions{ContentType: contentType})
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("put object %q: %w", key, remoteErr(err))
	}
	return ObjectInfo{Key: key, Size: info.Size, ContentType: contentType, ETag: info.ETag, LastModified: info.LastModified}, nil
}

// Delete removes the object key. As in S3, removing a missing object is
// not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if s.files != nil {
		if err := s.files.remove(key); err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		return nil
	}
	if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return fmt.Errorf("remove object %q: %w", key, remoteErr(err))
	}
	return nil
}

// remoteErr adds ErrNotFound to minio-go's NoSuchKey answer.
func remoteErr(err error) error {
	if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err
}

// ctxReader stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
