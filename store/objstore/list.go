package objstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/minio/minio-go/v7"
)

// List describes every object whose key starts with prefix, sorted by key.
// Quotas and the retention sweep use it (an organization's uploads are the
// keys under its prefix).
//
// The bundled store answers from an in-memory index of its objects: built
// by one walk of the directory (reading each object's header) the first
// time a listing is asked for, then kept current by every write and
// delete of this process, the handler's included. Objects written into the
// directory by another process after that are not seen until restart. In
// remote mode it is a ListObjectsV2 listing of the bucket under prefix.
func (s *Store) List(ctx context.Context, prefix string) ([]ObjectInfo, error) {
	if s.files != nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return s.files.list(prefix)
	}
	var out []ObjectInfo
	for obj := range s.client.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return nil, fmt.Errorf("list objects under %q: %w", prefix, obj.Err)
		}
		out = append(out, ObjectInfo{Key: obj.Key, Size: obj.Size, ContentType: obj.ContentType,
			ETag: strings.Trim(obj.ETag, `"`), LastModified: obj.LastModified})
	}
	slices.SortFunc(out, func(a, b ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// keyIndex is the bundled store's list of its objects by key; see
// Store.List. A nil *keyIndex indexes nothing (list walks every time).
type keyIndex struct {
	mu    sync.Mutex
	built bool
	objs  map[string]ObjectInfo
}

// rename moves a written object file into place and records it, under the
// index's lock so that the index and the files agree even when two writes
// race for one key.
func (ix *keyIndex) rename(tmp, final string, info ObjectInfo) error {
	if ix == nil {
		return os.Rename(tmp, final)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	if ix.built {
		ix.objs[info.Key] = info
	}
	return nil
}

// remove deletes the object file name of key and forgets key.
func (ix *keyIndex) remove(name, key string) error {
	if ix == nil {
		return os.Remove(name)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	err := os.Remove(name)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		delete(ix.objs, key)
	}
	return err
}

// list returns the objects under prefix, sorted by key.
func (s *fileStore) list(prefix string) ([]ObjectInfo, error) {
	ix := s.idx
	if ix == nil {
		ix = &keyIndex{}
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if !ix.built {
		objs, err := s.walk()
		if err != nil {
			return nil, err
		}
		ix.objs, ix.built = objs, true
	}
	var out []ObjectInfo
	for k, info := range ix.objs {
		if strings.HasPrefix(k, prefix) {
			out = append(out, info)
		}
	}
	slices.SortFunc(out, func(a, b ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// walk reads the header of every object file under the root. Temp files of
// writes in progress, files whose header does not parse and files that are
// not where their key maps to are skipped: they are not objects.
func (s *fileStore) walk() (map[string]ObjectInfo, error) {
	objs := map[string]ObjectInfo{}
	err := filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".tmp-") {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("open object: %w", err)
		}
		defer f.Close()
		obj, err := readAnyHeader(f)
		if err != nil {
			return nil //nolint:nilerr // not an object of ours
		}
		if _, want := pathFor(s.root, obj.hdr.Key); want != p {
			return nil
		}
		objs[obj.hdr.Key] = obj.info()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list objects: %w", err)
	}
	return objs, nil
}
