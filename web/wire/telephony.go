package wire

// TelephonyConfig is a telephony configuration as GET, POST and PUT
// /api/v1/organizations/telephony-configs/{id} answer it: Credentials has
// its secrets masked (API.md 2).
type TelephonyConfig struct {
	ID                int64          `json:"id"`
	Name              string         `json:"name"`
	Provider          string         `json:"provider"`
	IsDefaultOutbound bool           `json:"is_default_outbound"`
	Credentials       map[string]any `json:"credentials"`
	PhoneNumberCount  int64          `json:"phone_number_count"`
	CreatedAt         string         `json:"created_at"`
	UpdatedAt         string         `json:"updated_at"`
}

// TelephonyConfigItem is a configuration as the list answers it (no
// credentials).
type TelephonyConfigItem struct {
	ID                int64  `json:"id"`
	Name              string `json:"name"`
	Provider          string `json:"provider"`
	IsDefaultOutbound bool   `json:"is_default_outbound"`
	PhoneNumberCount  int64  `json:"phone_number_count"`
	CreatedAt         string `json:"created_at"`
	UpdatedAt         string `json:"updated_at"`
}

// TelephonyConfigList is the body of GET
// /api/v1/organizations/telephony-configs.
type TelephonyConfigList struct {
	Configurations []TelephonyConfigItem `json:"configurations"`
}

// PhoneNumber is one phone number of a configuration (docs/api.md 2.9).
type PhoneNumber struct {
	ID                       int64   `json:"id"`
	TelephonyConfigurationID int64   `json:"telephony_configuration_id"`
	Address                  string  `json:"address"`
	AddressNormalized        string  `json:"address_normalized"`
	AddressType              string  `json:"address_type"`
	CountryCode              *string `json:"country_code"`
	Label                    *string `json:"label"`
	IsActive                 bool    `json:"is_active"`
	IsDefaultCallerID        bool    `json:"is_default_caller_id"`
	CreatedAt                string  `json:"created_at"`
	UpdatedAt                string  `json:"updated_at"`
}

// PhoneNumberList is the body of GET
// /api/v1/organizations/telephony-configs/{id}/phone-numbers.
type PhoneNumberList struct {
	PhoneNumbers []PhoneNumber `json:"phone_numbers"`
}
