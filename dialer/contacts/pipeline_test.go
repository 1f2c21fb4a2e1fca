package contacts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// numbered returns a file of n rows with distinct valid US numbers; row r
// (from 2) has number +1415555xxxx with xxxx = r and name "n<r>".
func numbered(n int) string {
	var b strings.Builder
	b.WriteString("phone_number,name\n")
	for r := 2; r < n+2; r++ {
		fmt.Fprintf(&b, "+1 415 555 %04d,n%d\n", r, r)
	}
	return b.String()
}

func TestPipelineKeepsRowOrder(t *testing.T) {
	n := 5000
	if testing.Short() {
		n = 1000
	}
	input := numbered(n)
	for _, opts := range []Options{
		{Workers: 1, batchSize: 1},
		{Workers: 4, batchSize: 3},
		{Workers: 8, batchSize: 64},
	} {
		res, got, err := readAll(t, input, opts)
		if err != nil {
			t.Fatalf("Read error = %v, want nil", err)
		}
		if len(got) != n || res.Rows != n || res.ProblemCount != 0 {
			t.Fatalf("workers %d: %d contacts, %d rows, %d problems, want %d, %d, 0", opts.Workers, len(got), res.Rows, res.ProblemCount, n, n)
		}
		for i, c := range got {
			row := i + 2
			if c.Row != row || c.PhoneNumber != fmt.Sprintf("+1415555%04d", row) || c.InitialContext["name"] != fmt.Sprintf("n%d", row) {
				t.Fatalf("workers %d: contact %d = %+v, want row %d", opts.Workers, i, c, row)
			}
		}
	}
}

func TestPipelineDuplicatesAcrossBatches(t *testing.T) {
	var b strings.Builder
	b.WriteString("phone_number\n")
	for r := 2; r < 200; r++ {
		fmt.Fprintf(&b, "+1 415 555 %04d\n", r%50) // every number four times
	}
	res, got, err := readAll(t, b.String(), Options{Workers: 3, batchSize: 7, MaxProblems: -1})
	if err != nil {
		t.Fatalf("Read error = %v, want nil", err)
	}
	if len(got) != 50 {
		t.Fatalf("%d contacts, want 50", len(got))
	}
	for i, c := range got {
		if c.Row != i+2 {
			t.Fatalf("contact %d is row %d, want the first occurrence, row %d", i, c.Row, i+2)
		}
	}
	if len(res.Problems) != 148 {
		t.Fatalf("%d problems, want 148", len(res.Problems))
	}
	for i, p := range res.Problems {
		if p.Type != TypePhoneDuplicate || p.Row != i+52 {
			t.Fatalf("problem %d = %+v, want phone_duplicate on row %d", i, p, i+52)
		}
	}
}

// checkNoLeak fails if goroutines started during the test are still running.
func checkNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if got := runtime.NumGoroutine(); got > before {
			t.Fatalf("%d goroutines after Read, want %d", got, before)
		}
	})
}

func TestPipelineYieldErrorStops(t *testing.T) {
	checkNoLeak(t)
	stop := errors.New("disk full")
	calls := 0
	res, err := Read(context.Background(), strings.NewReader(numbered(3000)), Options{Workers: 2, batchSize: 16},
		func(c Contact) error {
			calls++
			if c.Row == 100 {
				return stop
			}
			return nil
		})
	if !errors.Is(err, stop) {
		t.Fatalf("Read error = %v, want %v", err, stop)
	}
	if calls != 99 || res.Accepted != 98 {
		t.Fatalf("yield called %d times, Accepted %d, want 99, 98", calls, res.Accepted)
	}
}

func TestPipelineContextCancel(t *testing.T) {
	checkNoLeak(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	_, err := Read(ctx, strings.NewReader(numbered(3000)), Options{Workers: 2, batchSize: 16},
		func(c Contact) error {
			calls++
			if c.Row == 50 {
				cancel()
			}
			return nil
		})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Read error = %v, want context.Canceled", err)
	}
	if calls > 16+49 {
		t.Fatalf("yield called %d times after cancel, want it to stop within a batch", calls)
	}
}

func TestPipelineReadError(t *testing.T) {
	checkNoLeak(t)
	boom := errors.New("connection reset")
	for _, tt := range []struct {
		name string
		r    io.Reader
		rows int
	}{
		{"at once", iotest.ErrReader(boom), 0},
		{"after rows", io.MultiReader(strings.NewReader(numbered(40)), iotest.ErrReader(boom)), 40},
		{"in header", io.MultiReader(strings.NewReader("phone_num"), iotest.ErrReader(boom)), 0},
	} {
		var got int
		_, err := Read(context.Background(), tt.r, Options{Workers: 2, batchSize: 8}, func(Contact) error {
			got++
			return nil
		})
		if !errors.Is(err, boom) {
			t.Fatalf("%s: Read error = %v, want %v", tt.name, err, boom)
		}
		if got != tt.rows {
			t.Fatalf("%s: %d contacts before the error, want %d", tt.name, got, tt.rows)
		}
	}
}

func TestPipelineOneByteReads(t *testing.T) {
	input := "\xEF\xBB\xBFphone_number,name\r\n+14155550100,\"a,\r\nb\"\r\n+14155550101,c\r\n"
	var got []Contact
	res, err := Read(context.Background(), iotest.OneByteReader(strings.NewReader(input)), Options{MaxRowBytes: 40},
		func(c Contact) error {
			got = append(got, c)
			return nil
		})
	if err != nil || res.ProblemCount != 0 || len(got) != 2 {
		t.Fatalf("contacts %d, problems %+v, error %v, want 2, none, nil", len(got), res.Problems, err)
	}
	if got[0].InitialContext["name"] != "a,\nb" {
		t.Fatalf("name = %q, want %q", got[0].InitialContext["name"], "a,\nb")
	}
}
