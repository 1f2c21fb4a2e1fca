package objstore

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"net/http"
	"strconv"
)

// Errors of the aws-chunked decoder. Signature failures are errSigMismatch
// (403); framing and length problems are 400s.
var (
	errChunkFormat = &s3Error{http.StatusBadRequest, "IncompleteBody", "The aws-chunked request body is malformed."}
	errChunkLength = &s3Error{http.StatusBadRequest, "IncompleteBody", "The decoded body length does not match x-amz-decoded-content-length."}
)

const maxChunkLine = 4096 // longest chunk header line accepted

// chunkReader decodes a STREAMING-AWS4-HMAC-SHA256-PAYLOAD body (the
// aws-chunked encoding minio-go uses for PutObject over plain http):
//
//	<hex size>;chunk-signature=<sig>\r\n<size bytes>\r\n ... 0;chunk-signature=<sig>\r\n\r\n
//
// Each chunk's signature chains from the previous one, starting at the
// seed (the Authorization header's signature), over
//
//	AWS4-HMAC-SHA256-PAYLOAD\n<amz date>\n<scope>\n<previous sig>\n<sha256 of "">\n<sha256 of chunk>
//
// Read returns a chunk's bytes before the chunk's signature has been
// checked (the check needs the whole chunk, and chunks may be large); a
// bad signature, bad framing or a wrong total length is reported as an
// error from a later Read, at the latest before io.EOF. A consumer must
// therefore commit nothing until Read has returned io.EOF, which is what
// fileStore.put does (temp file, rename only on success).
type chunkReader struct {
	br       *bufio.Reader
	key      []byte
	amzDate  string
	scope    string
	prevSig  string
	chunkSig string
	left     int64 // bytes of the current chunk not yet read
	inChunk  bool
	decoded  int64 // decoded bytes still expected after the current chunk
	h        hash.Hash
	err      error // sticky; io.EOF after the final chunk
}

func newChunkReader(body io.Reader, a *authResult, decodedLen int64) *chunkReader {
	return &chunkReader{
		br:      bufio.NewReaderSize(body, maxChunkLine),
		key:     a.signingKey,
		amzDate: a.amzDate,
		scope:   a.scope,
		prevSig: a.seed,
		decoded: decodedLen,
		h:       sha256.New(),
	}
}

// Read implements io.Reader; see the type's contract.
func (c *chunkReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if !c.inChunk {
		if err := c.nextChunk(); err != nil {
			c.err = err
			return 0, err
		}
		if !c.inChunk { // the final, empty chunk was valid
			c.err = io.EOF
			return 0, io.EOF
		}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.br.Read(p)
	c.h.Write(p[:n])
	c.left -= int64(n)
	switch {
	case c.left == 0:
		// Report a bad chunk with the next Read, after these bytes.
		c.err = c.endChunk()
	case errors.Is(err, io.EOF):
		c.err = errChunkFormat
	case err != nil:
		c.err = err
	}
	return n, nil
}

// nextChunk reads a chunk header. The final, empty chunk is verified here
// and leaves c.inChunk false.
func (c *chunkReader) nextChunk() error {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, bufio.ErrBufferFull) {
			return errChunkFormat
		}
		return err
	}
	line, ok := bytes.CutSuffix(line, []byte("\r\n"))
	if !ok {
		return errChunkFormat
	}
	sizeHex, sig, ok := bytes.Cut(line, []byte(";chunk-signature="))
	if !ok || len(sizeHex) == 0 || len(sizeHex) > 15 || len(sig) != 64 {
		return errChunkFormat
	}
	for _, b := range sizeHex {
		if !('0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F') {
			return errChunkFormat
		}
	}
	size, err := strconv.ParseInt(string(sizeHex), 16, 64)
	if err != nil {
		return errChunkFormat
	}
	if size > c.decoded {
		return errChunkLength
	}
	c.decoded -= size
	c.chunkSig, c.left = string(sig), size
	c.h.Reset()
	if size > 0 {
		c.inChunk = true
		return nil
	}
	if c.decoded != 0 {
		return errChunkLength
	}
	return c.endChunk()
}

// endChunk checks the CRLF after a chunk's data and the chunk's signature,
// and leaves the chunk.
func (c *chunkReader) endChunk() error {
	var crlf [2]byte
	if _, err := io.ReadFull(c.br, crlf[:]); err != nil || crlf != [2]byte{'\r', '\n'} {
		return errChunkFormat
	}
	sts := "AWS4-HMAC-SHA256-PAYLOAD\n" + c.amzDate + "\n" + c.scope + "\n" + c.prevSig + "\n" +
		emptySHA256 + "\n" + hex.EncodeToString(c.h.Sum(nil))
	want := hex.EncodeToString(hmacSHA256(c.key, sts))
	if subtle.ConstantTimeCompare([]byte(want), []byte(c.chunkSig)) != 1 {
		return errSigMismatch
	}
	c.prevSig, c.inChunk = c.chunkSig, false
	return nil
}
