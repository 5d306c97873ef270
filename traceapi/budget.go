package traceapi

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage/querylang"
)

// Settings is the configuration's queries section: the limits a query is
// checked against before it reaches the store, and the budget every store
// read of this package's APIs runs under. Errors name its keys under
// "queries" (querylang.SettingsKey).
type Settings struct {
	querylang.Limits `yaml:",inline"`
	Budget           `yaml:",inline"`
}

// DefaultSettings returns Settings with every default set.
func DefaultSettings() Settings {
	return Settings{Limits: querylang.DefaultLimits(), Budget: DefaultBudget()}
}

// Validate rejects negative limits and a budget that cannot work, naming
// each setting.
func (s Settings) Validate() error {
	return errors.Join(s.Limits.Validate(), s.Budget.Validate())
}

// Defaults of Budget. A Weave UI page runs a handful of reads at once,
// each in milliseconds to a second on a sizeable project; the defaults
// leave it all of that while no key holds more than half the store.
const (
	DefaultMaxDuration   = 30 * time.Second
	DefaultMaxConcurrent = 8
	DefaultMaxWait       = 5 * time.Second
)

// Budget bounds, at run time, the store reads this package's APIs start:
// calls, threads, aggregates, projects, objects, refs, tables, feedback,
// costs and file stats (writes, file uploads and downloads are not
// bounded here). Querylang's Limits bound a query's shape before it runs;
// a query within them can still be expensive on a large project, and the
// store's memory and threads are shared by every tenant, its writes and
// its checkpoints. A zero field takes its default.
type Budget struct {
	// MaxDuration bounds the store's work for one read: the whole request,
	// or for a stream (/calls/stream_query, /threads/stream_query) each
	// stretch of it between two lines sent, which is one page of up to
	// 10,000 calls with their extras; the time the client takes to read
	// the lines does not count. Past it the store's statement is
	// interrupted and the read answered 503 with Retry-After and a reason
	// naming this setting; a stream already started is broken off. 30s.
	MaxDuration time.Duration `yaml:"max_duration"`
	// MaxConcurrent is how many reads run on the store at once in this
	// process; more wait for one to end. 8.
	MaxConcurrent int `yaml:"max_concurrent"`
	// MaxConcurrentPerKey is how many of them one API key may run at
	// once; its next waits for one of its own to end. 0 (the default):
	// half of MaxConcurrent, at least 1.
	MaxConcurrentPerKey int `yaml:"max_concurrent_per_key"`
	// MaxWait bounds the wait for a turn: past it a read is answered 429
	// with Retry-After when its key held its share, else 503. 5s.
	MaxWait time.Duration `yaml:"max_wait"`
}

// The YAML keys of Budget under querylang.SettingsKey.
const (
	keyMaxDuration   = "max_duration"
	keyMaxConcurrent = "max_concurrent"
	keyPerKey        = "max_concurrent_per_key"
	keyMaxWait       = "max_wait"
)

// setting is the full name of a key: "queries.max_duration".
func setting(key string) string { return querylang.SettingsKey + "." + key }

// overBudget is a read stopped or refused at the budget's key: answered
// with status and msg as its reason, and the limit and its setting named
// beside it ("limit": "max_duration", "setting": "queries.max_duration").
func overBudget(status int, key, msg string) error {
	return &httpapi.StatusError{Status: status, Msg: msg, Extra: map[string]any{"limit": key, "setting": setting(key)}}
}

// DefaultBudget returns Budget with every default set.
func DefaultBudget() Budget {
	return Budget{MaxDuration: DefaultMaxDuration, MaxConcurrent: DefaultMaxConcurrent, MaxWait: DefaultMaxWait}
}

// Validate rejects negative fields and a key's share larger than the
// whole, naming each setting; zero means "use the default".
func (b Budget) Validate() error {
	var errs []error
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{keyMaxDuration, b.MaxDuration}, {keyMaxWait, b.MaxWait}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("%s: %s must not be negative (0 takes the default)", setting(d.key), d.v))
		}
	}
	for _, n := range []struct {
		key string
		v   int
	}{{keyMaxConcurrent, b.MaxConcurrent}, {keyPerKey, b.MaxConcurrentPerKey}} {
		if n.v < 0 {
			errs = append(errs, fmt.Errorf("%s: %d must not be negative (0 takes the default)", setting(n.key), n.v))
		}
	}
	if d := b.withDefaults(); b.MaxConcurrentPerKey > d.MaxConcurrent {
		errs = append(errs, fmt.Errorf("%s: %d is more than %s (%d): one key's share must fit in the whole",
			setting(keyPerKey), b.MaxConcurrentPerKey, setting(keyMaxConcurrent), d.MaxConcurrent))
	}
	return errors.Join(errs...)
}

// withDefaults fills zero (and, defensively, negative) fields.
func (b Budget) withDefaults() Budget {
	if b.MaxDuration <= 0 {
		b.MaxDuration = DefaultMaxDuration
	}
	if b.MaxConcurrent <= 0 {
		b.MaxConcurrent = DefaultMaxConcurrent
	}
	if b.MaxConcurrentPerKey <= 0 {
		b.MaxConcurrentPerKey = max(1, b.MaxConcurrent/2)
	}
	b.MaxConcurrentPerKey = min(b.MaxConcurrentPerKey, b.MaxConcurrent)
	if b.MaxWait <= 0 {
		b.MaxWait = DefaultMaxWait
	}
	return b
}

// readBudget runs an API's store reads within a Budget: a turn at the
// process's gate, then a deadline.
type readBudget struct {
	b      Budget // defaults filled
	gate   *gate
	logger *slog.Logger
}

func newReadBudget(o options, logger *slog.Logger) *readBudget {
	b := o.budget.withDefaults()
	g := o.gate
	if g == nil {
		g = NewReadGate(b)
	}
	return &readBudget{b: b, gate: g.g, logger: logger}
}

// json bounds a JSON read handler: it runs once its key and the store
// have a turn for it, under MaxDuration, and a store failure it returns
// is answered as explain says. The answer is encoded after the turn ends.
func (rb *readBudget) json(h httpapi.BodyHandler) httpapi.BodyHandler {
	return func(r *http.Request, body []byte) (any, error) {
		run, err := rb.start(r)
		if err != nil {
			return nil, err
		}
		defer run.end()
		v, err := h(r.WithContext(run.ctx), body)
		if err != nil {
			return nil, run.explain(err)
		}
		return v, nil
	}
}

// errRanPast is the cause a read's context is cancelled with when it ran
// past MaxDuration.
var errRanPast = errors.New("the read ran past its time budget")

// readRun is one read holding its turn: the store's calls take ctx, which
// ends MaxDuration after the store started working on it, counting only
// the time the read is not handing a result to its client (meter).
type readRun struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	// timer cancels ctx once the store worked MaxDuration without
	// handing over a line; meter stops it while a line is written.
	timer   *time.Timer
	limit   time.Duration
	release func()
	logger  *slog.Logger
	r       *http.Request
	logged  bool
}

// start waits for r's turn (its key's share and the store's) and starts
// the read's clock. Call end when the read is over.
func (rb *readBudget) start(r *http.Request) (*readRun, error) {
	release, err := rb.gate.acquire(r.Context(), callerKey(r.Context()))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	run := &readRun{ctx: ctx, cancel: cancel, limit: rb.b.MaxDuration, release: release, logger: rb.logger, r: r}
	run.timer = time.AfterFunc(rb.b.MaxDuration, func() { cancel(errRanPast) })
	return run, nil
}

// end stops the clock and gives the turn back.
func (run *readRun) end() {
	run.timer.Stop()
	run.cancel(context.Canceled)
	run.release()
}

// explain answers a failed read: one that ran past MaxDuration is a 503
// naming the setting, whatever error the interrupted store returned; a
// store that ran out of memory for it is a 503 saying so (the memory is
// shared: the same read may pass once others are done); anything else is
// left as it is. This is where the read API maps store failures of
// budgeted reads; httpapi.WriteError adds Retry-After to both 503s.
func (run *readRun) explain(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(context.Cause(run.ctx), errRanPast) {
		if !run.logged && run.logger != nil {
			run.logged = true
			run.logger.Info("a read stopped at its time budget; the client got 503 asking it to narrow the query; raise the setting only if such reads are expected", "path", run.r.URL.Path,
				"key", callerKey(run.r.Context()), "setting", setting(keyMaxDuration), "limit", run.limit)
		}
		return overBudget(http.StatusServiceUnavailable, keyMaxDuration, fmt.Sprintf(
			"the query ran past %s (%s); narrow it with a filter or a time range", setting(keyMaxDuration), run.limit))
	}
	if storeOutOfMemory(err) {
		return &httpapi.StatusError{Status: http.StatusServiceUnavailable, Msg: "the store ran out of memory running " +
			"this query (Out of Memory Error); its memory is shared by every query: narrow the query with a filter " +
			"or a time range, or retry"}
	}
	return err
}

// storeOutOfMemory recognises a store's out-of-memory failure by its
// text, the one thing that crosses the storage contract unchanged:
// DuckDB's error class ("Out of Memory Error: failed to allocate ...")
// and ClickHouse's error name.
func storeOutOfMemory(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Out of Memory Error") || strings.Contains(msg, "MEMORY_LIMIT_EXCEEDED")
}

// meter counts against MaxDuration only the store's share of a stream:
// the clock stops while a line is handed to the client and restarts
// after, so each stretch of store work between two lines (a page's
// query, a batch's extras) has MaxDuration, and a client that reads
// slowly costs the store nothing. Errors are explained.
func (run *readRun) meter(items iter.Seq2[any, error]) iter.Seq2[any, error] {
	return func(yield func(any, error) bool) {
		for v, err := range items {
			run.timer.Stop()
			ok := yield(v, run.explain(err))
			run.timer.Reset(run.limit)
			if !ok {
				return
			}
		}
	}
}

// callerKey is the API key a read's turn is counted against: the
// principal's key id, as authentication put it in the context.
func callerKey(ctx context.Context) string {
	p, _ := httpapi.PrincipalFrom(ctx)
	return p.KeyID
}

type gateShape struct {
	max, perKey int
	wait        time.Duration
}

// ReadGate is the bound on reads at once (Budget's MaxConcurrent,
// MaxConcurrentPerKey and MaxWait) that the APIs given it share, so that
// the bound holds for the process rather than per API.
type ReadGate struct{ g *gate }

// NewReadGate makes the gate of b.
func NewReadGate(b Budget) *ReadGate {
	b = b.withDefaults()
	return &ReadGate{g: newGate(gateShape{max: b.MaxConcurrent, perKey: b.MaxConcurrentPerKey, wait: b.MaxWait})}
}

// WithReadGate has an API's reads take their turns at g; without it an
// API bounds only its own reads, with a gate of its budget.
func WithReadGate(g *ReadGate) Option {
	return func(o *options) { o.gate = g }
}

// stream answers a JSON Lines read within the budget: once r has its turn
// at the store, open decodes and authorises the request (with the turn's
// context) and returns the lines, which are written as the store
// produces them, metered. An error of open is answered as a plain error,
// explained.
func (rb *readBudget) stream(w http.ResponseWriter, r *http.Request, open func(r *http.Request) (iter.Seq2[any, error], error)) {
	run, err := rb.start(r)
	if err != nil {
		httpapi.WriteError(w, r, rb.logger, err)
		return
	}
	defer run.end()
	r = r.WithContext(run.ctx)
	lines, err := open(r)
	if err != nil {
		httpapi.WriteError(w, r, rb.logger, run.explain(err))
		return
	}
	writeJSONLines(w, r, rb.logger, run.meter(lines))
}
