package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/weftdev/weft/inference/upstreamtest"
)

// benchLLMKey is the provider key the bench's upstream demands; weft
// reads it from the environment variable the config names.
const (
	benchLLMKey    = "sk-weft-bench"
	benchLLMKeyEnv = "WEFT_BENCH_LLM_KEY"
	benchProject   = "bench/inference"
)

// benchInference measures what the gateway adds: in each load every
// client alternates between the upstream and weft, with the same requests,
// so the difference in latency is the gateway's; then each runs alone for
// its requests/s. It also measures weft's memory per open stream.
func benchInference(ctx context.Context, o options) error {
	if o.weftBin == "" {
		return errors.New("inference needs --weft: it points weft's providers at the upstream it runs itself")
	}
	up := upstreamtest.New(upstreamtest.Options{Key: benchLLMKey, HoldInterval: time.Second})
	defer up.Close()
	cfgPath, cleanup, err := writeBenchConfig(up.BaseURL())
	if err != nil {
		return err
	}
	defer cleanup()
	if err := os.Setenv(benchLLMKeyEnv, benchLLMKey); err != nil {
		return err
	}
	o.serveArgs = []string{"--config", cfgPath}
	t, err := connect(ctx, o)
	if err != nil {
		return err
	}
	defer t.close()
	modes, err := parseModes(o.inferModes)
	if err != nil {
		return err
	}
	if o.inferRates != "" {
		return benchOpenLoop(ctx, t, up, o, modes)
	}
	clients, err := parseClients(o.inferClients)
	if err != nil {
		return err
	}
	fmt.Printf("inference gateway: upstream %s (in this process), weft %s; %s per load\n", up.URL, t.url, o.duration)
	if err := benchOpenStreams(ctx, t, up, o.streams); err != nil {
		return err
	}
	for _, stream := range modes {
		for _, n := range clients {
			if err := compareLoads(ctx, t, up, n, stream, o.duration); err != nil {
				return err
			}
		}
	}
	fmt.Printf("  peak RSS %s\n", t.peakRSS())
	return nil
}

// benchOpenLoop runs the open-loop loads: for each mode and offered rate,
// the upstream alone and then weft, back to back.
func benchOpenLoop(ctx context.Context, t *target, up *upstreamtest.Server, o options, modes []bool) error {
	plain, err := parseRates("--rates", o.inferRates)
	if err != nil {
		return err
	}
	streams, err := parseRates("--stream-rates", o.streamRates)
	if err != nil {
		return err
	}
	fmt.Printf("inference gateway, open loop: upstream %s (in this process: its CPU is not weft's), weft %s (pid %d); %s per load after a %s warm-up\n",
		up.URL, t.url, t.cmd.Process.Pid, o.duration, openWarmup)
	direct, gateway := endpoints(t, up)
	for _, stream := range modes {
		rates := plain
		if stream {
			rates = streams
		}
		for _, rate := range rates {
			if err := compareOpen(ctx, t, direct, gateway, stream, rate, o.duration); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeBenchConfig(upstream string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "weft-bench-inference")
	if err != nil {
		return "", nil, err
	}
	cfg := fmt.Sprintf(`log_level: warn
connections:
  max_connections: 8192
inference:
  max_concurrent_per_project: 100000
  providers:
    - {name: bench, base_url: %q, api_key_env: %s}
  models:
    - {id: bench-echo, upstreams: [{provider: bench, model: echo}], prices: {input_per_million: 0.2, output_per_million: 0.6}}
    - {id: bench-hold, upstreams: [{provider: bench, model: hold}]}
`, upstream, benchLLMKeyEnv)
	path := filepath.Join(dir, "weft.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return "", nil, err
	}
	return path, func() { _ = os.RemoveAll(dir) }, nil
}

// parseModes reads --modes: for each load, whether it streams.
func parseModes(s string) ([]bool, error) {
	var out []bool
	for _, f := range strings.Split(s, ",") {
		switch strings.TrimSpace(f) {
		case "plain":
			out = append(out, false)
		case "stream":
			out = append(out, true)
		default:
			return nil, fmt.Errorf("--modes: %q is neither plain nor stream", f)
		}
	}
	return out, nil
}

func parseClients(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--clients: %q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// endpoint is where a load goes: the upstream itself or weft's /v1.
type endpoint struct {
	name    string
	url     string
	model   string
	headers map[string]string
}

func endpoints(t *target, up *upstreamtest.Server) (direct, gateway endpoint) {
	direct = endpoint{"direct", up.BaseURL() + "/chat/completions", "echo", map[string]string{"Authorization": "Bearer " + benchLLMKey}}
	gateway = endpoint{"gateway", t.url + "/v1/chat/completions", "bench-echo",
		map[string]string{"Authorization": "Bearer " + t.key, "Service-Project": benchProject}}
	return direct, gateway
}

// compareLoads measures latency with each client alternating between the
// upstream and weft, then throughput with each alone, and prints both
// and the difference.
func compareLoads(ctx context.Context, t *target, up *upstreamtest.Server, clients int, stream bool, d time.Duration) error {
	direct, gateway := endpoints(t, up)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients + 8, DisableCompression: true}}
	defer client.CloseIdleConnections()
	both, err := runLoad(ctx, client, []endpoint{direct, gateway}, clients, stream, d)
	if err != nil {
		return fmt.Errorf("%d clients: %w", clients, err)
	}
	var alone [2]loadResult
	var cpu [2]time.Duration
	for i, ep := range []endpoint{direct, gateway} {
		r, used, err := measureAlone(ctx, t, client, ep, clients, stream, d)
		if err != nil {
			return fmt.Errorf("%s alone, %d clients: %w", ep.name, clients, err)
		}
		alone[i], cpu[i] = r, used
	}
	mode := "plain"
	if stream {
		mode = "stream"
	}
	printComparison(mode, clients, both[0], both[1], alone)
	printCPU(mode, clients, alone, cpu)
	return nil
}

// measureAlone runs one endpoint alone and reads the CPU weft used from
// the measured phase's start until a moment after it, so the traced calls
// it queued are written too. With the upstream alone, it is weft's idle
// cost over the same time.
func measureAlone(ctx context.Context, t *target, client *http.Client, ep endpoint, clients int, stream bool, d time.Duration) (loadResult, time.Duration, error) {
	pool := newTextPool(1000, 100)
	if _, err := drivePhase(ctx, client, []endpoint{ep}, clients, stream, min(d/5, time.Second), pool); err != nil {
		return loadResult{}, 0, err
	}
	before := t.cpu()
	r, err := drivePhase(ctx, client, []endpoint{ep}, clients, stream, d, pool)
	if err != nil {
		return loadResult{}, 0, err
	}
	time.Sleep(cpuSettle)
	return r[0], t.cpu() - before, nil
}

// cpuSettle is how long after a load weft's CPU is still counted: the
// trace queue drains and the store writes what it was handed.
const cpuSettle = time.Second

// printCPU reports weft's CPU per gateway request: what sets the added
// latency once clients queue for the cores.
func printCPU(mode string, clients int, alone [2]loadResult, cpu [2]time.Duration) {
	if cpu[1] == 0 {
		return
	}
	n := len(alone[1].total)
	fmt.Printf("  %-6s %4d clients weft CPU %.2fs for %d gateway requests: %.0f µs/request (while the upstream ran alone: %.2fs)\n",
		mode, clients, cpu[1].Seconds(), n, float64(cpu[1].Microseconds())/float64(n), cpu[0].Seconds())
}

func printComparison(mode string, clients int, direct, gateway loadResult, alone [2]loadResult) {
	row := func(what string, dl, gl []time.Duration) {
		d50, d99, g50, g99 := pct(dl, 50), pct(dl, 99), pct(gl, 50), pct(gl, 99)
		fmt.Printf("  %-6s %4d clients %-5s direct p50 %9s p99 %9s | gateway p50 %9s p99 %9s | added p50 %9s p99 %9s\n",
			mode, clients, what, ms(d50), ms(d99), ms(g50), ms(g99), ms(g50-d50), ms(g99-d99))
	}
	if len(direct.ttft) > 0 {
		row("ttft", direct.ttft, gateway.ttft)
	}
	row("total", direct.total, gateway.total)
	fmt.Printf("  %-6s %4d clients alone direct %8.0f req/s          | gateway %8.0f req/s          | errors %d / %d\n",
		mode, clients, alone[0].rate(), alone[1].rate(), direct.errors+alone[0].errors, gateway.errors+alone[1].errors)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3fms", float64(d.Microseconds())/1000) }
