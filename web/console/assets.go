package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Static files (static/*) are served at staticPrefix + a fingerprinted name,
// <name>.<first 8 hex digits of the SHA-256 of the content>.<ext>, computed
// at start-up, with a year-long immutable cache: a changed file gets a new
// URL. A module's relative import of another static file ("./console.js")
// is rewritten to that file's fingerprinted name before the importer's own
// fingerprint is taken, so a change anywhere renames every module that
// depends on it. Each file is gzip-compressed once, when it is first
// served (compressing all of them at start-up took about 100 ms and 20 MB of
// allocations of the best-compression level's tables, before the listener
// opened; the first request of each file now pays a millisecond or two).

// staticPrefix is where the static files are served.
const staticPrefix = Prefix + "static/"

//go:embed static
var staticFS embed.FS

// asset is one static file as served.
type asset struct {
	url   string // staticPrefix + fingerprinted name
	ctype string
	body  []byte

	gzOnce sync.Once
	gz     []byte // body gzip-compressed; nil when that is no smaller
}

// compressed returns the body gzip-compressed at the best level, computed
// on the first call, or nil when that is no smaller than the body.
func (a *asset) compressed() []byte {
	a.gzOnce.Do(func() {
		if gz := gzipBytes(a.body, gzip.BestCompression); len(gz) < len(a.body) {
			a.gz = gz
		}
	})
	return a.gz
}

// loadedAssets returns the map of fingerprinted names to their files and
// the map of original names to their URLs, made on first use (the first
// console page or static file after start-up, not before the service
// listens).
var loadedAssets = sync.OnceValues(func() (map[string]*asset, map[string]string) { return mustLoadAssets(staticFS) })

// mustLoadAssets fingerprints every file of static/. A
// module importing a file that does not exist, or modules importing each
// other in a cycle, stop the binary at start-up (and every test).
func mustLoadAssets(fsys fs.FS) (map[string]*asset, map[string]string) {
	entries, err := fs.ReadDir(fsys, "static")
	if err != nil {
		panic(err)
	}
	raw := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := fs.ReadFile(fsys, "static/"+e.Name())
		if err != nil {
			panic(err)
		}
		raw[e.Name()] = b
	}
	names := make([]string, 0, len(raw))
	for n := range raw {
		names = append(names, n)
	}
	sort.Strings(names)
	byName, urls := map[string]*asset{}, map[string]string{}
	// Fingerprint the files whose imports are all fingerprinted, until all
	// are (or no progress: a cycle or a missing file).
	for len(urls) < len(names) {
		progress := false
		for _, n := range names {
			if _, done := urls[n]; done {
				continue
			}
			body, ok := rewriteImports(raw[n], n, raw, urls)
			if !ok {
				continue
			}
			sum := sha256.Sum256(body)
			ext := path.Ext(n)
			fp := strings.TrimSuffix(n, ext) + "." + hex.EncodeToString(sum[:4]) + ext
			a := &asset{url: staticPrefix + fp, ctype: contentType(ext), body: body}
			byName[fp], urls[n] = a, a.url
			progress = true
		}
		if !progress {
			panic(fmt.Sprintf("console: static files import each other in a cycle or import a missing file (fingerprinted %d of %d)", len(urls), len(names)))
		}
	}
	return byName, urls
}

// rewriteImports returns body with every quoted relative reference to
// another static file ("./x.js" or './x.js') replaced by that file's URL,
// and false when a referenced file is not fingerprinted yet. Only modules
// are rewritten.
func rewriteImports(body []byte, name string, raw map[string][]byte, urls map[string]string) ([]byte, bool) {
	if path.Ext(name) != ".js" {
		return body, true
	}
	out := body
	for other := range raw {
		if other == name {
			continue
		}
		for _, q := range []string{`"`, `'`} {
			ref := []byte(q + "./" + other + q)
			if !bytes.Contains(out, ref) {
				continue
			}
			u, ok := urls[other]
			if !ok {
				return nil, false
			}
			out = bytes.ReplaceAll(out, ref, []byte(q+u+q))
		}
	}
	return out, true
}

// contentType returns the Content-Type of a static file extension.
func contentType(ext string) string {
	switch ext {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

// assetURL returns the fingerprinted URL of the static file name; the
// template function asset. An unknown name is an error, which fails the
// page's rendering (and its tests).
func assetURL(name string) (string, error) {
	_, urls := loadedAssets()
	u, ok := urls[name]
	if !ok {
		return "", fmt.Errorf("console: no static file %q", name)
	}
	return u, nil
}

// serveAsset answers a fingerprinted static file, cached for a year,
// compressed when the browser accepts gzip.
func serveAsset(w http.ResponseWriter, r *http.Request) {
	assets, _ := loadedAssets()
	a, ok := assets[r.PathValue("file")]
	if !ok {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte("404 page not found\n")) //nolint:errcheck // client gone
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("Content-Type", a.ctype)
	body := a.body
	if gz := a.compressed(); gz != nil {
		h.Add("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			h.Set("Content-Encoding", "gzip")
			body = gz
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body) //nolint:errcheck // client gone
}

// gzipBytes returns b gzip-compressed at level (a valid compress/gzip
// level).
func gzipBytes(b []byte, level int) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, level) // a valid level: no error
	zw.Write(b)                               //nolint:errcheck // a bytes.Buffer does not fail
	zw.Close()                                //nolint:errcheck
	return buf.Bytes()
}
