package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// benchAgent measures the agent role in front of a central weft on the
// same machine: the same OTLP/HTTP load first straight to the center, then
// through an agent forwarding to it. For the agent it reports the rate and
// latency of its acknowledgements (a buffer fsync), the rate at which the
// center received everything (from the first request until the agent's
// buffer was empty), and the agent's RSS idle and at its peak.
func benchAgent(ctx context.Context, center *target, o options) error {
	if center.cmd == nil {
		return errors.New("agent: give --weft BIN; the benchmark starts the center and the agent")
	}
	pool := newTextPool(1<<16, max(o.payload-400, 0)/2)
	direct, err := driveOTLP(ctx, center, o, pool, o.project+"-direct")
	if err != nil {
		return err
	}
	fmt.Printf("center direct: %d spans of ~%d B in %d-span requests, %d workers, offered %s\n",
		o.calls, o.payload, o.batch, o.workers, offered(o.rate, "spans"))
	direct.print("spans")
	// The agent's run starts once the center has stored the direct run,
	// so both see the same center.
	if err := waitGaugeZero(ctx, center.url, `otelcol_exporter_queue_size{exporter="storage"}`); err != nil {
		return err
	}

	agent, err := startAgent(ctx, o.weftBin, center)
	if err != nil {
		return err
	}
	defer agent.close()
	if err := throughAgent(ctx, center, agent, o, pool); err != nil {
		return err
	}
	return lightLoad(ctx, center, agent, o, pool)
}

// throughAgent sends the load to the agent and waits until the center has
// all of it.
func throughAgent(ctx context.Context, center, agent *target, o options, pool textPool) error {
	time.Sleep(time.Second)
	idle := agent.memory("VmRSS")
	agentCPU, centerCPU := agent.cpu(), center.cpu()
	begin := time.Now()
	acks, err := driveOTLP(ctx, agent, o, pool, o.project+"-agent")
	if err != nil {
		return err
	}
	if err := waitGaugeZero(ctx, agent.url, `otelcol_exporter_queue_size{exporter="forward"}`); err != nil {
		return err
	}
	forwarded := time.Since(begin)
	fmt.Printf("through the agent: the same load; acknowledgements (in the agent's buffer):\n")
	acks.print("spans")
	fmt.Printf("  at the center  %.0f spans/s (all %d forwarded %v after the first request; %v after the last ack)\n",
		float64(o.calls)/forwarded.Seconds(), o.calls, forwarded.Round(time.Millisecond), (forwarded - acks.elapsed).Round(time.Millisecond))
	fmt.Printf("  CPU            agent %.1f s, center %.1f s (user+system, while forwarding)\n",
		(agent.cpu() - agentCPU).Seconds(), (center.cpu() - centerCPU).Seconds())
	fmt.Printf("  agent RSS      idle %s, peak %s\n", idle, agent.peakRSS())
	fmt.Printf("  center peak RSS %s\n", center.peakRSS())
	return nil
}

// lightLoad compares acknowledgement latency at a light, steady load
// (ten 10-span requests a second from one client) straight to the center
// and through the agent: what an application sees the agent add.
func lightLoad(ctx context.Context, center, agent *target, o options, pool textPool) error {
	light := o
	light.calls, light.batch, light.workers, light.rate = 1000, 10, 1, 100
	if err := waitGaugeZero(ctx, center.url, `otelcol_exporter_queue_size{exporter="storage"}`); err != nil {
		return err
	}
	direct, err := driveOTLP(ctx, center, light, pool, o.project+"-light-direct")
	if err != nil {
		return err
	}
	through, err := driveOTLP(ctx, agent, light, pool, o.project+"-light-agent")
	if err != nil {
		return err
	}
	d, a := sortedLatencies(direct), sortedLatencies(through)
	fmt.Printf("light load (100 spans/s in 10-span requests): ack p50/p99 %v / %v direct, %v / %v through the agent\n",
		pctSorted(d, 500), pctSorted(d, 990), pctSorted(a, 500), pctSorted(a, 990))
	center.stored, center.unit = 2*o.calls+2000, "span"
	return nil
}

func sortedLatencies(r loadRun) []time.Duration {
	s := slices.Clone(r.lats)
	slices.Sort(s)
	return s
}

// driveOTLP sends o.calls spans to t over OTLP/HTTP.
func driveOTLP(ctx context.Context, t *target, o options, pool textPool, project string) (loadRun, error) {
	send, err := otlpSender(ctx, t, "http")
	if err != nil {
		return loadRun{}, err
	}
	return drive(ctx, o, func(ctx context.Context, i, n int) (int, error) {
		req := llmSpans(rand.New(rand.NewPCG(uint64(i), uint64(len(project)))), pool, project, n, o.traceSpans, time.Now())
		return retrying(ctx, func() error { return send(ctx, req) })
	})
}

// startAgent runs `weft agent` forwarding to center, on a temp buffer.
func startAgent(ctx context.Context, bin string, center *target) (*target, error) {
	dir, err := os.MkdirTemp("", "weft-bench-agent")
	if err != nil {
		return nil, err
	}
	a := &target{key: center.key, tmpDir: dir, dataDir: dir}
	a.cmd, a.url, _, err = startWeft(ctx, bin, "agent", "--listen", "127.0.0.1:0", "--otlp-grpc-listen", "",
		"--data-dir", dir, "--upstream", center.url, "--log-level", "warn")
	if err != nil {
		a.close()
		return nil, err
	}
	return a, nil
}

// waitGaugeZero polls a weft's metrics until series is zero: nothing left
// to forward (an agent) or to store (a center).
func waitGaugeZero(ctx context.Context, url, series string) error {
	for {
		n, err := scrapeGauge(url+"/metrics", series)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func scrapeGauge(url, series string) (float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("%s serves no %s", url, series)
}

// cpu is the CPU time (user and system) the started process has used.
func (t *target) cpu() time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", t.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// The fields after the command name (which may hold spaces) start
	// after its closing parenthesis; utime and stime are the 12th and 13th.
	fields := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ is 100 on Linux
}
