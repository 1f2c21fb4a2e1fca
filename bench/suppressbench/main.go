// Command suppressbench measures the import of a suppression list (API.md
// 12.1: "an import of 1,000,000 numbers from a CSV takes seconds") through
// the real binary over HTTP, as a client makes it:
//
//	go run ./bench/suppressbench                    # 1,000,000 numbers
//	go run ./bench/suppressbench -numbers 100000    # a quick check
//
// Like bench/dialbench it builds the binary (or takes -bin), creates an API
// key with it and starts `outdial serve` on a fresh data directory. It
// generates a CSV of -numbers distinct valid US numbers (a phone_number
// column, E.164; realbin.NumbersCSV, 13 MB for a million), uploads it
// through a presigned URL and imports it with POST /api/v1/suppressions
// {"source_id": <its file_key>}. Reported:
//
//   - the wall time of the POST (to its answer, which comes once every
//     number is committed), the counts answered and the service's CPU
//     seconds meanwhile (/proc/<pid>/stat);
//   - the service's RSS before the POST and its peak during it (VmRSS
//     every 20 ms, as bench/bigbench measures a campaign create);
//   - the database's size after the import (outdial.db and its WAL), in
//     bytes per entry, and again after the service stopped;
//   - the same file imported a second time (every number already
//     present: what a retried import costs);
//   - GET /api/v1/suppressions?number= of a listed and of an unlisted
//     number, median and 99th percentile of -lookups requests each over a
//     kept-alive connection. These are dominated by HTTP and the API key's
//     check; the lookup itself is store's BenchmarkActiveSuppression.
//
// The figures come with the machine's CPUs, Go version and load average.
// Linux only (/proc).
package main

import (
	"flag"
	"fmt"
	"log"
	"net/url"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/outdial/outdial/bench/internal/realbin"
)

// Targets: API.md 12.1 says "seconds" for a million numbers, read here as
// 10 s like bench/bigbench reads it; the memory of an import is bounded
// like a campaign create's (bigbench's +100 MB for a million contacts).
const (
	targetImportSeconds = 10
	targetImportRSSMB   = 100
)

func main() {
	n := flag.Int("numbers", 1000000, "numbers in the suppression CSV")
	lookups := flag.Int("lookups", 500, "GET /api/v1/suppressions?number= requests of each kind")
	bin := flag.String("bin", "", "outdial binary to run (default: go build into a temporary directory)")
	cpuprofile := flag.String("cpuprofile", "", "have the service write a CPU profile of its whole run to this file (serve --cpuprofile)")
	keep := flag.Bool("keep", false, "keep the temporary directory (data, service log)")
	flag.Parse()
	log.SetFlags(0)
	if err := realbin.CheckNumbers(*n); err != nil {
		log.Fatal(err)
	}

	tmp, binary, cleanup, err := realbin.Workdir("suppressbench", *keep, *bin)
	if err != nil {
		log.Fatal(err)
	}
	defer cleanup()
	*bin = binary
	env := realbin.Env()
	dataDir := filepath.Join(tmp, "data")
	key := realbin.APIKey(*bin, dataDir, "bench", env)
	var args []string
	if *cpuprofile != "" {
		args = append(args, "--cpuprofile", *cpuprofile)
	}
	serve := realbin.Serve(*bin, dataDir, filepath.Join(tmp, "serve.log"), env, args...)
	c := serve.Client(key)
	pid := serve.Pid()
	load0 := realbin.LoadAvg()

	t := time.Now()
	csv := realbin.NumbersCSV(*n, 0)
	gen := time.Since(t)
	t = time.Now()
	source := c.UploadCSV("suppressions.csv", csv)
	up := time.Since(t)

	log.Printf("importing %d numbers", *n)
	imp := importOnce(c, pid, source)
	if imp.res.Added != *n || imp.res.AlreadyPresent != 0 || imp.res.InvalidCount != 0 {
		serve.Fail("first import: %s; want %d added", imp.res, *n)
	}
	db, wal := realbin.DBSizes(dataDir)

	// The same upload again (an import keeps it), as a client retries.
	again := importOnce(c, pid, source)
	if again.res.AlreadyPresent != *n {
		serve.Fail("second import: %s; want %d already present", again.res, *n)
	}

	hit := lookup(c, realbin.Number(*n/2), *lookups, true)
	miss := lookup(c, realbin.Number(*n), *lookups, false)

	serve.Stop(30 * time.Second)
	dbStopped, walStopped := realbin.DBSizes(dataDir)

	fmt.Printf("machine: %d CPUs, %s, %s/%s; load average before %s, after %s\n",
		runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, load0, realbin.LoadAvg())
	fmt.Printf("file: %d numbers, %.1f MB CSV generated in %.2f s, presigned and uploaded in %.2f s\n",
		*n, float64(len(csv))/1e6, gen.Seconds(), up.Seconds())
	fmt.Printf("import: POST /api/v1/suppressions answered in %.2f s (%.0f numbers/s): %s; serve CPU %.2f s  target <= %d s %s\n",
		imp.took.Seconds(), float64(*n)/imp.took.Seconds(), imp.res, imp.cpu.Seconds(), targetImportSeconds,
		verdict(imp.took <= targetImportSeconds*time.Second))
	growth := mb(imp.peak - imp.rss0)
	fmt.Printf("  serve RSS %.1f MB before, peak %.1f MB (VmRSS every 20 ms), growth %+.1f MB, %.1f MB after  target growth <= %d MB %s\n",
		mb(imp.rss0), mb(imp.peak), growth, mb(imp.rss1), targetImportRSSMB, verdict(growth <= targetImportRSSMB))
	fmt.Printf("database after the import: %s %.1f MB, WAL %.1f MB: %.0f bytes per entry (%.0f with the WAL)\n",
		realbin.DBFile, float64(db)/1e6, float64(wal)/1e6, float64(db)/float64(*n), float64(db+wal)/float64(*n))
	fmt.Printf("database after the service stopped: %s %.1f MB, WAL %.1f MB\n",
		realbin.DBFile, float64(dbStopped)/1e6, float64(walStopped)/1e6)
	fmt.Printf("import again (every number already present): %.2f s: %s; serve CPU %.2f s, RSS peak growth %+.1f MB\n",
		again.took.Seconds(), again.res, again.cpu.Seconds(), mb(again.peak-again.rss0))
	fmt.Printf("GET /api/v1/suppressions?number= (HTTP, API key, lookup; %d each): listed p50 %.3f ms p99 %.3f ms, not listed p50 %.3f ms p99 %.3f ms\n",
		*lookups, ms(hit[0]), ms(hit[1]), ms(miss[0]), ms(miss[1]))
	if *cpuprofile != "" {
		fmt.Printf("CPU profile: go tool pprof -top %s %s\n", *bin, *cpuprofile)
	}
}

// imported is what one import took.
type imported struct {
	res              realbin.SuppressResult
	took, cpu        time.Duration
	rss0, peak, rss1 int64 // kB
}

// importOnce imports the CSV uploaded at source, measuring the service.
func importOnce(c *realbin.Client, pid int, source string) imported {
	var m imported
	m.rss0 = realbin.ProcStatusKB(pid, "VmRSS")
	cpu0 := realbin.ProcCPU(pid)
	rs := realbin.SampleRSS(pid, 20*time.Millisecond)
	t := time.Now()
	m.res = c.ImportSuppressions(source)
	m.took = time.Since(t)
	m.peak = rs.End()
	m.cpu = realbin.ProcCPU(pid) - cpu0
	m.rss1 = realbin.ProcStatusKB(pid, "VmRSS")
	return m
}

// lookup asks for number's entry n times and returns the median and the
// 99th percentile; the answer must list it exactly when listed.
func lookup(c *realbin.Client, number string, n int, listed bool) [2]time.Duration {
	path := "/api/v1/suppressions?number=" + url.QueryEscape(number)
	lat := make([]time.Duration, 0, n)
	for range n {
		t := time.Now()
		res := c.Get(path)
		lat = append(lat, time.Since(t))
		if list, _ := res["suppressions"].([]any); (len(list) == 1) != listed {
			c.Fail("GET %s: %v; want listed %v", path, res, listed)
		}
	}
	slices.Sort(lat)
	return [2]time.Duration{lat[len(lat)/2], lat[len(lat)*99/100]}
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func mb(kb int64) float64 { return float64(kb) / 1024 }
