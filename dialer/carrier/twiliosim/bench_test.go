package twiliosim_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// benchCalls places b.N calls through the Twilio carrier against the
// simulator with the default script (answered at once, final after 50 ms),
// from `workers` workers that each wait for their call's final status
// before the next (the engine's max_concurrency), started at most `rate`
// per second (0: unpaced). The in-process service verifies every webhook.
// It reports calls/s, the peak in flight and the CPU of the whole process
// (simulator + carrier + service) per 1,000 calls.
func benchCalls(b *testing.B, workers int, rate float64) {
	sim := twiliosim.Start(twiliosim.Config{})
	defer sim.Close()
	svc := newService(b, sim, false)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				p, err := svc.car.Place(context.Background(), svc.call(fmt.Sprintf("+1415%07d", i)))
				if err != nil {
					b.Error(err)
					continue
				}
				<-svc.finalOf(p.ProviderCallID)
			}
		})
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if rate > 0 {
			// Call i is due at start + i/rate; a late feeder catches up
			// (a time.Ticker would drop ticks under load).
			due := start.Add(time.Duration(float64(i) * float64(time.Second) / rate))
			if d := time.Until(due); d > 0 {
				<-time.After(d)
			}
		}
		next <- i
	}
	close(next)
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := sim.WaitFinal(ctx, b.N); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	st := sim.Stats()
	if st.CallbackErrors != 0 || svc.forgedCount() != 0 {
		b.Fatalf("stats = %+v, forged %d", st, svc.forgedCount())
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	b.ReportMetric(float64(st.PeakInFlight), "peak-in-flight")
	b.ReportMetric((cpuTime()-cpu0).Seconds()*1000/float64(b.N), "cpu-s/1k-calls")
}

// BenchmarkUnpaced500 measures the simulator's own capacity.
func BenchmarkUnpaced500(b *testing.B) { benchCalls(b, 500, 0) }

// BenchmarkPaced1000 is the shape of the dialer benchmark (1,000 calls/s,
// 500 in flight); run it with -benchtime 20000x.
func BenchmarkPaced1000(b *testing.B) { benchCalls(b, 500, 1000) }
