package contacts

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// errUTF16 reports a file that starts with a UTF-16 byte-order mark.
var errUTF16 = errors.New("file is UTF-16")

// errRowTooLarge is returned by rowGuard once a row exceeds its limit.
var errRowTooLarge = errors.New("row too large")

// openInput wraps r: it skips a UTF-8 byte-order mark, refuses a UTF-16 one
// (errUTF16) and bounds the size of one row (rowGuard).
func openInput(r io.Reader, maxRow int) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(3)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read contacts: %w", err)
	}
	switch {
	case bytes.HasPrefix(head, []byte("\xEF\xBB\xBF")):
		if _, err := br.Discard(3); err != nil {
			return nil, fmt.Errorf("read contacts: %w", err)
		}
	case bytes.HasPrefix(head, []byte("\xFF\xFE")), bytes.HasPrefix(head, []byte("\xFE\xFF")):
		return nil, errUTF16
	}
	return &rowGuard{r: br, max: maxRow}, nil
}

// rowGuard passes bytes through while tracking where CSV rows end (a line
// feed outside double quotes), and fails with errRowTooLarge once one row has
// more than max bytes. In RFC 4180 input an escaped quote ("") toggles the
// quote state twice, so the tracking matches the CSV reader's; in input with
// stray quotes the CSV reader fails with a syntax error anyway. The bytes
// before the overflowing one are delivered first, so the rows preceding the
// large one are read normally.
type rowGuard struct {
	r        io.Reader
	max      int
	n        int  // bytes of the current row so far
	inQuotes bool // inside a quoted field
	err      error
}

func (g *rowGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	for i := 0; i < n; i++ {
		switch p[i] {
		case '"':
			g.inQuotes = !g.inQuotes
		case '\n':
			if !g.inQuotes {
				g.n = 0
				continue
			}
		}
		g.n++
		if g.n > g.max {
			g.err = errRowTooLarge
			if i == 0 {
				return 0, g.err
			}
			return i, nil
		}
	}
	return n, err
}
