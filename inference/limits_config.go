package inference

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// anyScope in a limit's project or key applies it to every project, or
// every key, that has no limit of its own.
const anyScope = "*"

// LimitRule is a rate limit of one project or one API key (exactly one
// of Project and Key): requests and tokens admitted per minute, counted
// over every replica of the gateway. Zero leaves that dimension
// unlimited.
type LimitRule struct {
	Project           string `yaml:"project" json:"project,omitempty"`
	Key               string `yaml:"key" json:"key,omitempty"`
	RequestsPerMinute int64  `yaml:"requests_per_minute" json:"requests_per_minute,omitempty"`
	TokensPerMinute   int64  `yaml:"tokens_per_minute" json:"tokens_per_minute,omitempty"`
}

// BudgetRule caps a project's spend per UTC day and/or month, in US
// dollars priced as include_costs prices calls; with Key, the spend of
// that API key's calls in the project. Name is what refusals call it.
type BudgetRule struct {
	Name        string  `yaml:"name" json:"name,omitempty"`
	Project     string  `yaml:"project" json:"project"`
	Key         string  `yaml:"key" json:"key,omitempty"`
	USDPerDay   float64 `yaml:"usd_per_day" json:"usd_per_day,omitempty"`
	USDPerMonth float64 `yaml:"usd_per_month" json:"usd_per_month,omitempty"`
}

// LimitSet is the rate limits and budgets in force: the configuration
// file's, or those the admin API stored.
type LimitSet struct {
	Limits  []LimitRule  `json:"limits"`
	Budgets []BudgetRule `json:"budgets"`
}

// Bounds of a limit set, so the admin API cannot make the gateway hold
// unbounded rules.
const (
	maxLimitRules  = 10_000
	maxBudgetRules = 1_000
	maxScopeName   = 256
)

// validate reports every rule that cannot work, naming it by its path
// under prefix ("inference." in the configuration file, "" in an admin
// API body).
func (s LimitSet) validate(prefix string) []error {
	var errs []error
	if len(s.Limits) > maxLimitRules {
		errs = append(errs, fmt.Errorf("%slimits: %d rules; at most %d", prefix, len(s.Limits), maxLimitRules))
	}
	if len(s.Budgets) > maxBudgetRules {
		errs = append(errs, fmt.Errorf("%sbudgets: %d rules; at most %d", prefix, len(s.Budgets), maxBudgetRules))
	}
	seen := map[string]int{}
	for i, l := range s.Limits {
		at := fmt.Sprintf("%slimits[%d]", prefix, i)
		errs = append(errs, checkScope(at, l.Project, l.Key, true)...)
		if l.RequestsPerMinute < 0 || l.TokensPerMinute < 0 || l.RequestsPerMinute == 0 && l.TokensPerMinute == 0 {
			errs = append(errs, fmt.Errorf("%s: set requests_per_minute and/or tokens_per_minute to a positive number (got %d and %d)",
				at, l.RequestsPerMinute, l.TokensPerMinute))
		}
		id := l.Project + "\x00" + l.Key
		if j, dup := seen[id]; dup {
			errs = append(errs, fmt.Errorf("%s: the same project or key as %slimits[%d]; merge them into one rule", at, prefix, j))
		}
		seen[id] = i
	}
	for i, b := range s.Budgets {
		at := fmt.Sprintf("%sbudgets[%d]", prefix, i)
		if b.Project == "" {
			errs = append(errs, fmt.Errorf("%s.project: required: the entity/project whose spend is capped", at))
		} else {
			errs = append(errs, checkScope(at, b.Project, b.Key, false)...)
		}
		for _, v := range []struct {
			key string
			usd float64
		}{{"usd_per_day", b.USDPerDay}, {"usd_per_month", b.USDPerMonth}} {
			if v.usd < 0 || math.IsNaN(v.usd) || math.IsInf(v.usd, 0) {
				errs = append(errs, fmt.Errorf("%s.%s: %v must be a positive amount of US dollars", at, v.key, v.usd))
			}
		}
		if b.USDPerDay == 0 && b.USDPerMonth == 0 {
			errs = append(errs, fmt.Errorf("%s: set usd_per_day and/or usd_per_month", at))
		}
		if len(b.Name) > maxScopeName {
			errs = append(errs, fmt.Errorf("%s.name: %d characters; at most %d", at, len(b.Name), maxScopeName))
		}
	}
	return errs
}

// checkScope checks a rule's project and key; a limit names exactly one,
// a budget a project and perhaps a key.
func checkScope(at, project, key string, exactlyOne bool) []error {
	var errs []error
	if exactlyOne && (project == "") == (key == "") {
		errs = append(errs, fmt.Errorf("%s: name exactly one of project (entity/project, or %q for every project) and key (an API key id, or %q for every key)",
			at, anyScope, anyScope))
	}
	if project != "" && project != anyScope {
		if e, p, ok := strings.Cut(project, "/"); !ok || e == "" || p == "" || strings.Contains(p, "/") {
			errs = append(errs, fmt.Errorf("%s.project: %q is not entity/project", at, project))
		}
	}
	if !exactlyOne && (project == anyScope || key == anyScope) {
		errs = append(errs, fmt.Errorf("%s: a budget names one project (and perhaps one key), not %q", at, anyScope))
	}
	for _, v := range []struct{ field, val string }{{"project", project}, {"key", key}} {
		if len(v.val) > maxScopeName {
			errs = append(errs, fmt.Errorf("%s.%s: %d characters; at most %d", at, v.field, len(v.val), maxScopeName))
		}
	}
	return errs
}

// validateLimits checks the configuration file's limits and budgets and
// the intervals that share them.
func (c Config) validateLimits() []error {
	errs := LimitSet{Limits: c.Limits, Budgets: c.Budgets}.validate("inference.")
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"limits_sync_interval", c.LimitsSyncInterval}, {"budgets_interval", c.BudgetsInterval}} {
		if d.v < 10*time.Millisecond {
			errs = append(errs, fmt.Errorf("inference.%s: %s must be at least 10ms", d.key, d.v))
		}
	}
	return errs
}
