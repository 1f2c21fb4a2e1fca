package web

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// capReader reads an input of up to max bytes to its end and fails past
// it, whatever the sizes of the reads.
func TestCapReader(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		size, max int
		tooLarge  bool
	}{{0, 4, false}, {3, 4, false}, {4, 4, false}, {5, 4, true}, {100, 4, true}} {
		for name, wrap := range map[string]func(io.Reader) io.Reader{"whole": func(r io.Reader) io.Reader { return r }, "one byte": iotest.OneByteReader} {
			in := strings.Repeat("x", c.size)
			got, err := io.ReadAll(&capReader{r: wrap(strings.NewReader(in)), max: int64(c.max)})
			if c.tooLarge != errors.Is(err, errUploadTooLarge) || (err != nil && !c.tooLarge) {
				t.Errorf("%s: %d bytes, max %d: err = %v, want too large = %v", name, c.size, c.max, err, c.tooLarge)
			}
			if !c.tooLarge && string(got) != in {
				t.Errorf("%s: %d bytes, max %d: read %d bytes", name, c.size, c.max, len(got))
			}
			if len(got) > c.max+1 {
				t.Errorf("%s: read %d bytes past max %d", name, len(got), c.max)
			}
		}
	}
}
