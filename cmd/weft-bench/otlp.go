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
// clients (at o.rate spans/s when set), and prints spans/s overall and per
// window, ack latency, peak RSS and the bytes stored per span.
func benchOTLP(ctx context.Context, t *target, o options) error {
	pool := newTextPool(1<<16, max(o.payload-400, 0)/2)
	sample, err := llmSpans(rand.New(rand.NewPCG(0, 0)), pool, o.project, max(o.batch, 1), o.traceSpans, time.Now()).MarshalProto()
	if err != nil {
		return err
	}
	t.wireBytes = float64(len(sample)) / float64(max(o.batch, 1))
	fmt.Printf("otlp: %.0f bytes per span on the wire (protobuf, uncompressed)\n", t.wireBytes)
	stored := 0
	for _, transport := range strings.Split(o.transports, ",") {
		if transport == "grpc" && t.grpcAddr == "" {
			fmt.Println("otlp/grpc: skipped (no OTLP/gRPC address; start weft with --weft)")
			continue
		}
		send, err := otlpSender(ctx, t, transport)
		if err != nil {
			return err
		}
		project := o.project + "-" + transport
		if o.skipLoad {
			if err := otlpReads(ctx, t, o, project, pool, transport); err != nil {
				return err
			}
			continue
		}
		cpu := t.cpuSeconds()
		day := spanDay(time.Now(), o)
		r, err := drive(ctx, o, func(ctx context.Context, i, n int) (int, error) {
			req := llmSpans(spanRNG(i, transport), pool, project, n, o.traceSpans, day(i))
			return retrying(ctx, func() error { return send(ctx, req) })
		})
		if err != nil {
			return err
		}
		stored += o.calls
		fmt.Printf("otlp/%s: %d spans of ~%d B in %d-span requests, %d workers, offered %s\n",
			transport, o.calls, o.payload, o.batch, o.workers, offered(o.rate, "spans"))
		r.print("spans")
		if used := t.cpuSeconds() - cpu; cpu >= 0 {
			fmt.Printf("  server CPU  %.1f µs per span (user+system)\n", used/float64(o.calls)*1e6)
		}
		if o.reads {
			if err := otlpReads(ctx, t, o, project, pool, transport); err != nil {
				return err
			}
		}
	}
	fmt.Printf("  peak RSS    %s\n", t.peakRSS())
	t.stored, t.unit = stored, "span"
	return nil
}

func offered(rate int, unit string) string {
	if rate <= 0 {
		return "as fast as answered"
	}
	return fmt.Sprintf("%d %s/s", rate, unit)
}

// errRetry marks an overload answer the sender should retry.
var errRetry = fmt.Errorf("retry")

// retrying calls f until it is not refused for overload, pausing between
// tries as SDKs do, and reports how many refusals it went through.
func retrying(ctx context.Context, f func() error) (int, error) {
	for refusals := 0; ; refusals++ {
		err := f()
		if err != errRetry {
			return refusals, err
		}
		select {
		case <-ctx.Done():
			return refusals, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// llmSpans builds the spans of one request: traces of traceSpans spans
// (a root agent span and LLM children carrying GenAI attributes with
// distinct prompt and completion text), each started within a few seconds
// after at, with latencies, token counts and a few errors that differ per
// span, so reads that sort, filter and chart by them work on realistic
// data. Spans arrive about when they happened, as from a live app.
func llmSpans(rng *rand.Rand, pool textPool, project string, n, traceSpans int, at time.Time) ptraceotlp.ExportRequest {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	entity, proj, _ := strings.Cut(project, "/")
	rs.Resource().Attributes().PutStr("service.name", "weft-bench")
	rs.Resource().Attributes().PutStr("wandb.entity", entity)
	rs.Resource().Attributes().PutStr("wandb.project", proj)
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	var trace pcommon.TraceID
	var root pcommon.SpanID
	var start time.Time
	for i := range n {
		s := spans.AppendEmpty()
		var id pcommon.SpanID
		if i%max(traceSpans, 1) == 0 {
			fillRandom(rng, trace[:])
			start = at.Add(time.Duration(rng.Int64N(int64(5 * time.Second))))
		}
		fillRandom(rng, id[:])
		s.SetTraceID(trace)
		s.SetSpanID(id)
		latency := 50*time.Millisecond + time.Duration(rng.ExpFloat64()*float64(800*time.Millisecond))
		if i%max(traceSpans, 1) == 0 {
			root = id
			s.SetName("agent.run")
			latency *= time.Duration(traceSpans)
		} else {
			s.SetParentSpanID(root)
			s.SetName("chat gpt-4o")
			if rng.IntN(50) == 0 {
				s.Status().SetCode(ptrace.StatusCodeError)
				s.Status().SetMessage("upstream returned 503")
			}
		}
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(latency)))
		a := s.Attributes()
		a.PutStr("gen_ai.request.model", "gpt-4o")
		a.PutInt("gen_ai.usage.input_tokens", 20+rng.Int64N(2000))
		a.PutInt("gen_ai.usage.output_tokens", 10+rng.Int64N(1000))
		a.PutStr("gen_ai.input.messages", `[{"role":"user","content":"`+pool.pick(rng)+`"}]`)
		a.PutStr("gen_ai.output.messages", `[{"role":"assistant","content":"`+pool.pick(rng)+`"}]`)
	}
	return ptraceotlp.NewExportRequestFromTraces(td)
}

// spanDay spreads a load's requests over the day before end, in order:
// the store then holds a day of traffic, as written while it happened.
func spanDay(end time.Time, o options) func(i int) time.Time {
	requests := max((o.calls+o.batch-1)/o.batch, 1)
	return func(i int) time.Time {
		return end.Add(-24 * time.Hour).Add(time.Duration(int64(i) * int64(24*time.Hour) / int64(requests)))
	}
}

// spanRNG is the generator of request i's spans: regenerated, it gives
// the ids that request sent.
func spanRNG(i int, transport string) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(i), uint64(len(transport))))
}

func fillRandom(rng *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	b[0] |= 1 // never all zero
}

type sendFunc func(ctx context.Context, req ptraceotlp.ExportRequest) error

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
		// Uncompressed, as the HTTP sender: the two transports are compared
		// on the same bytes.
		_, err := client.Export(ctx, req)
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
