package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/weftdev/weft/inference/upstreamtest"
)

// The soak's projects; the weave, otlp and hooks ones take the run's
// nonce, so a data dir can be soaked again.
const (
	soakEntity           = "soak"
	soakInferenceProject = "soak/inference"
	soakTrainingProject  = "soak/training"
)

// soakOptions are the flags of `weft-bench soak`.
type soakOptions struct {
	weftBin, dataDir, outDir string
	duration, killEvery      time.Duration
	killAgent                bool
	downFor                  time.Duration
	sampleEvery, settle      time.Duration
	fullReadEvery            time.Duration
	spanRate, callRate       float64
	spanBatch, callBatch     int
	maxSpans, maxCalls       int
	readRate, inferRate      float64
	hookRate, trainRate      float64
	trainSteps               int
	payload                  int
	duckDBMemoryMB           int // 0: the center's default
	log                      io.Writer
}

func parseSoak(args []string) (soakOptions, error) {
	o := soakOptions{log: os.Stdout}
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.StringVar(&o.weftBin, "weft", "", "weft binary: the soak starts a center (weft serve) and an agent in front of it, on loopback")
	fs.StringVar(&o.dataDir, "data-dir", "", "the center's data dir (default: a fresh one in --out)")
	fs.StringVar(&o.outDir, "out", "", "where the processes' logs, the agent's buffer and the summary go (default: a new temp dir, kept)")
	fs.DurationVar(&o.duration, "duration", 30*time.Minute, "how long the load runs; the soak then checks and stops by itself")
	fs.DurationVar(&o.killEvery, "kill-every", 3*time.Minute, "SIGKILL the center this often and start it again on the same data dir (0: never)")
	fs.BoolVar(&o.killAgent, "kill-agent", false, "also SIGKILL and restart the agent at every other kill of the center (the first, third, ...)")
	fs.DurationVar(&o.downFor, "down-for", 2*time.Second, "how long a killed process stays down before it is started again")
	fs.DurationVar(&o.sampleEvery, "sample-every", 10*time.Second, "how often the center's RSS, goroutines and open files are sampled and printed")
	fs.DurationVar(&o.settle, "settle", 3*time.Minute, "after the load, how long to wait for the center to serve every acknowledged call and span")
	fs.DurationVar(&o.fullReadEvery, "full-read-every", 5*time.Second, "how often a whole project is read (stream_query) and checked against the ledger")
	fs.Float64Var(&o.spanRate, "span-rate", 200, "OTLP/HTTP spans per second into the agent (0: none)")
	fs.IntVar(&o.spanBatch, "span-batch", 20, "spans per export request (at most 255)")
	fs.IntVar(&o.maxSpans, "max-spans", 1_000_000, "stop sending spans once this many are acknowledged")
	fs.Float64Var(&o.callRate, "call-rate", 100, "Weave calls per second into the agent, each a start and an end, a batch's root renamed twice (0: none)")
	fs.IntVar(&o.callBatch, "call-batch", 10, "calls per upsert_batch request")
	fs.IntVar(&o.maxCalls, "max-calls", 500_000, "stop sending calls once this many are acknowledged")
	fs.Float64Var(&o.readRate, "read-rate", 10, "reads per second against the center besides the whole-project reads: call/read, stats, aggregate, objects, threads, the web UI's (0: none)")
	fs.Float64Var(&o.inferRate, "infer-rate", 4, "chat requests per second through the gateway to a local fake upstream, plain and streamed in turn (0: none)")
	fs.Float64Var(&o.hookRate, "hook-rate", 2, "alias writes per second, each delivered to a local webhook receiver (0: none)")
	fs.Float64Var(&o.trainRate, "train-rate", 2, "training event batches (5 steps) per second on leased jobs (0: none)")
	fs.IntVar(&o.trainSteps, "train-steps", 200, "steps per training job before the next job")
	fs.IntVar(&o.duckDBMemoryMB, "duckdb-memory-mb", 0, "the center's embedded store buffer pool (duckdb_memory_mb; 0: its default): a small one fills early, so the soak sees where RSS levels off")
	fs.IntVar(&o.payload, "payload", 300, "approximate bytes of each input and output text")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case o.weftBin == "":
		return o, errors.New("soak: give --weft BIN")
	case o.duration <= 0:
		return o, errors.New("soak: --duration must be positive")
	case o.spanBatch < 1 || o.spanBatch > 255 || o.callBatch < 1:
		return o, errors.New("soak: --span-batch must be 1-255 and --call-batch at least 1")
	}
	return o, nil
}

// benchSoak is `weft-bench soak`: it exits non-zero when a count that
// must be zero is not.
func benchSoak(ctx context.Context, args []string) error {
	o, err := parseSoak(args)
	if err != nil {
		return err
	}
	r, err := runSoak(ctx, o)
	if err != nil {
		return err
	}
	if bad := r.failures(); len(bad) > 0 {
		return fmt.Errorf("soak failed: %s", strings.Join(bad, "; "))
	}
	return nil
}

// soak is one run.
type soak struct {
	o      soakOptions
	log    io.Writer
	nonce  uint64
	key    string
	center *soakProc
	agent  *soakProc
	client *soakClient
	stats  *soakStats
	pool   textPool

	calls, spans *projectLedger
	projects     []*projectLedger
	objects      soakObjects
	receiver     *soakReceiver
	hooksProject string
	tableDigest  string

	trainingModel string

	mu            sync.Mutex
	shortReads    int
	dupReads      int
	shortExamples []string
	aliases       []int
	jobs          []*trainingJob
	lostLeases    int
	samples       []soakSample
	loadStart     time.Time
	loadEnd       time.Time
}

// runSoak starts the center and the agent, runs the load for
// o.duration while killing the center every o.killEvery, waits for the
// center to serve everything acknowledged, checks it, and reports.
func runSoak(ctx context.Context, o soakOptions) (soakReport, error) {
	if o.log == nil {
		o.log = os.Stdout
	}
	s := &soak{o: o, log: o.log, nonce: rand.Uint64()}
	s.stats = newSoakStats(o.log)
	s.pool = newTextPool(1<<12, o.payload)
	s.calls = newProjectLedger(fmt.Sprintf("%s/weave-%04x", soakEntity, uint16(s.nonce)))
	s.spans = newProjectLedger(fmt.Sprintf("%s/otlp-%04x", soakEntity, uint16(s.nonce)))
	s.projects = []*projectLedger{s.calls, s.spans}
	s.hooksProject = fmt.Sprintf("%s/hooks-%04x", soakEntity, uint16(s.nonce))
	if err := s.dirs(); err != nil {
		return soakReport{}, err
	}
	up := upstreamtest.New(upstreamtest.Options{Key: benchLLMKey})
	defer up.Close()
	var err error
	if s.receiver, err = startSoakReceiver(); err != nil {
		return soakReport{}, err
	}
	defer s.receiver.close()
	if err := s.startProcs(ctx, up.BaseURL()); err != nil {
		return soakReport{}, err
	}
	// Whatever happens, the processes are stopped before returning.
	stopped := false
	stopProcs := func() {
		if !stopped {
			stopped = true
			s.agent.stop(2 * time.Minute)
			s.center.stop(2 * time.Minute)
		}
	}
	defer stopProcs()
	if err := s.setup(ctx); err != nil {
		return soakReport{}, err
	}
	fmt.Fprintf(s.log, "soak: center %s (data %s), agent %s; load for %v, center killed every %v; logs in %s\n",
		s.center.url, s.o.dataDir, s.agent.url, o.duration, o.killEvery, s.o.outDir)

	stop := make(chan struct{})
	var load sync.WaitGroup
	s.loadStart = time.Now()
	s.startLoad(ctx, stop, &load)
	sampling := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() { s.sampleLoop(ctx, sampling) })
	var killer sync.WaitGroup
	killer.Go(func() { s.killLoop(ctx, stop) })

	select {
	case <-time.After(o.duration):
	case <-ctx.Done():
	}
	close(stop)
	killer.Wait()
	load.Wait()
	s.mu.Lock()
	s.loadEnd = time.Now()
	s.mu.Unlock()
	fmt.Fprintf(s.log, "soak: load stopped after %v; waiting for the center to serve everything acknowledged\n", s.since())

	// The checks run even after a Ctrl-C: it ends the load early.
	check := context.WithoutCancel(ctx)
	var rep soakReport
	if err := errors.Join(s.center.waitUp(check, 3*time.Minute), s.agent.waitUp(check, 3*time.Minute)); err != nil {
		fmt.Fprintf(s.log, "soak: nothing can be checked: %v\n", err)
		rep.Unreadable = len(s.projects)
	} else {
		settled, pending := s.settleAll(check)
		rep = s.finalChecks(check)
		rep.Settle, rep.Unsettled = settled, pending
	}
	close(sampling)
	sampler.Wait()
	s.sample() // the last, after the checks
	stopProcs()
	s.fillReport(&rep)
	rep.print(s.log)
	if f, err := os.Create(filepath.Join(s.o.outDir, "summary.txt")); err == nil {
		rep.print(f)
		f.Close()
	}
	return rep, nil
}

// dirs makes the output dir and the center's data dir.
func (s *soak) dirs() error {
	if s.o.outDir == "" {
		dir, err := os.MkdirTemp("", "weft-soak-")
		if err != nil {
			return err
		}
		s.o.outDir = dir
	}
	if s.o.dataDir == "" {
		s.o.dataDir = filepath.Join(s.o.outDir, "center")
	}
	for _, d := range []string{s.o.outDir, s.o.dataDir, filepath.Join(s.o.outDir, "agent")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	return nil
}

// startProcs writes the center's config (the gateway's fake provider,
// deliveries to loopback, a trainable model) and starts the center, then
// the agent forwarding to it.
func (s *soak) startProcs(ctx context.Context, upstream string) error {
	cfg := fmt.Sprintf(`log_level: warn
inference:
  providers:
    - {name: bench, base_url: %q, api_key_env: %s}
  models:
    - {id: bench-echo, upstreams: [{provider: bench, model: echo}], prices: {input_per_million: 0.2, output_per_million: 0.6}}
automations:
  allowed_networks: [127.0.0.0/8]
  retry: {initial_interval: 1s, max_interval: 5s, max_elapsed: 72h}
training:
  base_models: [%s]
  lease_ttl: 10m
`, upstream, benchLLMKeyEnv, benchBaseModel)
	if s.o.duckDBMemoryMB > 0 {
		cfg += fmt.Sprintf("duckdb_memory_mb: %d\n", s.o.duckDBMemoryMB)
	}
	cfgPath := filepath.Join(s.o.outDir, "weft.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return err
	}
	if err := os.Setenv(benchLLMKeyEnv, benchLLMKey); err != nil {
		return err
	}
	var err error
	s.center, err = newSoakProc("center", s.o.weftBin, s.o.outDir,
		[]string{"serve", "--otlp-grpc-listen", "", "--data-dir", s.o.dataDir, "--config", cfgPath}, s.o.downFor, s.log)
	if err != nil {
		return err
	}
	if err := s.keep(ctx, s.center); err != nil {
		return err
	}
	key, err := os.ReadFile(filepath.Join(s.o.dataDir, "admin-key"))
	if err != nil {
		return fmt.Errorf("the center's admin key: %w", err)
	}
	s.key = strings.TrimSpace(string(key))
	s.client = &soakClient{http: &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}, key: s.key, stats: s.stats}
	s.agent, err = newSoakProc("agent", s.o.weftBin, s.o.outDir,
		[]string{"agent", "--otlp-grpc-listen", "", "--data-dir", filepath.Join(s.o.outDir, "agent"), "--upstream", s.center.url, "--log-level", "warn"},
		s.o.downFor, s.log)
	if err != nil {
		return err
	}
	return s.keep(ctx, s.agent)
}

// keep starts p and keeps it running until it is stopped.
func (s *soak) keep(ctx context.Context, p *soakProc) error {
	started := make(chan error, 1)
	go p.keep(context.WithoutCancel(ctx), started)
	return <-started
}

// setup makes what the load needs at the center: the webhook and its
// automation, a table, a trainable model.
func (s *soak) setup(ctx context.Context) error {
	if s.o.hookRate > 0 {
		if err := s.setupHooks(ctx); err != nil {
			return fmt.Errorf("webhook setup: %w", err)
		}
	}
	if s.o.readRate > 0 {
		if err := s.createTable(ctx); err != nil {
			return err
		}
	}
	if s.o.trainRate > 0 {
		return s.setupTraining(ctx)
	}
	return nil
}

// startLoad starts every load; each stops at stop.
func (s *soak) startLoad(ctx context.Context, stop <-chan struct{}, wg *sync.WaitGroup) {
	if p := newPacer(s.o.spanRate); p != nil {
		for w := range 2 {
			wg.Go(func() { s.spanLoad(ctx, stop, w, p) })
		}
	}
	if p := newPacer(s.o.callRate); p != nil {
		for w := range 2 {
			wg.Go(func() { s.callLoad(ctx, stop, w, p) })
		}
	}
	if s.o.fullReadEvery > 0 {
		wg.Go(func() { s.fullReads(ctx, stop) })
	}
	if p := newPacer(s.o.readRate); p != nil {
		for range 2 {
			wg.Go(func() { s.reads(ctx, stop, p) })
		}
	}
	if p := newPacer(s.o.inferRate); p != nil {
		wg.Go(func() { s.inference(ctx, stop, p) })
	}
	if p := newPacer(s.o.hookRate); p != nil {
		wg.Go(func() { s.hooks(ctx, stop, p) })
	}
	if p := newPacer(s.o.trainRate); p != nil {
		wg.Go(func() { s.training(ctx, stop, p) })
	}
}

// killLoop SIGKILLs the center every o.killEvery (and the agent with it
// at every other kill, with --kill-agent); the keepers start them again.
func (s *soak) killLoop(ctx context.Context, stop <-chan struct{}) {
	if s.o.killEvery <= 0 {
		return
	}
	for n := 0; ; n++ {
		if !sleepOrStop(ctx, stop, s.o.killEvery) {
			return
		}
		if time.Until(s.loadStart.Add(s.o.duration)) < 5*time.Second {
			return // a kill as the load ends would only delay the checks
		}
		if !s.center.kill() {
			fmt.Fprintf(s.log, "  %8v  kill skipped: the center is not up\n", s.since())
			continue
		}
		what := "center"
		if s.o.killAgent && n%2 == 0 && s.agent.kill() {
			what = "center and agent"
		}
		fmt.Fprintf(s.log, "  %8v  SIGKILL %s\n", s.since(), what)
	}
}

func (s *soak) since() time.Duration { return time.Since(s.loadStart).Round(time.Second) }

// settleAll waits until the center serves every acknowledged call, span
// and end, and the receiver has every acknowledged alias's delivery.
func (s *soak) settleAll(ctx context.Context) (time.Duration, int) {
	begin := time.Now()
	took, pending := s.settle(ctx, s.o.settle)
	for {
		s.mu.Lock()
		aliases := append([]int(nil), s.aliases...)
		s.mu.Unlock()
		missing, _, _ := s.receiver.missing(aliases)
		if missing == 0 || time.Since(begin) > s.o.settle {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if pending != 0 {
		fmt.Fprintf(s.log, "soak: %d acknowledged calls or spans still not served after %v\n", pending, took.Round(time.Millisecond))
	}
	return time.Since(begin), pending
}

// finalChecks compares the center's data with every ledger.
func (s *soak) finalChecks(ctx context.Context) soakReport {
	var r soakReport
	for _, l := range s.projects {
		var rows servedRows
		for try := 0; try < 5; try++ {
			var o outcome
			if rows, o = s.readProject(ctx, l); o == answeredOK {
				break
			}
			time.Sleep(time.Second)
		}
		if rows == nil {
			r.Unreadable++
			fmt.Fprintf(s.log, "FINAL: %s could not be read\n", l.project)
			continue
		}
		c := l.final(rows)
		if l == s.calls {
			r.Calls, r.Ended, r.Renamed = c.acked, c.ended, c.renamed
		} else {
			r.Spans = c.acked
		}
		r.Lost += c.lost
		r.Duplicated += c.duplicated
		r.StaleRenames += c.staleRenames
		for _, e := range c.examples {
			fmt.Fprintf(s.log, "FINAL: %s: %s\n", l.project, e)
		}
	}
	r.Objects, r.ObjectsLost = s.checkObjects(ctx)
	s.mu.Lock()
	aliases := append([]int(nil), s.aliases...)
	s.mu.Unlock()
	r.Hooks = len(aliases)
	r.HooksMissing, r.HooksRepeated, r.BadSignatures = s.receiver.missing(aliases)
	var ex []string
	r.TrainSteps, r.TrainLost, r.TrainDuplicated, ex = s.checkTraining(ctx)
	for _, e := range ex {
		fmt.Fprintf(s.log, "FINAL: training: %s\n", e)
	}
	return r
}
