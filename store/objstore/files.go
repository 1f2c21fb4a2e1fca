package objstore

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"
)

// On-disk object format: a fixed headerSize block holding headerMagic and
// one JSON objectHeader (padded with spaces, ended by a newline), followed
// by the object's bytes. The header is written last, into space reserved
// before the body, so an object is one file and one atomic rename.
const (
	headerSize     = 4096
	headerMagic    = "outdial-object 1\n"
	maxContentType = 256
)

// objectHeader is the metadata kept in front of an object's bytes.
type objectHeader struct {
	Key         string `json:"key"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	MD5         string `json:"md5"` // hex, the S3 ETag of a single PUT
}

// fileStore keeps objects as files under root; see pathFor and the format
// above. It is safe for concurrent use: writers go through a temp file in
// the object's directory and rename over the final name, so a reader sees
// either the old or the new object, never a partial one.
type fileStore struct {
	root string
	idx  *keyIndex // the objects by key, for List; nil indexes nothing
}

// putParams describes one write.
type putParams struct {
	key         string
	contentType string
	limit       int64  // most bytes accepted; more is errTooLarge
	size        int64  // exact length declared by the client, or -1
	sha256      []byte // expected SHA-256 of the body, or nil
	md5         []byte // expected MD5 of the body (Content-MD5), or nil
}

// put streams body into the object p.key and describes the new object. It reads at most p.limit+1 bytes,
// writes them to a temp file in the object's directory, checks the length
// and digests, writes the header, fsyncs and renames over the final name.
// On any error, including a body read error (client gone), the temp file is
// removed and an existing object under the key is left untouched. Errors
// are errTooLarge, errIncompleteBody, errSHA256Mismatch, errBadDigest, the
// body's read error wrapped with errReadBody, or an I/O error.
func (s *fileStore) put(p putParams, body io.Reader) (ObjectInfo, error) {
	if len(p.contentType) > maxContentType {
		return ObjectInfo{}, fmt.Errorf("content type longer than %d bytes", maxContentType)
	}
	if p.size > p.limit {
		return ObjectInfo{}, errTooLarge
	}
	dir, final := pathFor(s.root, p.key)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return ObjectInfo{}, fmt.Errorf("create object directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("create temp file: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()

	if _, err := tmp.Seek(headerSize, io.SeekStart); err != nil {
		return ObjectInfo{}, fmt.Errorf("seek temp file: %w", err)
	}
	md5h := md5.New()
	hashes := []io.Writer{tmp, md5h}
	var shah hash.Hash
	if p.sha256 != nil {
		shah = sha256.New()
		hashes = append(hashes, shah)
	}
	n, err := io.Copy(io.MultiWriter(hashes...), io.LimitReader(bodyReader{body}, p.limit+1))
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("write object: %w", err)
	}
	switch {
	case n > p.limit:
		return ObjectInfo{}, errTooLarge
	case p.size >= 0 && n != p.size:
		return ObjectInfo{}, errIncompleteBody
	case shah != nil && !bytes.Equal(shah.Sum(nil), p.sha256):
		return ObjectInfo{}, errSHA256Mismatch
	case p.md5 != nil && !bytes.Equal(md5h.Sum(nil), p.md5):
		return ObjectInfo{}, errBadDigest
	}

	hdr := objectHeader{Key: p.key, ContentType: p.contentType, Size: n, MD5: hex.EncodeToString(md5h.Sum(nil))}
	block, err := encodeHeader(hdr)
	if err != nil {
		return ObjectInfo{}, err
	}
	if _, err := tmp.WriteAt(block, 0); err != nil {
		return ObjectInfo{}, fmt.Errorf("write object header: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return ObjectInfo{}, fmt.Errorf("sync temp file: %w", err)
	}
	st, err := tmp.Stat()
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("stat temp file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return ObjectInfo{}, fmt.Errorf("close temp file: %w", err)
	}
	obj := storedObject{hdr: hdr, modTime: st.ModTime()}
	if err := s.idx.rename(tmp.Name(), final, obj.info()); err != nil {
		return ObjectInfo{}, fmt.Errorf("rename object into place: %w", err)
	}
	committed = true
	syncDir(dir)
	return obj.info(), nil
}

// bodyReader marks the errors of the body it reads with errReadBody, to
// tell a client that went away from a failing disk.
type bodyReader struct{ r io.Reader }

func (b bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: %w", errReadBody, err)
	}
	return n, err
}

// syncDir makes a rename in dir durable. It is best effort: the object is
// already visible, and reporting a failure now would wrongly tell the
// client its upload failed.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// storedObject is an open object: its file, header and modification time.
// Close releases the file.
type storedObject struct {
	f       *os.File
	hdr     objectHeader
	modTime time.Time
}

// content returns a reader over the object's bytes (without the header);
// it supports Seek and ReadAt, as http.ServeContent needs.
func (o *storedObject) content() *io.SectionReader {
	return io.NewSectionReader(o.f, headerSize, o.hdr.Size)
}

func (o *storedObject) info() ObjectInfo {
	return ObjectInfo{
		Key:          o.hdr.Key,
		Size:         o.hdr.Size,
		ContentType:  o.hdr.ContentType,
		ETag:         o.hdr.MD5,
		LastModified: o.modTime,
	}
}

// Close closes the object's file.
func (o *storedObject) Close() error { return o.f.Close() }

// open opens the object key. A missing object is ErrNotFound; a file whose
// header does not parse, names another key, or whose length disagrees with
// the header is an error (corruption, not absence).
func (s *fileStore) open(key string) (*storedObject, error) {
	_, name := pathFor(s.root, key)
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("open %q: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("open object: %w", err)
	}
	obj, err := readHeader(f, key)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return obj, nil
}

func readHeader(f *os.File, key string) (*storedObject, error) {
	obj, err := readAnyHeader(f)
	if err != nil {
		return nil, fmt.Errorf("object %q: %w", key, err)
	}
	if obj.hdr.Key != key {
		return nil, fmt.Errorf("object %q: header does not match file", key)
	}
	return obj, nil
}

// readAnyHeader reads the header of the object file f, whatever its key.
func readAnyHeader(f *os.File) (*storedObject, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat object: %w", err)
	}
	block := make([]byte, headerSize)
	if _, err := io.ReadFull(f, block); err != nil {
		return nil, fmt.Errorf("read object header: %w", err)
	}
	rest, ok := bytes.CutPrefix(block, []byte(headerMagic))
	if !ok {
		return nil, errors.New("bad header magic")
	}
	var hdr objectHeader
	if err := json.NewDecoder(bytes.NewReader(rest)).Decode(&hdr); err != nil {
		return nil, fmt.Errorf("decode object header: %w", err)
	}
	if hdr.Size != st.Size()-headerSize {
		return nil, errors.New("header does not match file")
	}
	return &storedObject{f: f, hdr: hdr, modTime: st.ModTime()}, nil
}

func encodeHeader(hdr objectHeader) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(headerMagic)
	enc := json.NewEncoder(&buf) // Encode ends the value with "\n"
	enc.SetEscapeHTML(false)
	if err := enc.Encode(hdr); err != nil {
		return nil, fmt.Errorf("encode object header: %w", err)
	}
	if buf.Len() > headerSize {
		return nil, fmt.Errorf("object header of %d bytes does not fit in %d", buf.Len(), headerSize)
	}
	buf.WriteString(strings.Repeat(" ", headerSize-buf.Len()))
	return buf.Bytes(), nil
}

// remove deletes the object key; a missing object is ErrNotFound.
func (s *fileStore) remove(key string) error {
	_, name := pathFor(s.root, key)
	err := s.idx.remove(name, key)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %q: %w", key, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("remove object: %w", err)
	}
	return nil
}
