package browsertest_test

// The package's one headless Chromium: where it is found, the flags it
// needs on our machines, and whether its absence skips or fails the tests.

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/chromedp/chromedp"
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

// allocatorOptions are chromedp's defaults (headless, no first run, no
// extensions...) plus what Chromium needs on our machines: no sandbox (we
// run as root), no GPU, and nothing that reaches for the network by itself
// (QUIC, background networking, component updates, sync), whose connections
// the closed network refuses. chromedp starts the browser with a fresh
// temporary --user-data-dir and removes it when the browser ends; it talks
// to it over a pipe, so no debugging port is opened.
func allocatorOptions(path string, output *lockedBuffer) []chromedp.ExecAllocatorOption {
	return append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(int(desktopView.width), int(desktopView.height)),
		chromedp.CombinedOutput(output),
	)
}

// startBrowser starts the browser and waits until it answers.
func startBrowser() (*browser, error) {
	path, err := chromiumPath()
	if err != nil {
		return nil, err
	}
	output := &lockedBuffer{}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), allocatorOptions(path, output)...)
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
