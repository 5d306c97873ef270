package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
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
	time.Sleep(time.Second)
	idle := agent.memory("VmRSS")
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
	fmt.Printf("  agent RSS      idle %s, peak %s\n", idle, agent.peakRSS())
	fmt.Printf("  center peak RSS %s\n", center.peakRSS())
	center.stored, center.unit = 2*o.calls, "span"
	return nil
}

// driveOTLP sends o.calls spans to t over OTLP/HTTP.
func driveOTLP(ctx context.Context, t *target, o options, pool textPool, project string) (loadRun, error) {
	send, err := otlpSender(ctx, t, "http")
	if err != nil {
		return loadRun{}, err
	}
	return drive(ctx, o, func(ctx context.Context, i, n int) (int, error) {
		req := llmSpans(rand.New(rand.NewPCG(uint64(i), uint64(len(project)))), pool, project, n)
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
