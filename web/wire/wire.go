// Package wire holds the JSON bodies of the public API (API.md, docs/api.md)
// that more than one side uses: package web encodes them, and the console
// (web/console), a client of the API, decodes them. One declaration of each
// body keeps the two from drifting apart; a field added here is answered by
// the API and seen by the console at once.
//
// The package also holds the rules both sides need (settings.go): a
// campaign's defaults and bounds, and which providers need a caller number.
//
// wire imports neither web nor web/console, nor store: web converts the
// store's records into these types.
package wire
