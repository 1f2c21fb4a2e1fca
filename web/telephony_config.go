package web

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
)

// This file validates the `config` union of a telephony configuration: the
// full form on create, the partial form on update, and renders stored
// credentials with their secrets masked.

var expectedTags = func() string {
	names := carrier.Names()
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "'" + n + "'"
	}
	return strings.Join(quoted, ", ")
}()

// configFields wraps a config object so that problems about the whole object
// echo it with every value that is sensitive for any provider masked.
func configFields(cf fields) fields {
	cf.echo = maskedConfig(cf.obj)
	return cf
}

// maskedConfig returns a copy of a config object with the value of every
// field that is sensitive for any provider masked (maskValue).
func maskedConfig(obj map[string]any) map[string]any {
	echo := make(map[string]any, len(obj))
	for k, v := range obj {
		if sensitiveAnywhere[k] {
			v = maskValue(v)
		}
		echo[k] = v
	}
	return echo
}

// maskedBody returns a copy of a telephony-configuration request body whose
// `config` object, when it is one, has its sensitive values masked: the
// echo of problems about the whole body (a missing name) must not carry a
// secret.
func maskedBody(body map[string]any) map[string]any {
	cfg, isObj := body["config"].(map[string]any)
	if !isObj {
		return body
	}
	echo := make(map[string]any, len(body))
	for k, v := range body {
		echo[k] = v
	}
	echo["config"] = maskedConfig(cfg)
	return echo
}

// maskValue hides a value sent in a sensitive field for echoing in a
// problem: a string is masked (carrier.Mask); any other non-null JSON value
// is masked as its JSON text, so a secret sent with the wrong type does not
// come back either.
func maskValue(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return carrier.Mask(x)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return "****"
		}
		return carrier.Mask(string(b))
	}
}

var sensitiveAnywhere = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range carrier.Specs() {
		for _, f := range s.Fields {
			if f.Sensitive {
				m[f.Name] = true
			}
		}
	}
	return m
}()

// configProvider reads the discriminator of a config object, recording
// union_tag_not_found / union_tag_invalid. ok is false on a problem.
func configProvider(cf fields) (carrier.Spec, bool) {
	v, has := cf.get("provider")
	if !has || v == nil {
		cf.p.Add(cf.loc, "union_tag_not_found", "Unable to extract tag using discriminator 'provider'", cf.echo,
			map[string]any{"discriminator": "'provider'"})
		return carrier.Spec{}, false
	}
	tag, _ := v.(string)
	spec, known := carrier.Lookup(tag)
	if !known {
		shown := tag
		if _, isStr := v.(string); !isStr {
			b, _ := json.Marshal(v)
			shown = string(b)
		}
		cf.p.Add(cf.loc, "union_tag_invalid",
			fmt.Sprintf("Input tag '%s' found using 'provider' does not match any of the expected tags: %s", shown, expectedTags),
			cf.echo, map[string]any{"discriminator": "'provider'", "tag": shown, "expected_tags": expectedTags})
		return carrier.Spec{}, false
	}
	return spec, true
}

// checkFromNumbers validates the ignored from_numbers field's type, as the
// schema declares it (an array of strings).
func checkFromNumbers(cf fields) {
	v, has := cf.get("from_numbers")
	if !has || v == nil {
		return
	}
	list, ok := v.([]any)
	if !ok {
		cf.p.Add(at(cf.loc, "from_numbers"), "list_type", "Input should be a valid list", v, nil)
		return
	}
	for i, item := range list {
		if _, isStr := item.(string); !isStr {
			cf.p.Add(at(cf.loc, "from_numbers", i), "string_type", "Input should be a valid string", item, nil)
		}
	}
}

// configField validates one sent field value; ok is false on a problem. The
// input of a problem about a sensitive field is masked.
func configField(cf fields, f carrier.Field) (any, bool) {
	if f.Sensitive {
		first := len(*cf.p)
		defer func() {
			for i := first; i < len(*cf.p); i++ {
				(*cf.p)[i].Input = maskValue((*cf.p)[i].Input)
			}
		}()
	}
	return checkConfigField(cf, f)
}

func checkConfigField(cf fields, f carrier.Field) (any, bool) {
	loc := at(cf.loc, f.Name)
	v := cf.obj[f.Name]
	if v == nil {
		if f.Required {
			cf.p.Add(loc, "string_type", "Input should be a valid string", v, nil)
			return nil, false
		}
		return f.Default, true
	}
	if f.Type == carrier.TypeBool {
		return checkBool(cf.p, loc, v)
	}
	minLen := 0
	if f.Required {
		minLen = 1
	}
	s, _, ok := checkString(cf.p, loc, v, minLen, 0)
	if !ok {
		return nil, false
	}
	if s == "" && !f.Required {
		return f.Default, true
	}
	if f.Check != nil {
		if err := f.Check(s); err != nil {
			cf.p.Add(loc, "value_error", "Value error, "+f.Name+" "+err.Error(), f.MaskedInput(s), map[string]any{"error": err.Error()})
			return nil, false
		}
	}
	return s, true
}

// newCredentials validates a full config object for create and returns the
// provider and credentials with defaults filled in.
func newCredentials(cf fields) (string, store.Credentials) {
	spec, ok := configProvider(cf)
	checkFromNumbers(cf)
	if !ok {
		return "", nil
	}
	creds := store.Credentials{}
	for _, f := range spec.Fields {
		if _, sent := cf.obj[f.Name]; !sent {
			if f.Required {
				cf.missing(f.Name)
			} else {
				creds[f.Name] = f.Default
			}
			continue
		}
		if v, ok := configField(cf, f); ok {
			creds[f.Name] = v
		}
	}
	return spec.Provider, creds
}

// mergeCredentials applies a partial config object to stored credentials of
// provider. Fields not sent keep their values; a sensitive field sent in its
// masked form keeps its value; null resets an optional field to its default.
func mergeCredentials(cf fields, provider string, stored store.Credentials) store.Credentials {
	if v, has := cf.get("provider"); has && v != provider {
		cf.p.Add(at(cf.loc, "provider"), "provider_immutable",
			fmt.Sprintf("Value error, the provider of a configuration cannot change (it is %q); create a new telephony configuration to use another provider", provider),
			v, map[string]any{"provider": provider})
	}
	checkFromNumbers(cf)
	spec, _ := carrier.Lookup(provider)
	out := store.Credentials{}
	for _, f := range spec.Fields {
		old, hadOld := stored[f.Name]
		if !hadOld {
			old = f.Default
		}
		v, sent := cf.obj[f.Name]
		if !sent {
			out[f.Name] = old
			continue
		}
		if oldStr, isStr := old.(string); f.Sensitive && isStr && oldStr != "" && v == carrier.Mask(oldStr) {
			out[f.Name] = old
			continue
		}
		if nv, ok := configField(cf, f); ok {
			out[f.Name] = nv
		}
	}
	return out
}

// maskedCredentials renders stored credentials for a response: every field
// of the provider, sensitive string values masked.
func maskedCredentials(provider string, c store.Credentials) map[string]any {
	spec, _ := carrier.Lookup(provider)
	out := make(map[string]any, len(spec.Fields))
	for _, f := range spec.Fields {
		v, has := c[f.Name]
		if !has {
			v = f.Default
		}
		if s, isStr := v.(string); isStr && f.Sensitive {
			v = carrier.Mask(s)
		}
		out[f.Name] = v
	}
	return out
}
