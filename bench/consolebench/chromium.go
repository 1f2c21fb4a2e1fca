package main

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/outdial/outdial/bench/internal/realbin"
	"github.com/outdial/outdial/web/console/browsertest"
)

// browser is one headless Chromium, started as web/console/browsertest
// starts it: no sandbox, no GPU, nothing that reaches for the network by
// itself, a fresh temporary --user-data-dir (chromedp makes and removes
// it), talked to over a pipe.
type browser struct {
	ctx    context.Context
	cancel context.CancelFunc
	pid    int
	out    *lockedBuffer
}

// startBrowser starts Chromium at path with a 1280x800 window.
func startBrowser(path string) (*browser, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no browser at %s (install it with .ci/chromium.sh, or pass -chromium): %w", path, err)
	}
	out := &lockedBuffer{}
	opts := browsertest.AllocatorOptions(path, 1280, 800, out)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	b := &browser{ctx: ctx, out: out, cancel: func() {
		cancelCtx()
		cancelAlloc()
	}}
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	var err error
	select {
	case err = <-started:
	case <-time.After(60 * time.Second):
		err = fmt.Errorf("no answer within 60 s")
	}
	if err != nil {
		b.cancel()
		return nil, fmt.Errorf("start %s: %w\n%s", path, err, realbin.Tail(out.bytes(), 4096))
	}
	if p := chromedp.FromContext(ctx).Browser.Process(); p != nil {
		b.pid = p.Pid
	}
	return b, nil
}

// close ends the browser and waits for its process.
func (b *browser) close() { b.cancel() }

// newSession opens a tab in a new browser context (no cookie, cache or
// storage shared with another) and signs in there through the sign-in form
// with key, as a person would: it types the key, presses "Sign in" and
// waits for the campaigns list. Tabs made from the returned context
// (chromedp.NewContext of it) share the session. cancel closes the tab and
// disposes the browser context.
func (b *browser) newSession(base, key string) (ctx context.Context, cancel context.CancelFunc, err error) {
	ctx, cancel = chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		return nil, nil, fmt.Errorf("open a tab: %w", err)
	}
	if err := signIn(ctx, base, key); err != nil {
		cancel()
		return nil, nil, err
	}
	return ctx, cancel, nil
}

// signIn signs in from the sign-in page of the service at base.
func signIn(ctx context.Context, base, key string) error {
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx,
		chromedp.Navigate(base+"/console/sign-in"),
		chromedp.SendKeys(chromedp.CSS("#api_key"), key),
		chromedp.Click(chromedp.CSS(`form[action="/console/sign-in"] button[type=submit]`), chromedp.NodeVisible),
	); err != nil {
		return fmt.Errorf("sign in: %w", err)
	}
	return waitPath(tctx, "/console/")
}

// waitPath waits until the tab's location has path want (a navigation
// under way makes a read fail: it is read again).
func waitPath(ctx context.Context, want string) error {
	for {
		loc, err := chromedp.Run(ctx, chromedp.Location())
		if err == nil {
			if u, perr := url.Parse(loc); perr == nil && u.Path == want {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s: the tab is at %q (%v)", want, loc, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// treeCPU returns the user + system CPU time of process root and of every
// process descending from it that runs now (Chromium's renderers, GPU and
// network processes), read from /proc; processes that went away in
// between are left out.
func treeCPU(root int) time.Duration {
	if root == 0 {
		return 0
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	parent := map[int]int{}
	cpu := map[int]float64{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 13 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		utime, _ := strconv.ParseFloat(f[11], 64)
		stime, _ := strconv.ParseFloat(f[12], 64)
		parent[pid], cpu[pid] = ppid, utime+stime
	}
	var ticks float64
	for pid, t := range cpu {
		for p := pid; p > 1; p = parent[p] {
			if p == root {
				ticks += t
				break
			}
		}
	}
	return time.Duration(ticks / realbin.ClockTicks * float64(time.Second))
}

// lockedBuffer is the browser's output, written by chromedp's copier.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.b.Bytes()...)
}
