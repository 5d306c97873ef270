// Command weft-bench measures a running weft (or one it starts): ingest
// throughput and latency through /call/upsert_batch, query latency on a
// large store, and the server's peak RSS. It prints figures; it asserts
// nothing. See docs/benchmarks.md.
//
//	weft-bench calls --weft ./bin/weft --calls 200000
//	weft-bench query --weft ./bin/weft --calls 1000000
//	weft-bench otlp  --weft ./bin/weft --calls 200000 --batch 512 --payload 1000
//	weft-bench automations --weft ./bin/weft --calls 10000 --batch 10 --pending 100000
//	weft-bench inference --weft ./bin/weft --clients 1,64,512 --duration 5s
//	weft-bench inference --weft ./bin/weft --rates 1000,3000 --stream-rates 200,500 --duration 30s
//	weft-bench agent --weft ./bin/weft --calls 500000 --payload 1000
//	weft-bench training --weft ./bin/weft --jobs 1000 --calls 100000 --batch 50
//	weft-bench soak --weft ./bin/weft --duration 30m --kill-every 3m
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "weft-bench:", err)
		os.Exit(1)
	}
}

type options struct {
	weftBin, url, key, dataDir, project string
	visibleURL                          string
	calls, batch, workers, payload      int
	queries                             int
	rate, window                        int
	transports                          string
	pending                             int
	jobs                                int
	// inference: the client counts of each load, how long each runs and
	// how many streams to hold open; serveArgs go to the started weft.
	inferClients string
	inferModes   string
	// inference, open loop: the offered rates of unstreamed requests and
	// of streams; with --rates the loads are open loop instead of clients.
	inferRates, streamRates string
	duration                time.Duration
	streams                 int
	serveArgs               []string
	// otlp: spans per trace, and whether to time the reads after loading.
	traceSpans int
	reads      bool
	skipLoad   bool
}

func parse(name string, args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&o.weftBin, "weft", "", "weft binary to start on a fresh data dir (reports its peak RSS)")
	fs.StringVar(&o.url, "url", "", "URL of an already running weft (instead of --weft)")
	fs.StringVar(&o.key, "key", os.Getenv("WEFT_API_KEY"), "API key for --url (env WEFT_API_KEY)")
	fs.StringVar(&o.dataDir, "data-dir", "", "data dir for --weft (default: a temp dir, removed after)")
	fs.StringVar(&o.project, "project", "bench/calls", "project to write to")
	fs.IntVar(&o.calls, "calls", 200_000, "calls to write")
	fs.IntVar(&o.batch, "batch", 500, "calls per upsert_batch request (each call is a start and an end)")
	fs.IntVar(&o.workers, "workers", 8, "concurrent clients")
	fs.IntVar(&o.payload, "payload", 500, "approximate bytes of inputs+output per call")
	fs.IntVar(&o.queries, "queries", 50, "repetitions of each query")
	fs.IntVar(&o.rate, "rate", 0, "offered load in records/s (open loop; latency counts from when a request was due); 0 sends as fast as answered")
	fs.StringVar(&o.transports, "transports", "http,grpc", "otlp: which transports to measure, in order")
	fs.IntVar(&o.traceSpans, "trace-spans", 10, "otlp: spans per trace (a root and its LLM calls)")
	fs.BoolVar(&o.skipLoad, "skip-load", false, "otlp: send nothing and only time the reads, on a store an earlier run with the same --calls, --batch and --trace-spans filled (its --data-dir)")
	fs.BoolVar(&o.reads, "reads", false, "otlp: after each load, time the reads users make (call, trace, pages, sorts, stats, charts, the UI's pages)")
	fs.IntVar(&o.window, "window", 1_000_000, "report the rate over each window of this many records; the last is what a full store sustains")
	fs.IntVar(&o.pending, "pending", 100_000, "automations: deliveries left pending against a dead receiver while memory is watched (0 skips)")
	fs.IntVar(&o.jobs, "jobs", 1000, "training: jobs kept queued while leases are timed")
	fs.StringVar(&o.inferClients, "clients", "1,64,512", "inference: concurrent clients of each load, comma-separated")
	fs.StringVar(&o.inferRates, "rates", "", "inference: open loop at these offered requests/s, comma-separated (latency counts from each request's due time); instead of --clients")
	fs.StringVar(&o.streamRates, "stream-rates", "200,500", "inference: with --rates, the offered streams/s of the stream loads")
	fs.StringVar(&o.inferModes, "modes", "plain,stream", "inference: which loads to run: unstreamed (plain), streamed (stream) or both")
	fs.DurationVar(&o.duration, "duration", 5*time.Second, "inference: how long each load runs (direct and through weft each)")
	fs.IntVar(&o.streams, "streams", 1000, "inference: streams held open to measure memory per stream (0 skips)")
	fs.StringVar(&o.visibleURL, "visible-url", "", "calls: after loading, wait until this (query role) URL serves every call and report the end-to-end lag")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if (o.weftBin == "") == (o.url == "") {
		return o, errors.New("give exactly one of --weft BIN or --url URL")
	}
	return o, nil
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: weft-bench calls|query|otlp|automations|inference|agent|training|soak [flags]")
	}
	if args[0] == "soak" {
		return benchSoak(ctx, args[1:])
	}
	o, err := parse(args[0], args[1:])
	if err != nil {
		return err
	}
	if args[0] == "inference" {
		return benchInference(ctx, o)
	}
	switch args[0] {
	case "automations":
		o.serveArgs, err = automationsServeArgs()
	case "training":
		o.serveArgs, err = trainingServeArgs()
	}
	if err != nil {
		return err
	}
	target, err := connect(ctx, o)
	if err != nil {
		return err
	}
	defer target.close()
	switch args[0] {
	case "calls":
		return benchCalls(ctx, target, o)
	case "query":
		return benchQuery(ctx, target, o)
	case "otlp":
		return benchOTLP(ctx, target, o)
	case "automations":
		return benchAutomations(ctx, target, o)
	case "agent":
		return benchAgent(ctx, target, o)
	case "training":
		return benchTraining(ctx, target, o)
	}
	return fmt.Errorf("unknown benchmark %q (calls, query, otlp, automations, inference, agent, training, soak)", args[0])
}
