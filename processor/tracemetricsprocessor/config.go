package tracemetricsprocessor

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Config turns trace metrics on and bounds their series. Its YAML keys
// live under `trace_metrics:` in weft.yaml.
type Config struct {
	// Enabled counts finished calls into the weft_app_* metrics. Off by
	// default: the metrics name tenants' projects and operations.
	Enabled bool `yaml:"enabled"`
	// MaxProjects is the most projects with series of their own; calls of
	// further projects are counted under project="other". Default 100.
	MaxProjects int `yaml:"max_projects"`
	// MaxOpsPerProject is the most op names with series of their own in
	// one project; calls of further ops are counted under op="other".
	// Default 50.
	MaxOpsPerProject int `yaml:"max_ops_per_project"`
	// MaxModelsPerProject is the most models with token and cost series
	// of their own in one project; further models are counted under
	// model="other". Default 20.
	MaxModelsPerProject int `yaml:"max_models_per_project"`
	// MaxOpenCalls is how many calls are remembered between their start
	// and their end (for the op name and duration of an end that comes in
	// a later batch) and after their end (so a retried end is not counted
	// twice). Default 50000, about 10 MB.
	MaxOpenCalls int `yaml:"max_open_calls"`
	// OTLPEndpoint pushes the same metrics as OTLP/HTTP metrics to this
	// URL, e.g. http://collector:4318/v1/metrics (a URL without a path
	// gets /v1/metrics). Empty: no push.
	OTLPEndpoint string `yaml:"otlp_endpoint"`
	// OTLPInterval is the time between pushes. Default 60s.
	OTLPInterval time.Duration `yaml:"otlp_interval"`
	// OTLPTimeout bounds one push. Default 10s.
	OTLPTimeout time.Duration `yaml:"otlp_timeout"`
	// OTLPHeaders are sent with every push (e.g. an authorization header).
	OTLPHeaders map[string]string `yaml:"otlp_headers"`
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		MaxProjects: 100, MaxOpsPerProject: 50, MaxModelsPerProject: 20, MaxOpenCalls: 50_000,
		OTLPInterval: time.Minute, OTLPTimeout: 10 * time.Second,
	}
}

// Validate reports settings that cannot work, naming the key.
func (c Config) Validate() error {
	var errs []error
	bound := func(key string, v, max int) {
		if v < 1 || v > max {
			errs = append(errs, fmt.Errorf("trace_metrics.%s: %d is outside 1..%d", key, v, max))
		}
	}
	bound("max_projects", c.MaxProjects, 100_000)
	bound("max_ops_per_project", c.MaxOpsPerProject, 10_000)
	bound("max_models_per_project", c.MaxModelsPerProject, 10_000)
	bound("max_open_calls", c.MaxOpenCalls, 10_000_000)
	if c.OTLPEndpoint != "" {
		if _, err := c.endpointURL(); err != nil {
			errs = append(errs, err)
		}
		if c.OTLPInterval < time.Second {
			errs = append(errs, errors.New("trace_metrics.otlp_interval: must be at least 1s"))
		}
		if c.OTLPTimeout <= 0 {
			errs = append(errs, errors.New("trace_metrics.otlp_timeout: must be positive"))
		}
		for k := range c.OTLPHeaders {
			if k == "" || strings.ContainsAny(k, " \t\r\n:") {
				errs = append(errs, fmt.Errorf("trace_metrics.otlp_headers: %q is not a header name", k))
			}
		}
	}
	return errors.Join(errs...)
}

// endpointURL is the push URL, with the OTLP metrics path when the
// configured one has none.
func (c Config) endpointURL() (string, error) {
	u, err := url.Parse(c.OTLPEndpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("trace_metrics.otlp_endpoint: %q is not an http(s) URL such as http://collector:4318/v1/metrics", c.OTLPEndpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/metrics"
	}
	return u.String(), nil
}
