package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/contacts"
	"github.com/outdial/outdial/dialer/phone"
	"github.com/outdial/outdial/dialer/workflow"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/store/objstore"
	"github.com/outdial/outdial/web/wire"
)

// maxReportedProblems bounds the CSV problems listed in one 422.
const maxReportedProblems = 100

// createCampaign validates the body, reads and checks the uploaded CSV and
// stores the campaign with every contact in one transaction: a rejected CSV
// stores nothing.
func (s *Server) createCampaign(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	body, err := readJSONObject(r)
	if err != nil {
		return err
	}
	var p Problems
	f := fields{obj: body, loc: []any{"body"}, p: &p}
	nc := store.NewCampaign{Settings: store.Settings{RetryConfig: store.RetryConfig(wire.DefaultRetryConfig),
		MaxConcurrency: wire.DefaultMaxConcurrency, CircuitBreaker: store.CircuitBreaker(wire.DefaultCircuitBreaker)}}
	if name, present, ok := f.Name("name", true, false, 1, 255); present && ok {
		nc.Name = name
	}
	readSettings(f, &nc.Settings)
	workflowID, _, wfOK := f.Int("workflow_id", true, nil, nil)
	if st, present, ok := f.String("source_type", false, true, 0, 0); present && ok && st != "csv" {
		p.Add([]any{"body", "source_type"}, "literal_error", "Input should be 'csv'", st, map[string]any{"expected": "'csv'"})
	}
	srcName := "source_id"
	if _, has := body["source_id"]; !has {
		if _, has := body["source_url"]; has {
			srcName = "source_url"
		}
	}
	source, _, srcOK := f.String(srcName, true, false, 1, 1024)
	if srcName == "source_url" && !srcOK && len(p) > 0 {
		p[len(p)-1].Loc = []any{"body", "source_id"}
	}
	// An absent or null telephony_configuration_id means the organization's
	// default outbound configuration.
	var configID int64
	configGiven := body["telephony_configuration_id"] != nil
	configOK := true
	if configGiven {
		configID, _, configOK = f.Int("telephony_configuration_id", false, nil, nil)
	}
	nc.DefaultCountry = readCountry(f)
	if err := p.Err(); err != nil {
		return err
	}
	ctx := r.Context()

	wf, err := s.db.GetWorkflow(ctx, org, workflowID)
	if store.ErrorCode(err) == store.ENOTFOUND {
		p.Add([]any{"body", "workflow_id"}, "workflow_not_found", fmt.Sprintf("Value error, workflow %d not found", workflowID), body["workflow_id"], nil)
	} else if err != nil {
		return err
	}
	var def *workflow.Definition
	if wf != nil && wfOK {
		if def, err = workflow.Parse(wf.Definition); err == nil {
			if errs := workflow.Validate(def); len(errs) > 0 {
				p.Add([]any{"body", "workflow_id"}, "workflow_invalid", fmt.Sprintf("Value error, workflow %d is not valid; fix it (POST /api/v1/workflow/%d/validate lists the problems)", wf.ID, wf.ID),
					body["workflow_id"], map[string]any{"errors": errs})
			}
		}
	}
	var cfg *store.TelephonyConfig
	if !configGiven {
		configID, err = s.db.DefaultOutboundConfigID(ctx, org)
		if store.ErrorCode(err) == store.ENOTFOUND {
			p.Add([]any{"body", "telephony_configuration_id"}, "missing", "Field required: the organization has no default outbound telephony configuration", nil, nil)
			configOK = false
		} else if err != nil {
			return err
		}
	}
	if configOK {
		// Ids are positive: 0 or a negative id names nothing (and must not
		// reach the store as "no configuration").
		err = store.Errorf(store.ENOTFOUND, "telephony configuration %d not found", configID)
		if configID > 0 {
			cfg, err = s.db.GetTelephonyConfig(ctx, org, configID)
		}
		if store.ErrorCode(err) == store.ENOTFOUND {
			p.Add([]any{"body", "telephony_configuration_id"}, "telephony_configuration_not_found",
				fmt.Sprintf("Value error, telephony configuration %d not found", configID), body["telephony_configuration_id"], nil)
		} else if err != nil {
			return err
		}
	}
	if err := p.Err(); err != nil {
		return err
	}
	if _, sent := body["rate_limit_per_second"]; !sent || body["rate_limit_per_second"] == nil {
		spec, _ := carrier.Lookup(cfg.Provider)
		nc.RateLimitPerSecond = spec.RatePerSecond
	}
	nc.WorkflowID, nc.WorkflowName, nc.WorkflowDefinition = wf.ID, wf.Name, wf.Definition
	nc.TelephonyConfigurationID, nc.TelephonyConfigurationName, nc.SourceID = cfg.ID, cfg.Name, source

	c, err := s.db.CreateCampaign(ctx, org, nc, func(add func(store.ContactInput) error) ([]string, error) {
		return s.readContacts(ctx, org, source, nc.DefaultCountry, workflow.RequiredVariables(def), add)
	})
	if err != nil {
		return err
	}
	out, err := s.campaignOut(ctx, c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// readContacts streams the uploaded CSV at key through the contacts reader
// into add, and returns its columns, or a 422 listing its problems.
func (s *Server) readContacts(ctx context.Context, org int64, key string, country *string, required []string, add func(store.ContactInput) error) ([]string, error) {
	loc := []any{"body", "source_id"}
	notFound := Problems{{Loc: loc, Msg: "Value error, nothing was uploaded at this key in this organization", Type: "object_not_found", Input: key}}.Err()
	if !strings.HasPrefix(key, UploadKeyPrefix(org)) || objstore.ValidateKey(key) != nil || s.uploads == nil {
		return nil, notFound
	}
	rc, err := s.uploads.Open(ctx, key)
	if errors.Is(err, objstore.ErrNotFound) {
		return nil, notFound
	}
	if err != nil {
		return nil, fmt.Errorf("open upload: %w", err)
	}
	defer rc.Close()
	opts := contacts.Options{RequiredVariables: required, MaxProblems: maxReportedProblems}
	if country != nil {
		opts.DefaultCountry = *country
	}
	// A remote S3 service does not enforce the size a presigned URL was
	// made for; never read more than the largest allowed upload.
	counted := &countingReader{r: io.LimitReader(rc, s.maxUpload+1)}
	maxRows := s.limits.MaxCampaignRows
	if maxRows <= 0 {
		maxRows = DefaultMaxCampaignRows
	}
	rows := 0
	res, err := contacts.Read(ctx, counted, opts, func(c contacts.Contact) error {
		if rows++; rows > maxRows {
			return errTooManyRows
		}
		in := store.ContactInput{Row: c.Row, PhoneNumber: c.PhoneNumber, Timezone: c.Timezone, Context: c.InitialContext}
		if c.Timezone == "" {
			in.Zones = phone.Zones(c.PhoneNumber) // calling hours' zones (API.md 12.2)
		}
		return add(in)
	})
	if errors.Is(err, errTooManyRows) {
		return nil, Problems{{Loc: loc, Type: "csv_too_many_rows", Input: key, Ctx: map[string]any{"max_rows": maxRows},
			Msg: fmt.Sprintf("Value error, the file has more than %d contacts, the most one campaign takes (serve --max-campaign-rows); split it into several campaigns", maxRows)}}.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("read contacts: %w", err)
	}
	if counted.n > s.maxUpload {
		return nil, Problems{{Loc: loc, Type: "csv_invalid", Input: key,
			Msg: fmt.Sprintf("Value error, the file is larger than the %d bytes allowed", s.maxUpload)}}.Err()
	}
	if res.ProblemCount > 0 {
		var p Problems
		for _, pr := range res.Problems {
			p.addCSV(loc, pr, "", nil)
		}
		if more := res.Omitted(); more > 0 {
			p.Add(loc, "too_many_problems", fmt.Sprintf("Value error, %d more problems not listed", more), nil, map[string]any{"omitted": more})
		}
		return nil, p.Err()
	}
	return res.Columns, nil
}

// addCSV adds the 422 entry of pr, a problem of an uploaded CSV at loc:
// at loc for the whole file, at loc + ["row", N] for row N, with the column
// it is about (a missing phone_number column is about phone_number), its
// msg followed by note, and ctx.
func (p *Problems) addCSV(loc []any, pr contacts.Problem, note string, ctx map[string]any) {
	if pr.Row > 0 {
		loc = at(loc, "row", pr.Row)
	}
	column := pr.Column
	if pr.Type == contacts.TypeCSVNoPhoneColumn {
		column = contacts.PhoneColumn
	}
	// Our own types' messages start like pydantic's value errors.
	p.Add(loc, pr.Type, "Value error, "+pr.Msg+note, pr.Input, ctx)
	(*p)[len(*p)-1].Column = column
}

// errTooManyRows stops reading a CSV past the campaign row limit.
var errTooManyRows = errors.New("too many contacts")

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
