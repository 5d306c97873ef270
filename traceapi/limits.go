package traceapi

import (
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/wire"
)

// Option adjusts an API as one of this package's constructors builds it.
type Option func(*options)

type options struct {
	limits querylang.Limits
	budget Budget
	gate   *ReadGate // nil: the API's own
}

// QuerySettings is what WithQueryLimits takes: the query limits alone,
// or the whole queries section, limits and run-time budget.
type QuerySettings interface {
	querylang.Limits | Settings
}

// WithQueryLimits bounds the query documents ("query") and sort keys
// ("sort_by") the API passes to storage; a request over one of them is a
// 400 naming the limit and its setting, and never reaches storage.
// Without it (and for its zero fields) querylang.DefaultLimits apply.
// Given Settings, it also sets the Budget the API's store reads run
// under; without one, DefaultBudget applies. For its bounds on reads at
// once to hold across APIs, give them one gate (WithReadGate).
func WithQueryLimits[S QuerySettings](s S) Option {
	return func(o *options) {
		switch v := any(s).(type) {
		case querylang.Limits:
			o.limits = v
		case Settings:
			o.limits, o.budget = v.Limits, v.Budget
		}
	}
}

func applyOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// checkSort bounds a request's sort_by terms.
func checkSort(lim querylang.Limits, sortBy []wire.SortBy) error {
	if len(sortBy) == 0 {
		return nil
	}
	fields := make([]string, len(sortBy))
	for i, s := range sortBy {
		fields[i] = s.Field
	}
	return lim.CheckSort(fields)
}
