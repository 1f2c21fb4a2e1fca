package browsertest_test

// What a page did that a test must see even when it did not look for it:
// JavaScript dialogs and errors.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// pageWatch records, for one tab, every JavaScript dialog the page opened
// (alert, confirm, prompt, beforeunload) and every error it reported:
// console.error and failed console.assert calls, uncaught exceptions and
// unhandled promise rejections, and the browser log's errors (a resource
// that failed to load, a Content-Security-Policy violation), except the
// failure of the browser's own /favicon.ico request.
//
// listen sees the tab's events in the order the browser sent them, before
// the reply to any later command is read (chromedp.WithListener), so after
// any command returns, everything the page did before it is recorded. A
// dialog blocks its page until it is answered; answerDialogs answers each
// one at once (dismissed, or accepted after acceptDialogs(true)), so a test
// never hangs on one; the dialog still counts.
type pageWatch struct {
	mu       sync.Mutex
	dialogs  []string // "alert: 1"
	problems []string // "console.error: ..."
	accept   bool     // the answer to dialogs
	open     int      // dialogs not answered yet
	wake     chan struct{}
	done     chan struct{} // closed when answerDialogs returns
}

func newPageWatch() *pageWatch {
	return &pageWatch{wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// listen is the tab's event listener. It runs in chromedp's read loop: it
// only records, under a lock, and never runs a command.
func (w *pageWatch) listen(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch ev := ev.(type) {
	case *page.EventJavascriptDialogOpening:
		w.dialogs = append(w.dialogs, fmt.Sprintf("%s: %s", ev.Type, ev.Message))
		w.open++
		select {
		case w.wake <- struct{}{}:
		default:
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			w.problems = append(w.problems, fmt.Sprintf("console.%s: %s", ev.Type, remoteText(ev.Args)))
		}
	case *runtime.EventExceptionThrown:
		w.problems = append(w.problems, "uncaught: "+exceptionText(ev.ExceptionDetails))
	case *log.EventEntryAdded:
		if e := ev.Entry; e != nil && e.Level == log.EntryLevelError && !browsersOwn(e) {
			w.problems = append(w.problems, fmt.Sprintf("browser log (%s): %s %s", e.Source, e.Text, e.URL))
		}
	}
}

// answerDialogs answers the dialogs listen records until ctx ends, then
// closes w.done. It runs in a goroutine of its own: an open dialog blocks
// the page, and with it the test's own command.
func (w *pageWatch) answerDialogs(ctx context.Context) {
	defer close(w.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		}
		for {
			w.mu.Lock()
			if w.open == 0 {
				w.mu.Unlock()
				break
			}
			w.open--
			accept := w.accept
			w.mu.Unlock()
			// An error here is the tab going away; the page is then
			// blocked no more.
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept})
		}
	}
}

// setAccept sets the answer to later dialogs.
func (w *pageWatch) setAccept(accept bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.accept = accept
}

// takeDialogs returns the dialogs recorded so far and forgets them.
func (w *pageWatch) takeDialogs() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.dialogs
	w.dialogs = nil
	return out
}

// takeProblems returns the errors recorded so far and forgets them.
func (w *pageWatch) takeProblems() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.problems
	w.problems = nil
	return out
}

// browsersOwn reports whether a log entry is about a request the browser
// made by itself rather than for the page: /favicon.ico, which Chromium
// asks every origin for whether or not a page names an icon.
func browsersOwn(e *log.Entry) bool {
	if e.Source != log.EntrySourceNetwork {
		return false
	}
	u, err := url.Parse(e.URL)
	return err == nil && u.Path == "/favicon.ico"
}

// remoteText renders console arguments as the console shows them, roughly:
// strings as they are, other values by their JSON or description.
func remoteText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		switch {
		case a == nil:
		case a.Type == runtime.RemoteObjectTypeString:
			var s string
			if err := json.Unmarshal(a.Value, &s); err == nil {
				parts = append(parts, s)
				continue
			}
			parts = append(parts, string(a.Value))
		case a.Description != "":
			parts = append(parts, a.Description)
		case len(a.Value) > 0:
			parts = append(parts, string(a.Value))
		default:
			parts = append(parts, string(a.Type))
		}
	}
	return strings.Join(parts, " ")
}

// exceptionText is an exception's text and, when the page threw a value,
// that value's description ("Error: boom\n    at ...").
func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "(no details)"
	}
	text := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		text += " " + d.Exception.Description
	}
	return fmt.Sprintf("%s (%s:%d)", text, d.URL, d.LineNumber+1)
}
