package main

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/nyaruka/phonenumbers"
)

// workflow is a valid workflow: a start node whose greeting uses
// first_name and last_name, an end node, one edge.
const workflow = `{"nodes":[` +
	`{"id":"start","type":"startCall","position":{"x":0,"y":0},"data":{"name":"Greeting","prompt":"You are calling {{first_name}} {{last_name}}.","greeting":"Hello {{first_name}}, this is a reminder."}},` +
	`{"id":"bye","type":"endCall","position":{"x":200,"y":0},"data":{"name":"Goodbye","prompt":"Say goodbye."}}],` +
	`"edges":[{"id":"e1","source":"start","target":"bye","data":{"label":"Done","condition":"The reminder was delivered"}}]}`

// Area codes and exchanges of the generated numbers: every pair is a
// 10,000-number block (line numbers 0000-9999) of valid US numbers, 100
// blocks for a million rows. Exchanges avoid 555 (its 01xx lines are
// fictional) and N11.
var (
	areaCodes = []string{"201", "202", "203", "205", "206", "207", "208", "209", "210", "212",
		"213", "214", "215", "216", "217", "218", "219", "224", "225", "228",
		"229", "231", "234", "239", "240", "248", "251", "252", "253", "254",
		"256", "260", "262", "267", "269", "270", "276", "281", "301", "302"}
	exchanges = []string{"234", "345", "456", "678", "789", "823", "932", "627"}
)

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

// number returns the i-th generated phone number in E.164: block i/10,000
// (area codes vary fastest), line number i%10,000. The first
// len(areaCodes)*len(exchanges)*10,000 are distinct.
func number(i int) string {
	block, line := i/10000, i%10000
	a := areaCodes[block%len(areaCodes)]
	e := exchanges[(block/len(areaCodes))%len(exchanges)]
	return "+1" + a + e + fmt.Sprintf("%04d", line)
}

// maxRows is how many distinct numbers number can make.
var maxRows = len(areaCodes) * len(exchanges) * 10000

// checkNumbers verifies with libphonenumber that every block's first,
// middle and last number of the first n is a valid US number (the service
// rejects invalid ones), returning the first invalid one.
func checkNumbers(n int) error {
	if n > maxRows {
		return fmt.Errorf("at most %d distinct numbers, %d asked", maxRows, n)
	}
	for block := 0; block*10000 < n; block++ {
		for _, line := range []int{0, 100, 199, 5000, 9999} {
			s := number(block*10000 + line)
			p, err := phonenumbers.Parse(s, "US")
			if err != nil || !phonenumbers.IsValidNumber(p) || phonenumbers.GetRegionCodeForNumber(p) != "US" {
				return fmt.Errorf("generated number %s is not a valid US number (%v)", s, err)
			}
		}
	}
	return nil
}

// contactsCSV returns a contacts file of n rows (phone_number, first_name,
// last_name, city) whose numbers are number(offset) .. number(offset+n-1).
func contactsCSV(n, offset int) []byte {
	var b bytes.Buffer
	b.Grow(n * 48)
	b.WriteString("phone_number,first_name,last_name,city\n")
	var num []byte
	for i := range n {
		k := offset + i
		num = append(num[:0], number(k)...)
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
