package web

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/outdial/outdial/dialer/contacts"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/wire"
)

// queryColumns reads the calls list's ?columns= (API.md 4.6): the CSV
// columns each call's contact object holds, comma-separated, repeated
// parameters adding up, blanks around a name ignored, each name once in the
// order first asked. Names are checked against the campaign's columns by
// checkColumns once the campaign is read; nil when none is asked.
func queryColumns(r *http.Request) []string {
	var out []string
	for _, v := range r.URL.Query()["columns"] {
		for name := range strings.SplitSeq(v, ",") {
			if name = strings.TrimSpace(name); name != "" && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// checkColumns returns a 422 naming the asked columns the campaign does not
// have (names match as the CSV's header wrote them), each with the
// campaign's columns as ctx.expected.
func checkColumns(asked []string, c *store.Campaign) error {
	var p Problems
	for _, name := range asked {
		if slices.Contains(c.Columns, name) {
			continue
		}
		quoted := make([]string, 0, len(c.Columns))
		for _, col := range c.Columns {
			if col != "" {
				quoted = append(quoted, "'"+col+"'")
			}
		}
		expected := strings.Join(quoted, ", ")
		msg := "Input should be one of the campaign's columns: " + expected
		if len(quoted) == 0 {
			msg = "The campaign's CSV has no named columns"
		}
		p.Add([]any{"query", "columns"}, "enum", msg, name, map[string]any{"expected": expected})
	}
	return p.Err()
}

// addContacts sets the contact object of each call in out (the attempts of
// list, in the same order) to the asked columns of its contact's CSV row: a
// cell as written ("" for a row without it), the phone_number column the
// E.164 number. One read of the page's contacts, by primary key.
func (s *Server) addContacts(ctx context.Context, campaignID int64, asked []string, list []*store.Attempt, out []wire.Call) error {
	ids := make([]int64, 0, len(list))
	seen := make(map[int64]bool, len(list))
	for _, a := range list {
		if !seen[a.ContactID] {
			seen[a.ContactID] = true
			ids = append(ids, a.ContactID)
		}
	}
	rows, err := s.db.ContactContexts(ctx, campaignID, ids)
	if err != nil {
		return err
	}
	cells := make(map[int64]map[string]string, len(rows))
	for id, raw := range rows {
		vars := map[string]string{}
		_ = json.Unmarshal(raw, &vars)
		cells[id] = vars
	}
	for i, a := range list {
		contact := make(map[string]string, len(asked))
		for _, name := range asked {
			if strings.EqualFold(name, contacts.PhoneColumn) {
				contact[name] = a.PhoneNumber
			} else {
				contact[name] = cells[a.ContactID][name]
			}
		}
		out[i].Contact = contact
	}
	return nil
}
