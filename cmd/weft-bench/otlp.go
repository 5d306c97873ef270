package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/encoding/gzip" // registers the gzip compressor for clients
	"google.golang.org/grpc/metadata"
)

// benchOTLP sends o.calls LLM-like spans of ~o.payload bytes in requests of
// o.batch spans over OTLP/HTTP protobuf and then OTLP/gRPC, from o.workers
// clients, and prints spans/s, ack latency and peak RSS.
func benchOTLP(ctx context.Context, t *target, o options) error {
	for _, transport := range []string{"http", "grpc"} {
		if transport == "grpc" && t.grpcAddr == "" {
			fmt.Println("otlp/grpc: skipped (no OTLP/gRPC address; start weft with --weft)")
			continue
		}
		send, err := otlpSender(ctx, t, transport)
		if err != nil {
			return err
		}
		elapsed, lat, err := sendSpans(ctx, o, transport, send)
		if err != nil {
			return err
		}
		fmt.Printf("otlp/%s: %d spans of ~%d B in %d-span requests, %d workers\n", transport, o.calls, o.payload, o.batch, o.workers)
		fmt.Printf("  throughput  %.0f spans/s\n", float64(o.calls)/elapsed.Seconds())
		fmt.Printf("  ack latency p50 %v  p99 %v  (per request)\n", pct(lat, 50), pct(lat, 99))
	}
	fmt.Printf("  peak RSS    %s\n", t.peakRSS())
	return nil
}

type sendFunc func(ctx context.Context, req ptraceotlp.ExportRequest) error

func sendSpans(ctx context.Context, o options, transport string, send sendFunc) (time.Duration, []time.Duration, error) {
	requests := (o.calls + o.batch - 1) / o.batch
	var next atomic.Int64
	var mu sync.Mutex
	var lats []time.Duration
	var firstErr error
	begin := time.Now()
	var wg sync.WaitGroup
	for w := range o.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for ctx.Err() == nil {
				n := int(next.Add(1)) - 1
				if n >= requests {
					return
				}
				req := llmSpans(rng, o.project+"-"+transport, min(o.batch, o.calls-n*o.batch), o.payload)
				start := time.Now()
				err := retrying(ctx, func() error { return send(ctx, req) })
				mu.Lock()
				lats = append(lats, time.Since(start))
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(begin), lats, firstErr
}

// errRetry marks an overload answer the sender should retry.
var errRetry = fmt.Errorf("retry")

func retrying(ctx context.Context, f func() error) error {
	for {
		err := f()
		if err != errRetry {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// llmSpans builds one trace per request: a root agent span and LLM children
// carrying GenAI attributes, padded to ~payload bytes each.
func llmSpans(rng *rand.Rand, project string, n, payload int) ptraceotlp.ExportRequest {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	entity, proj, _ := strings.Cut(project, "/")
	rs.Resource().Attributes().PutStr("service.name", "weft-bench")
	rs.Resource().Attributes().PutStr("wandb.entity", entity)
	rs.Resource().Attributes().PutStr("wandb.project", proj)
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	var trace pcommon.TraceID
	fillRandom(rng, trace[:])
	var root pcommon.SpanID
	pad := strings.Repeat("lorem ipsum ", max(payload-400, 0)/24)
	now := time.Now()
	for i := range n {
		s := spans.AppendEmpty()
		var id pcommon.SpanID
		fillRandom(rng, id[:])
		s.SetTraceID(trace)
		s.SetSpanID(id)
		if i == 0 {
			root = id
			s.SetName("agent.run")
		} else {
			s.SetParentSpanID(root)
			s.SetName("chat gpt-4o")
		}
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(420 * time.Millisecond)))
		a := s.Attributes()
		a.PutStr("gen_ai.request.model", "gpt-4o")
		a.PutInt("gen_ai.usage.input_tokens", 120)
		a.PutInt("gen_ai.usage.output_tokens", 48)
		a.PutStr("gen_ai.input.messages", `[{"role":"user","content":"`+pad+`"}]`)
		a.PutStr("gen_ai.output.messages", `[{"role":"assistant","content":"`+pad+`"}]`)
	}
	return ptraceotlp.NewExportRequestFromTraces(td)
}

func fillRandom(rng *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	b[0] |= 1 // never all zero
}

func otlpSender(ctx context.Context, t *target, transport string) (sendFunc, error) {
	if transport == "http" {
		client := &http.Client{Timeout: time.Minute}
		return func(ctx context.Context, req ptraceotlp.ExportRequest) error {
			return postOTLP(ctx, client, t, req)
		}, nil
	}
	conn, err := grpc.NewClient(t.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, func() { _ = conn.Close() })
	client := ptraceotlp.NewGRPCClient(conn)
	return func(ctx context.Context, req ptraceotlp.ExportRequest) error {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+t.key)
		_, err := client.Export(ctx, req, grpc.UseCompressor("gzip"))
		if err != nil && strings.Contains(err.Error(), "ResourceExhausted") {
			return errRetry
		}
		return err
	}, nil
}

func postOTLP(ctx context.Context, c *http.Client, t *target, req ptraceotlp.ExportRequest) error {
	body, err := req.MarshalProto()
	if err != nil {
		return err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url+"/otel/v1/traces", bytes.NewReader(body))
	if err != nil {
		return err
	}
	r.Header.Set("Content-Type", "application/x-protobuf")
	r.Header.Set("wandb-api-key", t.key)
	resp, err := c.Do(r)
	if err != nil {
		return err
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return errRetry
	}
	return fmt.Errorf("otlp/http: %d %s", resp.StatusCode, hex.EncodeToString(out[:min(len(out), 64)]))
}
