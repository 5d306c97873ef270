package config

import (
	"fmt"
	"strings"
	"time"
)

// Retention says how long calls are kept, per project, counted from their
// start. ClickHouse expires them with a TTL on expire_at; the embedded
// store deletes them every ten minutes.
type Retention struct {
	// Default applies to projects not listed; 0 keeps calls forever.
	Default time.Duration `yaml:"default"`
	// Projects maps "entity/project" to its retention; 0 keeps forever.
	Projects map[string]time.Duration `yaml:"projects"`
}

// For returns the retention of a project.
func (r Retention) For(projectID string) time.Duration {
	if d, ok := r.Projects[projectID]; ok {
		return d
	}
	return r.Default
}

func (r Retention) validate() []error {
	var errs []error
	if r.Default < 0 {
		errs = append(errs, fmt.Errorf("retention.default: %s must not be negative", r.Default))
	}
	for p, d := range r.Projects {
		if d < 0 {
			errs = append(errs, fmt.Errorf("retention.projects[%q]: %s must not be negative", p, d))
		}
		if e, proj, ok := strings.Cut(p, "/"); !ok || e == "" || proj == "" {
			errs = append(errs, fmt.Errorf("retention.projects: %q is not entity/project", p))
		}
	}
	return errs
}
