package phone

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"github.com/nyaruka/phonenumbers"
)

// nonGeoRegion is libphonenumber's region code for non-geographical entities
// (country calling codes such as +800 that belong to no territory).
const nonGeoRegion = "001"

// plan is one territory's libphonenumber metadata in the precompiled form the
// fast path uses: every regular expression the parse and validation steps run
// is a digitMatcher (or, where capture groups are needed, a regexp compiled
// from exactly the string libphonenumber compiles). Plans are built on first
// use and never change afterwards.
type plan struct {
	id       string
	cc       int
	ccPrefix string // strconv.Itoa(cc)

	general desc
	// others holds every type description other than general and mobile;
	// a valid number matches general and one of these (or mobile, below).
	others          []desc
	mobile          desc
	sameMobileFixed bool

	leading *digitMatcher // "^(?:leadingDigits)", nil when the territory has none

	npfp      *regexp.Regexp // "^(?:nationalPrefixForParsing)", nil when none
	npfpGate  *digitMatcher  // the same pattern as a digitMatcher
	transform string         // national prefix transform rule

	idd     *regexp.Regexp // international prefix, compiled as libphonenumber does
	iddGate *digitMatcher  // "does a match of idd start at offset 0?"

	lengths   []int32 // general possible lengths
	localOnly []int32 // general local-only lengths
}

// desc is one number-type description: possible lengths and a full-match
// pattern.
type desc struct {
	lengths []int32
	pattern *digitMatcher // "^(?:nationalNumberPattern)$"
}

// matches mirrors libphonenumber's isNumberMatchingDesc.
func (d *desc) matches(nsn string) bool {
	if len(d.lengths) > 0 {
		n := int32(len(nsn))
		found := false
		for _, l := range d.lengths {
			if l == n {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return d.pattern.match(nsn)
}

// typeValid mirrors libphonenumber's getNumberTypeHelper(nsn) != UNKNOWN.
func (p *plan) typeValid(nsn string) bool {
	if !p.general.matches(nsn) {
		return false
	}
	for i := range p.others {
		if p.others[i].matches(nsn) {
			return true
		}
	}
	return !p.sameMobileFixed && p.mobile.matches(nsn)
}

// lengthResult is libphonenumber's ValidationResult, reduced to what parsing
// looks at.
type lengthResult int

const (
	lengthPossible lengthResult = iota
	lengthLocalOnly
	lengthTooShort
	lengthTooLong
	lengthInvalid
)

// testLength mirrors libphonenumber's testNumberLength(number, metadata,
// UNKNOWN).
func (p *plan) testLength(number string) lengthResult {
	if p.lengths[0] == -1 {
		return lengthInvalid
	}
	n := int32(len(number))
	for _, l := range p.localOnly {
		if l == n {
			return lengthLocalOnly
		}
	}
	switch {
	case p.lengths[0] == n:
		return lengthPossible
	case p.lengths[0] > n:
		return lengthTooShort
	case p.lengths[len(p.lengths)-1] < n:
		return lengthTooLong
	}
	for _, l := range p.lengths[1:] {
		if l == n {
			return lengthPossible
		}
	}
	return lengthInvalid
}

// stripNationalPrefix mirrors libphonenumber's
// maybeStripNationalPrefixAndCarrierCode (without the carrier code). number is
// digits only; ok is false when the result would not be digits only, which the
// fast path treats as "unsure".
func (p *plan) stripNationalPrefix(number string) (out string, ok bool) {
	if len(number) == 0 || p.npfp == nil || !p.npfpGate.match(number) {
		return number, true
	}
	viableOriginal := p.general.pattern.match(number)
	groups := p.npfp.FindStringSubmatchIndex(number)
	if groups == nil {
		return "", false // cannot happen: the gate matched
	}
	numGroups := len(groups)/2 - 1
	if p.transform == "" || groups[numGroups*2] < 0 {
		rest := number[groups[1]:]
		if viableOriginal && !p.general.pattern.match(rest) {
			return number, true
		}
		return rest, true
	}
	transformed := p.npfp.ReplaceAllString(number, p.transform)
	if !allDigits(transformed) {
		return "", false
	}
	if viableOriginal && !p.general.pattern.match(transformed) {
		return number, true
	}
	return transformed, true
}

// planEntry builds its plan once, on first use.
type planEntry struct {
	md   *phonenumbers.PhoneMetadata
	once sync.Once
	plan *plan
	err  error
}

func (e *planEntry) get() (*plan, error) {
	e.once.Do(func() { e.plan, e.err = compilePlan(e.md) })
	return e.plan, e.err
}

// registry indexes the metadata libphonenumber loaded at init.
type registry struct {
	regions      map[string]*planEntry // by region code, supported regions only
	nonGeo       map[int]*planEntry    // by country calling code
	callingCodes map[int]bool          // every valid country calling code
	err          error
}

var (
	registryOnce sync.Once
	reg          registry
)

// loadRegistry returns the registry, building the index (not the plans) on
// first use.
func loadRegistry() *registry {
	registryOnce.Do(func() {
		coll, err := phonenumbers.MetadataCollection()
		if err != nil {
			reg.err = fmt.Errorf("load phone metadata: %w", err)
			return
		}
		supported := phonenumbers.GetSupportedRegions()
		reg.regions = make(map[string]*planEntry, len(supported))
		reg.nonGeo = make(map[int]*planEntry)
		for _, md := range coll.GetMetadata() {
			if md.GetId() == nonGeoRegion {
				reg.nonGeo[int(md.GetCountryCode())] = &planEntry{md: md}
			} else if supported[md.GetId()] {
				reg.regions[md.GetId()] = &planEntry{md: md}
			}
		}
		reg.callingCodes = phonenumbers.GetSupportedCallingCodes()
	})
	return &reg
}

// regionPlan returns the plan of a supported region. supported reports whether
// libphonenumber knows the region; p is nil when it is unsupported or its plan
// could not be built (the caller then falls back to libphonenumber).
func regionPlan(region string) (p *plan, supported bool) {
	r := loadRegistry()
	if r.err != nil {
		return nil, phonenumbers.GetSupportedRegions()[region]
	}
	e, ok := r.regions[region]
	if !ok {
		return nil, phonenumbers.GetSupportedRegions()[region]
	}
	p, err := e.get()
	if err != nil {
		return nil, true
	}
	return p, true
}

// planFor mirrors libphonenumber's getMetadataForRegionOrCallingCode.
func planFor(cc int, region string) *plan {
	r := loadRegistry()
	if r.err != nil {
		return nil
	}
	var e *planEntry
	if region == nonGeoRegion {
		e = r.nonGeo[cc]
	} else {
		e = r.regions[region]
	}
	if e == nil {
		return nil
	}
	p, err := e.get()
	if err != nil {
		return nil
	}
	return p
}

// compilePlan builds a plan from one territory's metadata.
func compilePlan(md *phonenumbers.PhoneMetadata) (*plan, error) {
	p := &plan{
		id:              md.GetId(),
		cc:              int(md.GetCountryCode()),
		sameMobileFixed: md.GetSameMobileAndFixedLinePattern(),
		transform:       md.GetNationalPrefixTransformRule(),
	}
	p.ccPrefix = strconv.Itoa(p.cc)
	gd := md.GetGeneralDesc()
	if gd == nil || len(gd.GetPossibleLength()) == 0 {
		return nil, fmt.Errorf("region %s: no general possible lengths", p.id)
	}
	p.lengths = gd.GetPossibleLength()
	p.localOnly = gd.GetPossibleLengthLocalOnly()

	var err error
	if p.general, err = compileDesc(gd); err != nil {
		return nil, fmt.Errorf("region %s: %w", p.id, err)
	}
	if p.mobile, err = compileDesc(md.GetMobile()); err != nil {
		return nil, fmt.Errorf("region %s: %w", p.id, err)
	}
	// Fixed line first: it and mobile are by far the most common types.
	for _, d := range []*phonenumbers.PhoneNumberDesc{
		md.GetFixedLine(), md.GetPremiumRate(), md.GetTollFree(), md.GetSharedCost(),
		md.GetVoip(), md.GetPersonalNumber(), md.GetPager(), md.GetUan(), md.GetVoicemail(),
	} {
		c, err := compileDesc(d)
		if err != nil {
			return nil, fmt.Errorf("region %s: %w", p.id, err)
		}
		p.others = append(p.others, c)
	}
	if ld := md.GetLeadingDigits(); ld != "" {
		if p.leading, err = newDigitMatcher(`^(?:`+ld+`)`, false); err != nil {
			return nil, fmt.Errorf("region %s leading digits: %w", p.id, err)
		}
	}
	if np := md.GetNationalPrefixForParsing(); np != "" {
		pat := `^(?:` + np + `)`
		if p.npfp, err = regexp.Compile(pat); err != nil {
			return nil, fmt.Errorf("region %s national prefix: %w", p.id, err)
		}
		if p.npfpGate, err = newDigitMatcher(pat, false); err != nil {
			return nil, fmt.Errorf("region %s national prefix: %w", p.id, err)
		}
	}
	idd := md.GetInternationalPrefix()
	if p.idd, err = regexp.Compile(idd); err != nil {
		return nil, fmt.Errorf("region %s international prefix: %w", p.id, err)
	}
	if p.iddGate, err = newDigitMatcher(idd, true); err != nil {
		return nil, fmt.Errorf("region %s international prefix: %w", p.id, err)
	}
	return p, nil
}

// compileDesc compiles one number-type description. A missing description
// (libphonenumber never has one) is compiled as the empty pattern, which
// matches no national number.
func compileDesc(d *phonenumbers.PhoneNumberDesc) (desc, error) {
	m, err := newDigitMatcher(`^(?:`+d.GetNationalNumberPattern()+`)$`, false)
	if err != nil {
		return desc{}, err
	}
	var lengths []int32
	if d != nil {
		lengths = d.GetPossibleLength()
	}
	return desc{lengths: lengths, pattern: m}, nil
}

// allDigits reports whether s consists only of ASCII digits.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
