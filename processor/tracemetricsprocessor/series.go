package tracemetricsprocessor

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftdev/weft/pricing"
)

// Label values that stand for more than one project, op or model.
const (
	// otherLabel collects what is past a bound.
	otherLabel = "other"
	// unknownOp is the op of a call whose end came without its start:
	// the start was written to another process, or long enough before
	// that it was forgotten (trace_metrics.max_open_calls).
	unknownOp = "unknown"
)

// Metric names, as Prometheus scrapes them.
const (
	callsName    = "weft_app_calls_total"
	durationName = "weft_app_call_duration_seconds"
	tokensName   = "weft_app_tokens_total"
	costName     = "weft_app_cost_usd_total"
	overflowName = "weft_app_series_overflow_total"
)

// Token kinds (the kind label of weft_app_tokens_total). Input counts
// every prompt token, cached ones included; cache_read and
// cache_creation say how many of them were cached.
var tokenKinds = [...]string{"input", "output", "cache_read", "cache_creation"}

// bounds name what a call was counted past (the bound label of
// weft_app_series_overflow_total).
const (
	boundProjects = iota
	boundOps
	boundModels
	boundOpenCalls
	numBounds
)

var boundNames = [numBounds]string{"max_projects", "max_ops_per_project", "max_models_per_project", "max_open_calls"}

// durationBuckets span a cache hit to a long agent run.
var durationBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// families are the trace metrics' Prometheus families, on a registry of
// their own: they name tenants' projects, so they are served apart from
// weft's own metrics.
type families struct {
	registry *prometheus.Registry
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	tokens   *prometheus.CounterVec
	cost     *prometheus.CounterVec
	overflow [numBounds]prometheus.Counter
}

func newFamilies() *families {
	f := &families{
		registry: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: callsName,
			Help: "Finished calls stored, per project, op and status (success or error)."}, []string{"project", "op", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: durationName,
			Help: "Time from a finished call's start to its end, per project, op and status.", Buckets: durationBuckets},
			[]string{"project", "op", "status"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: tokensName,
			Help: "Tokens of finished calls' summary.usage, per project, model and kind (input, output, cache_read, cache_creation)."},
			[]string{"project", "model", "kind"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: costName,
			Help: "Cost in USD of finished calls' usage at the project's and the default prices, per project and model."},
			[]string{"project", "model"}),
	}
	overflow := prometheus.NewCounterVec(prometheus.CounterOpts{Name: overflowName,
		Help: "Finished calls counted under project, op or model \"other\" (or op \"unknown\") because a trace_metrics bound was reached."},
		[]string{"bound"})
	for i, name := range boundNames {
		f.overflow[i] = overflow.WithLabelValues(name)
	}
	f.registry.MustRegister(f.calls, f.duration, f.tokens, f.cost, overflow)
	return f
}

// series holds the label sets in use, within the configured bounds, with
// their Prometheus children, so counting a call costs map lookups rather
// than label hashing. It is not safe for concurrent use.
type series struct {
	f        *families
	cfg      Config
	projects map[string]*projectSeries
	other    *projectSeries // the projects past max_projects
}

type projectSeries struct {
	name   string
	ops    map[string]*opSeries
	models map[string]*modelSeries
	other  *opSeries    // ops past the bound
	others *modelSeries // models past the bound
}

// opSeries are one op's children, per status; nil until first used.
type opSeries struct {
	project, op string
	calls       [2]prometheus.Counter
	duration    [2]prometheus.Observer
}

// modelSeries are one model's children; nil until first used.
type modelSeries struct {
	project, model string
	tokens         [len(tokenKinds)]prometheus.Counter
	cost           prometheus.Counter
}

var statusNames = [2]string{"success", "error"}

func newSeries(f *families, cfg Config) *series {
	return &series{f: f, cfg: cfg, projects: map[string]*projectSeries{}}
}

func newProjectSeries(name string) *projectSeries {
	return &projectSeries{name: name, ops: map[string]*opSeries{}, models: map[string]*modelSeries{}}
}

// project returns the series of a project, or of "other" past the bound.
func (s *series) project(id string) *projectSeries {
	if p, ok := s.projects[id]; ok {
		return p
	}
	if len(s.projects) < s.cfg.MaxProjects {
		p := newProjectSeries(id)
		s.projects[id] = p
		return p
	}
	s.f.overflow[boundProjects].Inc()
	if s.other == nil {
		s.other = newProjectSeries(otherLabel)
	}
	return s.other
}

// op returns the series of an op in p, or of "other" past the bound.
func (s *series) op(p *projectSeries, name string) *opSeries {
	if o, ok := p.ops[name]; ok {
		return o
	}
	if len(p.ops) < s.cfg.MaxOpsPerProject {
		o := &opSeries{project: p.name, op: name}
		p.ops[name] = o
		return o
	}
	s.f.overflow[boundOps].Inc()
	if p.other == nil {
		p.other = &opSeries{project: p.name, op: otherLabel}
	}
	return p.other
}

// model returns the series of a model in p, or of "other" past the
// bound. The lookup with the key's bytes does not allocate.
func (s *series) model(p *projectSeries, name []byte) *modelSeries {
	if m, ok := p.models[string(name)]; ok {
		return m
	}
	if len(p.models) < s.cfg.MaxModelsPerProject {
		m := &modelSeries{project: p.name, model: string(name)}
		p.models[m.model] = m
		return m
	}
	s.f.overflow[boundModels].Inc()
	if p.others == nil {
		p.others = &modelSeries{project: p.name, model: otherLabel}
	}
	return p.others
}

// count records one finished call; seconds < 0 when its start is not
// known.
func (s *series) count(o *opSeries, failed bool, seconds float64) {
	st := 0
	if failed {
		st = 1
	}
	if o.calls[st] == nil {
		o.calls[st] = s.f.calls.WithLabelValues(o.project, o.op, statusNames[st])
	}
	o.calls[st].Inc()
	if seconds < 0 {
		return
	}
	if o.duration[st] == nil {
		o.duration[st] = s.f.duration.WithLabelValues(o.project, o.op, statusNames[st])
	}
	o.duration[st].Observe(seconds)
}

// use records one model's tokens and, when priced, cost.
func (s *series) use(m *modelSeries, t pricing.Tokens, cost float64, priced bool) {
	for k, n := range [len(tokenKinds)]int64{t.Prompt, t.Completion, t.CacheRead, t.CacheCreation} {
		if n <= 0 {
			continue
		}
		if m.tokens[k] == nil {
			m.tokens[k] = s.f.tokens.WithLabelValues(m.project, m.model, tokenKinds[k])
		}
		m.tokens[k].Add(float64(n))
	}
	if !priced || cost <= 0 {
		return
	}
	if m.cost == nil {
		m.cost = s.f.cost.WithLabelValues(m.project, m.model)
	}
	m.cost.Add(cost)
}

// opLabel is the op of a call as a label: a Weave op ref
// (weave:///entity/project/op/name:digest) counts by its name, so a new
// version of an op does not make new series; any other op name is kept
// as it is. It does not allocate.
func opLabel(opName string) string {
	const scheme = "weave:///"
	if !strings.HasPrefix(opName, scheme) {
		if opName == "" {
			return unknownOp
		}
		return opName
	}
	rest := opName[len(scheme):]
	i := strings.Index(rest, "/op/")
	if i < 0 {
		return opName
	}
	name := rest[i+len("/op/"):]
	if j := strings.LastIndexByte(name, ':'); j >= 0 {
		name = name[:j]
	}
	if name == "" {
		return opName
	}
	return name
}
