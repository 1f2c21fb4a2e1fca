package web

import (
	"errors"
	"net/http"
	"regexp"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/phone"
	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/wire"
)

func phoneNumberOut(p *store.PhoneNumber) wire.PhoneNumber {
	return wire.PhoneNumber{
		ID: p.ID, TelephonyConfigurationID: p.TelephonyConfigurationID, Address: p.Address,
		AddressNormalized: p.AddressNormalized, AddressType: p.AddressType, CountryCode: p.CountryCode,
		Label: p.Label, IsActive: p.IsActive, IsDefaultCallerID: p.IsDefaultCallerID,
		CreatedAt: ts(p.CreatedAt), UpdatedAt: ts(p.UpdatedAt),
	}
}

var (
	sipUserRe   = regexp.MustCompile(`^[A-Za-z0-9\-_.!~*'()&=+$,;?/%]+$`)
	sipHostRe   = regexp.MustCompile(`^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$`)
	extensionRe = regexp.MustCompile(`^[A-Za-z0-9*#_.\-]{1,64}$`)
)

var errSIPURI = errors.New("not a SIP URI")

// normalizeSIPURI checks a sip:/sips: URI of the form scheme:[user@]host[:port]
// and returns it with the scheme and host lower-cased.
func normalizeSIPURI(addr string) (string, error) {
	scheme, rest, _ := strings.Cut(addr, ":")
	scheme = strings.ToLower(scheme)
	user, host, hasUser := strings.Cut(rest, "@")
	if !hasUser {
		host, user = user, ""
	}
	if (hasUser && !sipUserRe.MatchString(user)) || !sipHostRe.MatchString(host) {
		return "", errSIPURI
	}
	if hasUser {
		return scheme + ":" + user + "@" + strings.ToLower(host), nil
	}
	return scheme + ":" + strings.ToLower(host), nil
}

// classifyAddress normalises a phone-number address for provider: SIP URIs
// (sip:/sips:), bare extensions for ARI, otherwise a PSTN number in E.164
// (a national number needs country). Problems are recorded at ["body",
// "address"].
func classifyAddress(p *Problems, provider, addr, country string) (normalized, kind string) {
	loc := []any{"body", "address"}
	lower := strings.ToLower(addr)
	switch {
	case strings.HasPrefix(lower, "sip:") || strings.HasPrefix(lower, "sips:"):
		n, err := normalizeSIPURI(addr)
		if err != nil {
			p.Add(loc, "phone_invalid", "Value error, address is not a valid SIP URI (sip:user@host)", addr, nil)
			return "", ""
		}
		return n, store.AddressSIPURI
	case provider == carrier.ARI && country == "" && !strings.HasPrefix(addr, "+"):
		if !extensionRe.MatchString(addr) {
			p.Add(loc, "phone_invalid", "Value error, address is not a valid extension (letters, digits, *, #, _, ., -)", addr, nil)
			return "", ""
		}
		return addr, store.AddressSIPExtension
	}
	n, err := phone.Normalize(addr, country)
	if err != nil {
		msg := "Value error, address is not a valid phone number"
		if !strings.HasPrefix(strings.TrimSpace(addr), "+") && country == "" {
			msg = "Value error, address is not a valid phone number: give it in E.164 form (+14155550100) or send country_code"
		}
		p.Add(loc, "phone_invalid", msg, addr, nil)
		return "", ""
	}
	return n, store.AddressPSTN
}

func (s *Server) addPhoneNumber(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	configID, idErr := pathID(ps, "config_id")
	body, err := readJSONObject(r)
	if err != nil {
		return joinProblems(idErr, err)
	}
	var p Problems
	f := fields{obj: body, loc: []any{"body"}, p: &p}
	addr, _, addrOK := f.String("address", true, false, 1, 255)
	country, hasCountry, countryOK := f.String("country_code", false, true, 0, 0)
	if hasCountry && countryOK {
		country = strings.ToUpper(strings.TrimSpace(country))
		if !phone.ValidRegion(country) {
			p.Add([]any{"body", "country_code"}, "value_error", "Value error, country_code must be an ISO 3166 alpha-2 code with a numbering plan, e.g. US", body["country_code"], nil)
			countryOK = false
		}
	}
	label, hasLabel, _ := f.Name("label", false, true, 0, 64)
	isDefault, _, _ := f.Bool("is_default_caller_id", false)
	if err := joinProblems(idErr, p.Err()); err != nil {
		return err
	}
	cfg, err := s.db.GetTelephonyConfig(r.Context(), org, configID)
	if err != nil {
		return err
	}
	var normalized, kind string
	if addrOK && countryOK {
		addr = strings.TrimSpace(addr)
		normalized, kind = classifyAddress(&p, cfg.Provider, addr, country)
	}
	if err := p.Err(); err != nil {
		return err
	}
	rec := store.PhoneNumber{Address: addr, AddressNormalized: normalized, AddressType: kind, IsDefaultCallerID: isDefault}
	if country != "" {
		rec.CountryCode = &country
	}
	if hasLabel {
		rec.Label = &label
	}
	out, err := s.db.AddPhoneNumber(r.Context(), org, configID, rec)
	if err != nil {
		return err
	}
	s.callerIDsChanged(configID)
	writeJSON(w, http.StatusOK, phoneNumberOut(out))
	return nil
}

func (s *Server) listPhoneNumbers(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	configID, err := pathID(ps, "config_id")
	if err != nil {
		return err
	}
	list, err := s.db.ListPhoneNumbers(r.Context(), org, configID)
	if err != nil {
		return err
	}
	out := make([]wire.PhoneNumber, len(list))
	for i := range list {
		out[i] = phoneNumberOut(&list[i])
	}
	writeJSON(w, http.StatusOK, wire.PhoneNumberList{PhoneNumbers: out})
	return nil
}

func (s *Server) updatePhoneNumber(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	ids, idErr := pathIDs(ps, "config_id", "phone_number_id")
	body, err := readJSONObject(r)
	if err != nil {
		return joinProblems(idErr, err)
	}
	var p Problems
	f := fields{obj: body, loc: []any{"body"}, p: &p}
	label, hasLabel, _ := f.Name("label", false, true, 0, 64)
	_, labelSent := body["label"]
	var active, hasActive, isDefault, hasDefault bool
	if v, sent := body["is_active"]; sent && v != nil {
		active, hasActive, _ = f.Bool("is_active", false)
	}
	if v, sent := body["is_default_caller_id"]; sent && v != nil {
		isDefault, hasDefault, _ = f.Bool("is_default_caller_id", false)
	}
	if err := joinProblems(idErr, p.Err()); err != nil {
		return err
	}
	out, err := s.db.UpdatePhoneNumber(r.Context(), org, ids[0], ids[1], func(n *store.PhoneNumber) {
		if labelSent {
			n.Label = nil
			if hasLabel {
				n.Label = &label
			}
		}
		if hasActive {
			n.IsActive = active
		}
		if hasDefault {
			n.IsDefaultCallerID = isDefault
		}
	})
	if err != nil {
		return err
	}
	s.callerIDsChanged(ids[0])
	writeJSON(w, http.StatusOK, phoneNumberOut(out))
	return nil
}

func (s *Server) deletePhoneNumber(w http.ResponseWriter, r *http.Request, ps httprouter.Params, org int64) error {
	ids, err := pathIDs(ps, "config_id", "phone_number_id")
	if err != nil {
		return err
	}
	if err := s.db.DeletePhoneNumber(r.Context(), org, ids[0], ids[1]); err != nil {
		return err
	}
	s.callerIDsChanged(ids[0])
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// callerIDsChanged tells the dialer that configuration configID's numbers
// changed: a running campaign waiting for a caller id dials again at once.
func (s *Server) callerIDsChanged(configID int64) {
	if s.dialer != nil {
		s.dialer.CallerIDsChanged(configID)
	}
}
