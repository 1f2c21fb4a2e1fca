package web

import (
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/wire"
)

// ts formats a time as the contract's RFC 3339 UTC timestamp with
// milliseconds.
func ts(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func telephonyConfigDetail(c *store.TelephonyConfig) wire.TelephonyConfig {
	return wire.TelephonyConfig{
		ID: c.ID, Name: c.Name, Provider: c.Provider, IsDefaultOutbound: c.IsDefaultOutbound,
		Credentials: maskedCredentials(c.Provider, c.Credentials), PhoneNumberCount: c.PhoneNumberCount,
		CreatedAt: ts(c.CreatedAt), UpdatedAt: ts(c.UpdatedAt),
	}
}

func (s *Server) listProviders(w http.ResponseWriter, _ *http.Request, _ httprouter.Params, _ int64) error {
	writeJSON(w, http.StatusOK, map[string]any{"providers": carrier.Specs()})
	return nil
}

func (s *Server) createTelephonyConfig(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	body, err := readJSONObject(r)
	if err != nil {
		return err
	}
	var p Problems
	f := fields{obj: body, loc: []any{"body"}, p: &p, echo: maskedBody(body)}
	name, _, _ := f.Name("name", true, false, 1, 64)
	isDefault, _, _ := f.Bool("is_default_outbound", false)
	var provider string
	var creds store.Credentials
	if cf, present, ok := f.Object("config", true, false); present && ok {
		provider, creds = newCredentials(configFields(cf))
	}
	if err := p.Err(); err != nil {
		return err
	}
	if carrier.ApplicationField(provider) != "" {
		// A duplicate name must not create an application at the provider.
		if err := s.db.CheckTelephonyConfigName(r.Context(), org, name, 0); err != nil {
			return err
		}
		if err := s.provision(r.Context(), r, org, name, provider, creds); err != nil {
			return err
		}
	}
	c, err := s.db.CreateTelephonyConfig(r.Context(), org, store.TelephonyConfig{
		Name: name, Provider: provider, IsDefaultOutbound: isDefault, Credentials: creds,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, telephonyConfigDetail(c))
	return nil
}

func (s *Server) listTelephonyConfigs(w http.ResponseWriter, r *http.Request, _ httprouter.Params, org int64) error {
	list, err := s.db.ListTelephonyConfigs(r.Context(), org)
	if err != nil {
		return err
	}
	items := make([]wire.TelephonyConfigItem, len(list))
	for i, c := range list {
		items[i] = wire.TelephonyConfigItem{ID: c.ID, Name: c.Name, Provider: c.Provider, IsDefaultOutbound: c.IsDefaultOutbound,
			PhoneNumberCount: c.PhoneNumberCount, CreatedAt: ts(c.CreatedAt), UpdatedAt: ts(c.UpdatedAt)}
	}
	writeJSON(w, http.StatusOK, wire.TelephonyConfigList{Configurations: items})
	return nil
}

func (s *Server) getTelephonyConfig(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, err := pathID(ps, "config_id")
	if err != nil {
		return err
	}
	c, err := s.db.GetTelephonyConfig(r.Context(), org, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, telephonyConfigDetail(c))
	return nil
}

// updateTelephonyConfig applies a partial update. The body is validated in
// two steps: its shape before the configuration is loaded (so a malformed body
// is a 422 even for an unknown id, as FastAPI does), then the config fields
// against the stored provider inside the store's transaction.
func (s *Server) updateTelephonyConfig(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, idErr := pathID(ps, "config_id")
	body, err := readJSONObject(r)
	if err != nil {
		return joinProblems(idErr, err)
	}
	var p Problems
	f := fields{obj: body, loc: []any{"body"}, p: &p, echo: maskedBody(body)}
	name, hasName, _ := f.Name("name", false, true, 1, 64)
	var isDefault, hasDefault bool
	if v, sent := body["is_default_outbound"]; sent && v != nil {
		isDefault, hasDefault, _ = f.Bool("is_default_outbound", false)
	}
	cf, hasConfig, configOK := f.Object("config", false, true)
	if len(p) > 0 && idErr == nil && hasConfig && configOK {
		// One 422 lists every problem of the request: when the top-level
		// fields already fail, check the config against the stored provider
		// too (when the configuration exists; the store re-checks below
		// otherwise).
		if c, err := s.db.GetTelephonyConfig(r.Context(), org, id); err == nil {
			mergeCredentials(configFields(cf), c.Provider, c.Credentials)
		}
	}
	if err := joinProblems(idErr, p.Err()); err != nil {
		return err
	}
	created, err := s.provisionOnUpdate(r, org, id, name, hasName, cf, hasConfig)
	if err != nil {
		return err
	}
	c, err := s.db.UpdateTelephonyConfig(r.Context(), org, id, func(c *store.TelephonyConfig) error {
		var p Problems
		if hasConfig {
			cf.p = &p
			c.Credentials = mergeCredentials(configFields(cf), c.Provider, c.Credentials)
			for k, v := range created {
				if s, _ := c.Credentials[k].(string); s == "" {
					c.Credentials[k] = v
				}
			}
		}
		if hasName {
			c.Name = name
		}
		if hasDefault {
			c.IsDefaultOutbound = isDefault
		}
		return p.Err()
	})
	if err != nil {
		return err
	}
	if s.dialer != nil {
		s.dialer.ForgetConfig(id)
	}
	writeJSON(w, http.StatusOK, telephonyConfigDetail(c))
	return nil
}

// provisionOnUpdate creates the provider application of an update whose
// config leaves the application field empty (API.md 2.3), before the
// update's transaction: the provider request must not hold the database's
// writer. It returns the created field and id (nil when nothing was
// created); invalid input is left to the update to report.
func (s *Server) provisionOnUpdate(r *http.Request, org, id int64, name string, hasName bool, cf fields, hasConfig bool) (store.Credentials, error) {
	if !hasConfig {
		return nil, nil
	}
	c, err := s.db.GetTelephonyConfig(r.Context(), org, id)
	if err != nil || carrier.ApplicationField(c.Provider) == "" {
		return nil, nil // the update reports a missing configuration itself
	}
	var p Problems
	probe := cf
	probe.p = &p
	merged := mergeCredentials(configFields(probe), c.Provider, c.Credentials)
	if len(p) > 0 {
		return nil, nil // the update answers these problems
	}
	if !hasName {
		name = c.Name
	} else if err := s.db.CheckTelephonyConfigName(r.Context(), org, name, id); err != nil {
		return nil, err // a duplicate name must not create an application
	}
	field := carrier.ApplicationField(c.Provider)
	if err := s.provision(r.Context(), r, org, name, c.Provider, merged); err != nil {
		return nil, err
	}
	if v, _ := merged[field].(string); v != "" {
		if old, _ := c.Credentials[field].(string); old != v {
			return store.Credentials{field: v}, nil
		}
	}
	return nil, nil
}

func (s *Server) deleteTelephonyConfig(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	id, err := pathID(ps, "config_id")
	if err != nil {
		return err
	}
	if err := s.db.DeleteTelephonyConfig(r.Context(), org, id); err != nil {
		return err
	}
	if s.dialer != nil {
		s.dialer.ForgetConfig(id)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
