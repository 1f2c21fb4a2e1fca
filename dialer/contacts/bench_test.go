package contacts

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nyaruka/phonenumbers"
	"github.com/outdial/outdial/dialer/phone"
)

// The Measure part of issue 3: read and check a 1,000,000-row contacts file
// (phone plus three columns, about 45 MB, varied valid numbers of twelve
// countries, 0.1% invalid and 0.1% duplicate rows). Run it with
//
//	go test -run '^$' -bench BenchmarkRead1M -benchtime 3x ./dialer/contacts/
//
// It reports rows/s, the slowest run (worst-s), the process CPU time per run
// (cpu-s/op, user + system, unaffected by other load on the machine) and the
// peak growth of the heap in use over the heap before the read (HeapInuse
// sampled every 2 ms).

// benchCountry is a source of distinct numbers of one region and type: the
// example number's leading digits followed by a six-digit suffix.
type benchCountry struct {
	cc       string
	prefix   string // national significant number without the suffix
	national bool   // written in national form (the default country, US)
	next     int    // next suffix index
}

// benchSources returns the number sources: US area codes (the default
// country, written nationally) and the example mobile and fixed-line numbers
// of eleven other countries (written internationally).
func benchSources() []*benchCountry {
	var out []*benchCountry
	for _, p := range []string{"2015", "4155", "2125", "3125", "6465", "7185", "3055", "6175"} {
		out = append(out, &benchCountry{cc: "1", prefix: p, national: true})
	}
	for _, r := range []string{"GB", "DE", "FR", "IN", "AU", "BR", "MX", "ES", "IT", "NG", "JP"} {
		seen := ""
		for _, typ := range []phonenumbers.PhoneNumberType{phonenumbers.MOBILE, phonenumbers.FIXED_LINE} {
			n := phonenumbers.GetExampleNumberForType(r, typ)
			nsn := phonenumbers.GetNationalSignificantNumber(n)
			if prefix := nsn[:len(nsn)-6]; prefix != seen {
				seen = prefix
				out = append(out, &benchCountry{cc: strconv.Itoa(int(n.GetCountryCode())), prefix: prefix})
			}
		}
	}
	return out
}

// number returns the source's next valid number, written in one of several
// common forms, and its E.164 form. Suffixes are a permutation of 0..999999,
// so a source never repeats a number.
func (c *benchCountry) number(style int) (written, e164 string) {
	for {
		suffix := fmt.Sprintf("%06d", (c.next*7919+12345)%1_000_000)
		c.next++
		nsn := c.prefix + suffix
		switch {
		case c.national && style%4 == 0:
			written = "(" + nsn[:3] + ") " + nsn[3:6] + "-" + nsn[6:]
		case c.national && style%4 == 1:
			written = nsn[:3] + "-" + nsn[3:6] + "-" + nsn[6:]
		case c.national && style%4 == 2:
			written = nsn
		case style%3 == 0:
			written = "+" + c.cc + nsn
		case style%3 == 1:
			written = "+" + c.cc + " " + nsn[:len(nsn)-6] + " " + nsn[len(nsn)-6:len(nsn)-3] + " " + nsn[len(nsn)-3:]
		default:
			written = "011 " + c.cc + " " + nsn
		}
		if e, err := phone.Normalize(written, "US"); err == nil {
			return written, e
		}
	}
}

// writeBenchFile writes a contacts file of n rows to path.
func writeBenchFile(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create bench file: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	first := []string{"Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Margaret", "Kenneth"}
	last := []string{"Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Hamilton", "Thompson-Ritchie"}
	city := []string{"Greater London", "New York City", "Paris La Defense", "Berlin-Mitte", "Navi Mumbai", "North Sydney", "Sao Paulo", "San Francisco"}
	sources := benchSources()
	fmt.Fprintln(w, "phone_number,first_name,last_name,city")
	var recent string
	for i := range n {
		var num string
		switch {
		case i%1000 == 500:
			num = "+1 555 01" // invalid
		case i%1000 == 999:
			num = recent // duplicate
		default:
			num, recent = sources[i%len(sources)].number(i / len(sources))
		}
		fmt.Fprintf(w, "%s,%s,%s,%s\n", num, first[i%8], last[(i/8)%8], city[(i/64)%8])
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write bench file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close bench file: %w", err)
	}
	return nil
}

// heapSampler records the peak of the heap in use while it runs: the bytes
// of heap objects (live or not yet swept) plus the unused bytes of the spans
// holding them, which is runtime.MemStats.HeapInuse. It reads runtime/metrics,
// which unlike runtime.ReadMemStats does not stop the world.
type heapSampler struct {
	stop chan struct{}
	done sync.WaitGroup
	peak uint64
}

func heapInUse(samples []metrics.Sample) uint64 {
	metrics.Read(samples)
	return samples[0].Value.Uint64() + samples[1].Value.Uint64()
}

func newHeapSamples() []metrics.Sample {
	return []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
	}
}

func startHeapSampler() *heapSampler {
	s := &heapSampler{stop: make(chan struct{})}
	s.done.Go(func() {
		samples := newHeapSamples()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			s.peak = max(s.peak, heapInUse(samples))
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	})
	return s
}

func (s *heapSampler) finish() uint64 {
	close(s.stop)
	s.done.Wait()
	return s.peak
}

func BenchmarkRead1M(b *testing.B) {
	rows := 1_000_000
	if testing.Short() {
		rows = 100_000
	}
	path := filepath.Join(b.TempDir(), "contacts.csv")
	if err := writeBenchFile(path, rows); err != nil {
		b.Fatalf("write bench file: %v", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatalf("stat bench file: %v", err)
	}
	b.SetBytes(st.Size())

	var worst, total, cpu time.Duration
	var accepted, problems, runs int
	var growth uint64
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		debug.FreeOSMemory()
		base := heapInUse(newHeapSamples())
		f, err := os.Open(path)
		if err != nil {
			b.Fatalf("open bench file: %v", err)
		}
		sampler := startHeapSampler()
		b.StartTimer()

		cpu0 := cpuTime()
		start := time.Now()
		res, err := Read(context.Background(), f, Options{DefaultCountry: "US", RequiredVariables: []string{"first_name"}},
			func(c Contact) error {
				if c.PhoneNumber == "" || len(c.InitialContext) != 3 {
					return fmt.Errorf("bad contact %+v", c)
				}
				return nil
			})
		elapsed := time.Since(start)
		cpu += cpuTime() - cpu0

		b.StopTimer()
		peak := sampler.finish()
		f.Close()
		if err != nil {
			b.Fatalf("Read error = %v", err)
		}
		accepted, problems = res.Accepted, res.ProblemCount
		if peak > base {
			growth = max(growth, peak-base)
		}
		worst, total, runs = max(worst, elapsed), total+elapsed, runs+1
		b.StartTimer()
	}
	b.ReportMetric(float64(rows*runs)/total.Seconds(), "rows/s")
	b.ReportMetric(worst.Seconds(), "worst-s")
	b.ReportMetric(float64(growth)/(1<<20), "peak-heap-growth-MB")
	if cpu > 0 {
		b.ReportMetric(cpu.Seconds()/float64(runs), "cpu-s/op")
	}
	b.ReportMetric(float64(accepted), "accepted")
	b.ReportMetric(float64(problems), "problems")
}
