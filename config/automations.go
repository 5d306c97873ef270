package config

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"time"
)

// Automations configures webhook automations: where deliveries may go,
// how they are retried, and the key that seals secrets.
type Automations struct {
	// AllowedNetworks lists networks (CIDR or single addresses) webhooks
	// may reach although they are private, loopback or link-local, e.g.
	// [127.0.0.0/8] for a receiver on the same host. Default none.
	AllowedNetworks []string `yaml:"allowed_networks"`
	// Retry is the backoff schedule of failed deliveries.
	Retry AutomationsRetry `yaml:"retry"`
	// RequestTimeout bounds one attempt: connect, TLS, answer. 15s.
	RequestTimeout time.Duration `yaml:"request_timeout"`
	// MaxResponseBytes is how much of a receiver's answer is read. 64 KiB.
	MaxResponseBytes int64 `yaml:"max_response_bytes"`
	// MaxPayloadBytes caps a rendered payload. 256 KiB.
	MaxPayloadBytes int `yaml:"max_payload_bytes"`
	// Workers bounds the deliveries attempted at once per process. 16.
	Workers int `yaml:"workers"`
	// DisableAfter disables a webhook whose deliveries have all failed
	// for this long. 120h.
	DisableAfter time.Duration `yaml:"disable_after"`
	// PollInterval is how often due retries and events recorded by other
	// processes are looked for. 1s.
	PollInterval time.Duration `yaml:"poll_interval"`
	// SecretsKeyFile holds the key that seals secrets (base64 of 32
	// bytes), created with mode 0600 when missing; WEFT_SECRETS_KEY
	// overrides it. Default <data_dir>/secrets.key.
	SecretsKeyFile string `yaml:"secrets_key_file"`
	// EventsTopic carries artifact events from the API roles to the
	// process role when kafka_brokers is set. Default
	// weft.automation-events.
	EventsTopic string `yaml:"events_topic"`
	// AlertInterval is how often CALL_ALERT conditions are evaluated
	// (by one process of a deployment). 60s; at least 1s.
	AlertInterval time.Duration `yaml:"alert_interval"`
	// PublicURL is the address users reach this server's UI at, which
	// alert payloads' calls_url starts with; without it the link is a
	// path. Default none.
	PublicURL string `yaml:"public_url"`
}

// AutomationsRetry is an exponential backoff with jitter: the pause
// doubles from InitialInterval up to MaxInterval, and a delivery is given
// up MaxElapsed after its first attempt.
type AutomationsRetry struct {
	InitialInterval time.Duration `yaml:"initial_interval"`
	MaxInterval     time.Duration `yaml:"max_interval"`
	MaxElapsed      time.Duration `yaml:"max_elapsed"`
}

// DefaultAutomations returns the documented defaults.
func DefaultAutomations() Automations {
	return Automations{
		Retry:          AutomationsRetry{InitialInterval: 5 * time.Second, MaxInterval: time.Hour, MaxElapsed: 72 * time.Hour},
		RequestTimeout: 15 * time.Second, MaxResponseBytes: 64 << 10, MaxPayloadBytes: 256 << 10,
		Workers: 16, DisableAfter: 120 * time.Hour, PollInterval: time.Second,
		EventsTopic: "weft.automation-events", AlertInterval: time.Minute,
	}
}

// Networks parses AllowedNetworks.
func (a Automations) Networks() ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(a.AllowedNetworks))
	for _, n := range a.AllowedNetworks {
		n = strings.TrimSpace(n)
		p, err := netip.ParsePrefix(n)
		if err != nil {
			addr, aerr := netip.ParseAddr(n)
			if aerr != nil {
				return nil, fmt.Errorf("automations.allowed_networks: %q is neither a CIDR prefix (10.0.0.0/8) nor an address", n)
			}
			p = netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// KeyFile is the secrets key file, in data_dir unless set.
func (c Config) KeyFile() string {
	if c.Automations.SecretsKeyFile != "" {
		return c.Automations.SecretsKeyFile
	}
	return filepath.Join(c.DataDir, "secrets.key")
}

func (a Automations) validate() []error {
	var errs []error
	if _, err := a.Networks(); err != nil {
		errs = append(errs, err)
	}
	r := a.Retry
	switch {
	case r.InitialInterval <= 0:
		errs = append(errs, fmt.Errorf("automations.retry.initial_interval: %s must be positive", r.InitialInterval))
	case r.MaxInterval < r.InitialInterval:
		errs = append(errs, fmt.Errorf("automations.retry.max_interval: %s must be at least initial_interval (%s)", r.MaxInterval, r.InitialInterval))
	case r.MaxElapsed < r.InitialInterval:
		errs = append(errs, fmt.Errorf("automations.retry.max_elapsed: %s must be at least initial_interval (%s)", r.MaxElapsed, r.InitialInterval))
	}
	for key, d := range map[string]time.Duration{"request_timeout": a.RequestTimeout, "disable_after": a.DisableAfter, "poll_interval": a.PollInterval} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("automations.%s: %s must be positive", key, d))
		}
	}
	if a.MaxResponseBytes < 1 || a.MaxPayloadBytes < 1024 || a.Workers < 1 {
		errs = append(errs, fmt.Errorf("automations: max_response_bytes and workers must be at least 1, max_payload_bytes at least 1024"))
	}
	if a.AlertInterval < time.Second {
		errs = append(errs, fmt.Errorf("automations.alert_interval: %s must be at least 1s", a.AlertInterval))
	}
	if a.PublicURL != "" && !strings.HasPrefix(a.PublicURL, "http://") && !strings.HasPrefix(a.PublicURL, "https://") {
		errs = append(errs, fmt.Errorf("automations.public_url: %q must start with http:// or https://", a.PublicURL))
	}
	if a.EventsTopic == "" {
		errs = append(errs, fmt.Errorf("automations.events_topic: must not be empty"))
	}
	return errs
}
