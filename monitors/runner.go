package monitors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go.opentelemetry.io/collector/component"
	"iter"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/refs"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
)

// lease names the lease of the process that runs monitors.
const lease = "monitors"

// RunnerStore is what running monitors reads and writes.
type RunnerStore interface {
	storage.MonitorStore
	ClaimLease(ctx context.Context, name, owner string, now time.Time, ttl time.Duration) (bool, error)
	QueryCalls(ctx context.Context, q storage.CallsQuery) iter.Seq2[storage.StoredCall, error]
	ReadObject(ctx context.Context, req storage.ObjReadReq) (storage.ObjReadRes, error)
	CreateFeedback(ctx context.Context, rows []storage.Feedback) error
}

// Completer runs one chat completion for a project on behalf of p: the
// inference gateway. Its errors may carry the HTTP status they stand for
// with a StatusCode method.
type Completer interface {
	Complete(ctx context.Context, p auth.Principal, projectID string, request json.RawMessage) (json.RawMessage, error)
}

// CallSink takes the score calls monitors write: the write path's front,
// so they are stored like any other call.
type CallSink interface {
	ConsumeCalls(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error)
}

// Pricer prices a project's per-model usage as include_costs does.
type Pricer func(ctx context.Context, projectID string, usage []storage.ModelUsageBucket) (float64, error)

// Options configure the runner.
type Options struct {
	// Interval is how often the queue is read when it was empty.
	Interval time.Duration
	// Owner names this process's lease; Run says it competes for it.
	Owner string
	Run   bool
	// DailyCapUSD is the spend cap of a monitor that sets none; 0 is
	// no cap.
	DailyCapUSD float64
	// Batch is the most queued calls one round takes; Workers the judges
	// asked at once.
	Batch, Workers int
	// MaxAttempts bounds the rounds a call is put off (not yet readable,
	// or a judge's upstream failing) before it is given up.
	MaxAttempts int
}

// Stats counts what this process's runner did.
type Stats struct {
	Scored, Failed, Skipped, Retried, Sampled, Dropped atomic.Int64
}

// Runner scores queued calls, in the one process of a deployment that
// holds the monitors lease.
type Runner struct {
	store    RunnerStore
	registry *Registry
	llm      Completer
	sink     CallSink
	price    Pricer
	opts     Options
	logger   *slog.Logger
	now      func() time.Time
	Stats    Stats

	judgeCache sync.Map // scorer ref -> judgeEntry

	spendMu sync.Mutex
	spend   map[string]*daySpend // project + "\x00" + monitor -> spend of its day

	// claimed is when this process last claimed the lease (UnixNano),
	// 0 when it does not hold it.
	claimed atomic.Int64

	// judges is canceled by Shutdown: it ends the judge calls in flight.
	// Store reads and writes are never canceled part way (a canceled
	// write can leave the embedded store's connection in a transaction);
	// quit stops the loop between them.
	judges       context.Context
	cancelJudges context.CancelFunc
	stopOnce     sync.Once
	quit         chan struct{}
	done         chan struct{}
	wake         chan struct{}
}

type judgeEntry struct {
	judge Judge
	err   error
}

type daySpend struct {
	day time.Time
	usd float64
}

// NewRunner builds the runner; llm nil fails every judge with a message
// that says the gateway is not configured.
func NewRunner(store RunnerStore, registry *Registry, llm Completer, sink CallSink, price Pricer, opts Options, logger *slog.Logger, now func() time.Time) *Runner {
	if opts.Batch <= 0 {
		opts.Batch = 100
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 8
	}
	r := &Runner{store: store, registry: registry, llm: llm, sink: sink, price: price, opts: opts, logger: logger, now: now,
		spend: map[string]*daySpend{}, wake: make(chan struct{}, 1)}
	r.judges, r.cancelJudges = context.WithCancel(context.Background())
	return r
}

// Start runs rounds in the background until Shutdown.
func (r *Runner) Start(ctx context.Context, _ component.Host) error {
	if !r.opts.Run {
		return nil
	}
	r.quit, r.done = make(chan struct{}), make(chan struct{})
	go r.loop(context.WithoutCancel(ctx))
	return nil
}

// Shutdown stops the rounds after the judge calls in flight; it is
// idempotent. What a round did not finish stays queued.
func (r *Runner) Shutdown(ctx context.Context) error {
	if r.quit == nil {
		return nil
	}
	r.stopOnce.Do(func() {
		close(r.quit)
		r.cancelJudges()
	})
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Wake asks for a round now.
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *Runner) loop(ctx context.Context) {
	defer close(r.done)
	for {
		n, err := r.Round(ctx)
		if err != nil && r.judges.Err() == nil {
			r.logger.Warn("monitors: a round failed; the queued calls stay queued and the next round tries again; if it repeats, check the store", "err", err)
		}
		if r.judges.Err() != nil {
			return
		}
		if n == r.opts.Batch && err == nil {
			continue
		}
		select {
		case <-r.quit:
			return
		case <-r.wake:
		case <-time.After(r.opts.Interval):
		}
	}
}

// leaseTTL is how long a claim holds the lease: several rounds, so a
// holder keeps it while it works (it claims again during long rounds,
// see holdLease) and another takes over soon after it dies.
func (r *Runner) leaseTTL() time.Duration { return max(5*r.opts.Interval, 5*time.Second) }

// holdLease claims the lease again when a third of its time has passed
// since the last claim, and reports whether this process still holds it.
func (r *Runner) holdLease(ctx context.Context) bool {
	now := r.now().UTC()
	if last := r.claimed.Load(); last != 0 && now.Sub(time.Unix(0, last)) < r.leaseTTL()/3 {
		return true
	}
	held, err := r.store.ClaimLease(ctx, lease, r.opts.Owner, now, r.leaseTTL())
	if err != nil || !held {
		r.claimed.Store(0)
		return false
	}
	r.claimed.Store(now.UnixNano())
	return true
}

// Round scores up to one batch of queued calls if this process holds the
// lease, and reports how many it took.
func (r *Runner) Round(ctx context.Context) (int, error) {
	r.claimed.Store(0) // every round claims
	if !r.holdLease(ctx) {
		return 0, nil
	}
	queued, err := r.store.PendingMonitorCalls(ctx, r.now().UTC(), r.opts.Batch)
	if err != nil || len(queued) == 0 {
		return 0, err
	}
	byProject := map[string][]storage.MonitorCall{}
	var order []string
	for _, q := range queued {
		if _, ok := byProject[q.ProjectID]; !ok {
			order = append(order, q.ProjectID)
		}
		byProject[q.ProjectID] = append(byProject[q.ProjectID], q)
	}
	for _, p := range order {
		if err := r.project(ctx, p, byProject[p]); err != nil {
			return len(queued), err
		}
	}
	return len(queued), nil
}

// task is one scorer to apply to one call.
type task struct {
	monitor Monitor
	scorer  string
	call    storage.Call
	// last: the call's last attempt, so a failure that might pass is
	// recorded as final.
	last bool
}

// outcome is what a task came to: a result to record (nil when the
// judge is to be asked again later) and the verdict to store.
type outcome struct {
	result  *storage.MonitorResult
	verdict json.RawMessage
	usage   json.RawMessage // the judge's, as its answer gave it
	judge   Judge           // who gave the verdict
	retry   bool
}

// project scores a project's queued calls.
func (r *Runner) project(ctx context.Context, projectID string, queued []storage.MonitorCall) error {
	monitors := r.registry.Active(projectID)
	if len(monitors) == 0 {
		return r.store.RemoveMonitorCalls(ctx, queued)
	}
	ids := make([]string, len(queued))
	for i, q := range queued {
		ids[i] = q.CallID
	}
	calls, err := r.readCalls(ctx, storage.CallsQuery{ProjectID: projectID, Filter: storage.CallsFilter{CallIDs: ids}})
	if err != nil {
		return err
	}
	var ready []string
	var later, gone []storage.MonitorCall
	for _, q := range queued {
		c, ok := calls[q.CallID]
		switch {
		case ok && c.EndedAt != nil:
			ready = append(ready, q.CallID)
		case q.Attempts+1 >= r.opts.MaxAttempts:
			r.Stats.Dropped.Add(1)
			r.logger.Info("monitors: a queued call is still not readable as ended (it may never end); it is not scored; raise monitors.max_attempts if calls end later than that",
				"project", projectID, "call_id", q.CallID, "attempts", q.Attempts+1)
			gone = append(gone, q)
		default:
			later = append(later, r.putOff(q))
		}
	}
	attempts := make(map[string]int, len(queued))
	for _, q := range queued {
		attempts[q.CallID] = q.Attempts
	}
	done, err := r.doneSet(ctx, projectID, ready)
	if err != nil {
		return err
	}
	var tasks []task
	for _, m := range monitors {
		matched, err := r.matching(ctx, m, ready, calls)
		if err != nil {
			return err
		}
		for _, id := range matched {
			if isScoreCall(calls[id]) || !Sampled(m.Name, id, m.SamplingRate) {
				r.Stats.Sampled.Add(1)
				continue
			}
			for _, s := range m.Scorers {
				if k := [2]string{id, s}; !done[k] {
					done[k] = true // two monitors sharing a scorer score once
					tasks = append(tasks, task{monitor: m, scorer: s, call: calls[id], last: attempts[id]+1 >= r.opts.MaxAttempts})
				}
			}
		}
	}
	retry := r.runTasks(ctx, projectID, tasks)
	if err := r.judges.Err(); err != nil {
		return err // shutting down: the calls stay queued as they were
	}
	byID := map[string]storage.MonitorCall{}
	for _, q := range queued {
		byID[q.CallID] = q
	}
	for _, id := range ready {
		q := byID[id]
		if retry[id] && q.Attempts+1 < r.opts.MaxAttempts {
			later = append(later, r.putOff(q))
		} else {
			gone = append(gone, q)
		}
	}
	if err := r.store.DeferMonitorCalls(ctx, later); err != nil {
		return err
	}
	return r.store.RemoveMonitorCalls(ctx, gone)
}

// putOff schedules a queued call's next attempt, doubling the pause from
// one second up to five minutes.
func (r *Runner) putOff(q storage.MonitorCall) storage.MonitorCall {
	q.Attempts++
	pause := min(time.Second<<min(q.Attempts-1, 9), 5*time.Minute)
	q.NextAt = r.now().UTC().Add(pause)
	return q
}

func (r *Runner) readCalls(ctx context.Context, q storage.CallsQuery) (map[string]storage.Call, error) {
	q.Limit = int64(len(q.Filter.CallIDs))
	out := make(map[string]storage.Call, len(q.Filter.CallIDs))
	for c, err := range r.store.QueryCalls(ctx, q) {
		if err != nil {
			return nil, fmt.Errorf("read calls for monitors: %w", err)
		}
		out[c.ID] = c.Call
	}
	return out, nil
}

// doneSet is the (call, scorer ref) pairs that have a final result.
func (r *Runner) doneSet(ctx context.Context, projectID string, ids []string) (map[[2]string]bool, error) {
	done := map[[2]string]bool{}
	if len(ids) == 0 {
		return done, nil
	}
	results, err := r.store.MonitorResults(ctx, projectID, ids)
	if err != nil {
		return nil, err
	}
	for _, res := range results {
		if res.Status != storage.MonitorRetrying {
			done[[2]string{res.CallID, res.ScorerRef}] = true
		}
	}
	return done, nil
}

// matching returns the ready calls a monitor's op names and query
// select, through the store's calls query, so a monitor matches what the
// calls page would show for the same filter.
func (r *Runner) matching(ctx context.Context, m Monitor, ready []string, calls map[string]storage.Call) ([]string, error) {
	if len(ready) == 0 || (len(m.OpNames) == 0 && m.Query == nil) {
		return ready, nil
	}
	q := storage.CallsQuery{ProjectID: m.ProjectID, Filter: storage.CallsFilter{CallIDs: ready, OpNames: m.OpNames},
		Columns: []string{"id"}}
	if m.Query != nil {
		where, err := querylang.Parse(m.Query)
		if err != nil {
			r.logger.Info("monitors: a monitor's query does not parse; it scores nothing until its owner fixes it (the monitor's status shows why)", "monitor", m.Ref, "err", err)
			return nil, nil
		}
		q.Where = where
	}
	found, err := r.readCalls(ctx, q)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, id := range ready {
		if _, ok := found[id]; ok {
			out = append(out, id)
		}
	}
	return out, nil
}

// scoreMarker is the attributes key of the calls monitors write; such
// calls are never scored themselves.
const scoreMarker = "weft_monitor"

func isScoreCall(c storage.Call) bool {
	var attrs map[string]json.RawMessage
	return json.Unmarshal(c.Attributes, &attrs) == nil && attrs[scoreMarker] != nil
}

// Sampled decides from the monitor and call alone whether a call is in
// the monitor's sample, so a call retried or replayed is decided alike.
// The write path asks it of every stored call of a watched project: a
// 64-bit FNV-1a of monitor and call id, mixed, without allocating.
func Sampled(monitor, callID string, rate float64) bool {
	if rate >= 1 {
		return true
	}
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(monitor); i++ {
		h = (h ^ uint64(monitor[i])) * prime
	}
	h *= prime // the separator, a zero byte
	for i := 0; i < len(callID); i++ {
		h = (h ^ uint64(callID[i])) * prime
	}
	// splitmix64's finalizer spreads FNV's weak high bits.
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return float64(h>>11)/(1<<53) < rate
}

// runTasks runs tasks with up to Workers judges at once and records their
// results; it reports the calls that have a judge to ask again.
func (r *Runner) runTasks(ctx context.Context, projectID string, tasks []task) map[string]bool {
	retry := map[string]bool{}
	if len(tasks) == 0 {
		return retry
	}
	var mu sync.Mutex
	sem := make(chan struct{}, r.opts.Workers)
	var wg sync.WaitGroup
	for _, t := range tasks {
		// A long round claims the lease again as it goes, and stops
		// if another process took it.
		if r.judges.Err() != nil || !r.holdLease(ctx) {
			mu.Lock()
			retry[t.call.ID] = true
			mu.Unlock()
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			again := r.apply(ctx, t)
			if again {
				mu.Lock()
				retry[t.call.ID] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return retry
}

// apply asks one judge about one call and stores what came of it; true
// when the judge is to be asked again later.
func (r *Runner) apply(ctx context.Context, t task) bool {
	out := r.judge(ctx, t)
	if r.judges.Err() != nil {
		return true // cut off by shutdown: asked again after the restart
	}
	res := out.result
	if out.verdict != nil {
		if err := r.storeVerdict(ctx, t, out, res); err != nil {
			r.logger.Warn("monitors: storing a verdict failed; the call will be scored again; if it repeats, check the store", "monitor", t.monitor.Ref,
				"call_id", t.call.ID, "err", err)
			return true
		}
	}
	if err := r.store.RecordMonitorResults(ctx, []storage.MonitorResult{*res}); err != nil {
		r.logger.Warn("monitors: recording a result failed; the call will be scored again; if it repeats, check the store", "monitor", t.monitor.Ref,
			"call_id", t.call.ID, "err", err)
		return true
	}
	switch res.Status {
	case storage.MonitorScored:
		r.Stats.Scored.Add(1)
	case storage.MonitorSkipped:
		r.Stats.Skipped.Add(1)
	case storage.MonitorRetrying:
		r.Stats.Retried.Add(1)
	default:
		r.Stats.Failed.Add(1)
	}
	return out.retry
}

// judge asks a task's judge, within its monitor's spend cap.
func (r *Runner) judge(ctx context.Context, t task) outcome {
	res := &storage.MonitorResult{ProjectID: t.monitor.ProjectID, CallID: t.call.ID, ScorerRef: t.scorer,
		Monitor: t.monitor.Name, MonitorRef: t.monitor.Ref, At: r.now().UTC()}
	fail := func(status string, format string, args ...any) outcome {
		res.Status, res.Message = status, fmt.Sprintf(format, args...)
		return outcome{result: res, retry: status == storage.MonitorRetrying}
	}
	j, err := r.loadJudge(ctx, t.monitor.ProjectID, t.scorer)
	if err != nil {
		return fail(storage.MonitorFailed, "%v", err)
	}
	if capUSD, spent := r.capOf(t.monitor), r.spent(ctx, t.monitor); capUSD > 0 && spent >= capUSD {
		return fail(storage.MonitorSkipped, "the monitor's daily spend cap of $%.4f is reached ($%.4f spent today); "+
			"calls are skipped until 00:00 UTC, or raise daily_spend_cap_usd", capUSD, spent)
	}
	if r.llm == nil {
		return fail(storage.MonitorFailed, "judges need the inference gateway, which this server does not run; configure inference.providers and inference.models")
	}
	req, err := j.request(t.call)
	if err != nil {
		return fail(storage.MonitorFailed, "scorer %s: %v", j.Name, err)
	}
	entity, _, _ := auth.SplitProjectID(t.monitor.ProjectID)
	p := auth.Principal{KeyID: "monitor:" + t.monitor.Ref, UserID: t.monitor.UserID, Entity: entity, Role: auth.RoleMember}
	raw, err := r.llm.Complete(r.judges, p, t.monitor.ProjectID, req)
	if err != nil {
		if retryable(err) && !t.last {
			return fail(storage.MonitorRetrying, "the judge %s failed (%v); asking again later", j.Model, err)
		}
		return fail(storage.MonitorFailed, "the judge %s failed: %v", j.Model, err)
	}
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil {
		return fail(storage.MonitorFailed, "the judge %s answered something that is not a chat completion", j.Model)
	}
	res.CostUSD = r.cost(ctx, t.monitor, j, a)
	verdict, err := j.verdict(a)
	if err != nil {
		return fail(storage.MonitorFailed, "%v", err)
	}
	res.Status = storage.MonitorScored
	return outcome{result: res, verdict: verdict, usage: a.Usage, judge: j}
}

// retryable reports whether a judge's failure may pass: the upstream's
// 429 and 5xx, or no status at all (the connection).
func retryable(err error) bool {
	var se interface{ StatusCode() int }
	if !errors.As(err, &se) {
		return true
	}
	s := se.StatusCode()
	return s == http.StatusTooManyRequests || s >= 500
}

func (r *Runner) loadJudge(ctx context.Context, projectID, ref string) (Judge, error) {
	if e, ok := r.judgeCache.Load(ref); ok {
		return e.(judgeEntry).judge, e.(judgeEntry).err
	}
	j, err := r.readJudge(ctx, projectID, ref)
	// A scorer version never changes: its value or its fault is kept. A
	// store error, or a version not stored yet, is asked again.
	var se *storeError
	if !errors.As(err, &se) && !errors.Is(err, storage.ErrNotFound) {
		r.judgeCache.Store(ref, judgeEntry{judge: j, err: err})
	}
	return j, err
}

// storeError marks a failure to read, as opposed to a faulty scorer.
type storeError struct{ error }

func (e *storeError) Unwrap() error { return e.error }

func (r *Runner) readJudge(ctx context.Context, projectID, ref string) (Judge, error) {
	read := func(ref string) (json.RawMessage, error) {
		name, digest, err := objectOf(projectID, ref)
		if err != nil {
			return nil, err
		}
		o, err := r.store.ReadObject(ctx, storage.ObjReadReq{ProjectID: projectID, ObjectID: name, Digest: digest})
		if err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return nil, fmt.Errorf("%s does not exist: %w", ref, err)
			}
			return nil, &storeError{err}
		}
		return o.Obj.Val, nil
	}
	val, err := read(ref)
	if err != nil {
		return Judge{}, err
	}
	return ParseJudge(ref, val, read)
}

// capOf is a monitor's daily cap: its own, else the configured default.
func (r *Runner) capOf(m Monitor) float64 {
	if m.DailyCapUSD != nil {
		return *m.DailyCapUSD
	}
	return r.opts.DailyCapUSD
}

// spent is what a monitor's judges spent today (UTC), read from the
// ledger once a day and counted here after.
func (r *Runner) spent(ctx context.Context, m Monitor) float64 { return r.addSpend(ctx, m, 0) }

// addSpend counts usd toward a monitor's spend today and returns the
// day's total.
func (r *Runner) addSpend(ctx context.Context, m Monitor, usd float64) float64 {
	day := r.now().UTC().Truncate(24 * time.Hour)
	key := m.ProjectID + "\x00" + m.Name
	r.spendMu.Lock()
	s := r.spend[key]
	r.spendMu.Unlock()
	if s == nil || !s.day.Equal(day) {
		loaded := r.ledgerSpend(ctx, m, day) // the store read, outside the lock
		r.spendMu.Lock()
		if cur := r.spend[key]; cur == nil || !cur.day.Equal(day) {
			r.spend[key] = &daySpend{day: day, usd: loaded}
		}
		r.spendMu.Unlock()
	}
	r.spendMu.Lock()
	defer r.spendMu.Unlock()
	s = r.spend[key]
	s.usd += usd
	return s.usd
}

// ledgerSpend is what the ledger holds of a monitor's spend since day.
func (r *Runner) ledgerSpend(ctx context.Context, m Monitor, day time.Time) float64 {
	stats, err := r.store.MonitorStats(ctx, m.ProjectID, day)
	if err != nil {
		r.logger.Warn("monitors: reading today's spend failed; counting from zero, so the monitor may spend past its daily cap (daily_spend_cap_usd) today; if it repeats, check the store", "monitor", m.Ref, "err", err)
	}
	for _, st := range stats {
		if st.Monitor == m.Name {
			return st.CostUSD
		}
	}
	return 0
}

// cost prices a judge's answer as include_costs would, and counts it
// toward its monitor's spend.
func (r *Runner) cost(ctx context.Context, m Monitor, j Judge, a answer) float64 {
	if r.price == nil || len(a.Usage) == 0 {
		return 0
	}
	var u struct {
		Prompt     int64 `json:"prompt_tokens"`
		Completion int64 `json:"completion_tokens"`
		Total      int64 `json:"total_tokens"`
	}
	if json.Unmarshal(a.Usage, &u) != nil {
		return 0
	}
	usd, err := r.price(ctx, m.ProjectID, []storage.ModelUsageBucket{{Model: j.Model, Requests: 1,
		PromptTokens: u.Prompt, CompletionTokens: u.Completion, TotalTokens: u.Total}})
	if err != nil {
		r.logger.Warn("monitors: pricing a judge's usage failed; counting it as free, so the monitor may spend past its daily cap (daily_spend_cap_usd); if it repeats, check the store and the model's prices", "model", j.Model, "err", err)
		return 0
	}
	r.addSpend(ctx, m, usd)
	return usd
}

// objectOf reads an object ref of projectID into its name and version.
func objectOf(projectID, ref string) (string, string, error) {
	r, err := refs.Parse(ref)
	if err != nil || r.Kind != refs.KindObject || r.ProjectID != projectID || len(r.Extra) > 0 {
		return "", "", fmt.Errorf("%q is not an object ref of project %s", ref, projectID)
	}
	return r.Name, r.Version, nil
}

// ids are deterministic so that storing a verdict again, after a crash,
// writes the same score call and feedback row.
func scoreIDs(projectID, callID, scorerRef string) (scoreCallID, feedbackID string) {
	key := projectID + "\x00" + callID + "\x00" + scorerRef
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("call\x00"+key)).String(), uuid.NewSHA1(uuid.NameSpaceURL, []byte("feedback\x00"+key)).String()
}
