package main

import (
	"bytes"
	"strconv"

	"github.com/outdial/outdial/bench/internal/realbin"
)

// workflow is a valid workflow: a start node whose greeting uses
// first_name and last_name, an end node, one edge.
const workflow = `{"nodes":[` +
	`{"id":"start","type":"startCall","position":{"x":0,"y":0},"data":{"name":"Greeting","prompt":"You are calling {{first_name}} {{last_name}}.","greeting":"Hello {{first_name}}, this is a reminder."}},` +
	`{"id":"bye","type":"endCall","position":{"x":200,"y":0},"data":{"name":"Goodbye","prompt":"Say goodbye."}}],` +
	`"edges":[{"id":"e1","source":"start","target":"bye","data":{"label":"Done","condition":"The reminder was delivered"}}]}`

// Names and cities, about 29 characters a row together: with the number
// and the separators a row is about 45 bytes (the file was 46 MB
// for a million rows).
var (
	firstNames = []string{
		"Alexandra", "Christopher", "Elizabeth", "Katherine", "Guillermo", "Annabelle", "Margaret",
		"Kenneth", "Frances", "Maximilian", "Barbara", "Donald", "Leslie", "Gabriella", "Sebastian",
		"Josephine", "Nathaniel", "Evangeline",
	}
	lastNames = []string{
		"Lovelace", "Hopper-Smith", "Turing", "Dijkstra", "Liskov-Rivera", "Knuth", "Hamilton", "Thompson",
		"Ritchie", "Lamport", "Hollingsworth", "Vanderbilt", "Montgomery", "Castellanos", "Fitzgerald",
		"Brightwater", "Worthington", "Kowalczyk",
	}
	cities = []string{
		"London", "New York City", "Saint Petersburg", "Rio de Janeiro", "Mumbai", "Sydney", "Sao Paulo",
		"San Francisco", "Johannesburg", "Buenos Aires", "Los Angeles", "Kuala Lumpur", "Philadelphia",
		"Minneapolis", "Albuquerque", "Indianapolis", "Jacksonville", "Salt Lake City",
	}
)

// contactsCSV returns a contacts file of n rows (phone_number, first_name,
// last_name, city) whose numbers are realbin.Number(offset) .. realbin.Number(offset+n-1).
func contactsCSV(n, offset int) []byte {
	var b bytes.Buffer
	b.Grow(n * 48)
	b.WriteString("phone_number,first_name,last_name,city\n")
	var num []byte
	for i := range n {
		k := offset + i
		num = append(num[:0], realbin.Number(k)...)
		b.Write(num)
		b.WriteByte(',')
		b.WriteString(firstNames[k%len(firstNames)])
		b.WriteByte(',')
		b.WriteString(lastNames[(k/7)%len(lastNames)])
		b.WriteByte(',')
		b.WriteString(cities[(k/13)%len(cities)])
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// busyNumber reports whether the simulator ends a call to the big
// campaign's number to busy (one in ten, by the last digit) rather than
// answering it: the cancelled campaign then has final busy contacts to
// redial.
func busyNumber(to string) bool { return to != "" && to[len(to)-1] == '7' }

// itoa is strconv.FormatInt for ids.
func itoa(id int64) string { return strconv.FormatInt(id, 10) }
