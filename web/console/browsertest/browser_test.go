package browsertest_test

// The package's one headless Chromium: where it is found, the flags it
// needs on our machines, and whether its absence skips or fails the tests.

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/outdial/outdial/web/console/browsertest"
)

// defaultChromium is where Debian's chromium package (.ci/chromium.sh)
// puts the browser; $CHROMIUM overrides it.
const defaultChromium = "/usr/bin/chromium"

// browserStartTimeout bounds the browser's start (a cold start under -race
// with the other packages' tests running takes a few seconds).
const browserStartTimeout = 60 * time.Second

// browser is the package's headless Chromium: ctx is a chromedp context
// whose browser runs; each test opens its own tab from it (newTab).
type browser struct {
	ctx    context.Context
	cancel context.CancelFunc // ends the browser and waits for its process
	output *lockedBuffer      // its stdout and stderr
}

// chromiumPath returns the browser to start: $CHROMIUM when set, else
// defaultChromium when it exists.
func chromiumPath() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, nil
	}
	if _, err := os.Stat(defaultChromium); err != nil {
		return "", fmt.Errorf("no browser at %s (install it with .ci/chromium.sh, or set CHROMIUM to a Chromium binary): %w",
			defaultChromium, err)
	}
	return defaultChromium, nil
}

// startBrowser starts the browser and waits until it answers.
func startBrowser() (*browser, error) {
	path, err := chromiumPath()
	if err != nil {
		return nil, err
	}
	output := &lockedBuffer{}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		browsertest.AllocatorOptions(path, int(desktopView.width), int(desktopView.height), output)...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	b := &browser{ctx: ctx, output: output, cancel: func() {
		cancelCtx()
		cancelAlloc() // waits for the process to end and its directory to go
	}}
	// The first action starts the browser, bound to ctx: it cannot take a
	// deadline of its own (that would end the browser with it), so the
	// deadline is kept here.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	timer := time.NewTimer(browserStartTimeout)
	defer timer.Stop()
	select {
	case err = <-started:
	case <-timer.C:
		err = fmt.Errorf("no answer within %v", browserStartTimeout)
	}
	if err != nil {
		b.cancel()
		return nil, fmt.Errorf("start %s: %w\n%s", path, err, output.tail(4096))
	}
	return b, nil
}

// close ends the browser.
func (b *browser) close() { b.cancel() }
