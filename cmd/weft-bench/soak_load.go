package main

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// spanLoad exports batches of LLM spans with known ids into the agent
// over OTLP/HTTP protobuf; each span's prompt and completion differ.
// What the agent acknowledges goes in the ledger; a refused batch is
// sent again after the pause it asks for.
func (s *soak) spanLoad(ctx context.Context, stop <-chan struct{}, worker int, pace *pacer) {
	l := s.spans
	rng := rand.New(rand.NewPCG(s.nonce, uint64(worker)))
	for batch := 0; ; batch++ {
		if acked, _, _ := l.counts(); acked >= s.o.maxSpans {
			return
		}
		if !pace.wait(ctx, stop, s.o.spanBatch) {
			return
		}
		req, ids := s.spanRequest(rng, worker, batch)
		body, err := req.MarshalProto()
		if err != nil {
			panic(err) // built here, always marshals
		}
		r := soakReq{kind: "otlp export (agent)", proc: s.agent, method: "POST", path: "/otel/v1/traces", body: body,
			header: map[string]string{"Content-Type": "application/x-protobuf"}}
		if s.client.acked(ctx, stop, r) {
			l.ack(ids, true)
		}
	}
}

// spanRequest is one trace of n spans: a root and LLM children. Span ids
// carry the run, the worker and the batch, so they never repeat.
func (s *soak) spanRequest(rng *rand.Rand, worker, batch int) (ptraceotlp.ExportRequest, []string) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	entity, proj, _ := strings.Cut(s.spans.project, "/")
	rs.Resource().Attributes().PutStr("service.name", "weft-soak")
	rs.Resource().Attributes().PutStr("wandb.entity", entity)
	rs.Resource().Attributes().PutStr("wandb.project", proj)
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	var trace pcommon.TraceID
	binary.BigEndian.PutUint64(trace[:], s.nonce)
	binary.BigEndian.PutUint32(trace[8:], uint32(worker+1))
	binary.BigEndian.PutUint32(trace[12:], uint32(batch+1))
	now := time.Now()
	var root pcommon.SpanID
	ids := make([]string, 0, s.o.spanBatch)
	for i := range s.o.spanBatch {
		var id pcommon.SpanID
		binary.BigEndian.PutUint16(id[:], uint16(s.nonce))
		id[2] = byte(worker + 1)
		binary.BigEndian.PutUint32(id[3:], uint32(batch))
		id[7] = byte(i + 1)
		sp := spans.AppendEmpty()
		sp.SetTraceID(trace)
		sp.SetSpanID(id)
		if i == 0 {
			root = id
			sp.SetName("agent.run")
		} else {
			sp.SetParentSpanID(root)
			sp.SetName("chat gpt-4o")
		}
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Duration(50+i) * time.Millisecond)))
		a := sp.Attributes()
		a.PutStr("gen_ai.system", "openai")
		a.PutStr("gen_ai.request.model", "gpt-4o")
		a.PutInt("gen_ai.usage.input_tokens", int64(100+i))
		a.PutInt("gen_ai.usage.output_tokens", int64(40+i))
		hexID := hex.EncodeToString(id[:])
		a.PutStr("gen_ai.input.messages", `[{"role":"user","content":"`+hexID+` `+s.pool.pick(rng)+`"}]`)
		a.PutStr("gen_ai.output.messages", `[{"role":"assistant","content":"`+s.pool.pick(rng)+` `+hexID+`"}]`)
		ids = append(ids, hexID)
	}
	return ptraceotlp.NewExportRequestFromTraces(td), ids
}

// callLoad writes Weave calls into the agent as the Python SDK does:
// the starts of a batch in one request, their ends in the next, then two
// renames of the batch's root, so the center's final state shows whether
// they were applied in order. Every call of a batch is in one trace and
// one thread; each has its own inputs and output text.
func (s *soak) callLoad(ctx context.Context, stop <-chan struct{}, worker int, pace *pacer) {
	l := s.calls
	rng := rand.New(rand.NewPCG(s.nonce, uint64(100+worker)))
	for batch := 0; ; batch++ {
		if acked, _, _ := l.counts(); acked >= s.o.maxCalls {
			return
		}
		if !pace.wait(ctx, stop, s.o.callBatch) {
			return
		}
		prefix := fmt.Sprintf("%04x-w%d-b%d", uint16(s.nonce), worker, batch)
		ids, starts, ends := s.callBodies(rng, prefix)
		r := soakReq{kind: "call starts (agent)", proc: s.agent, method: "POST", path: "/call/upsert_batch", body: starts}
		if !s.client.acked(ctx, stop, r) {
			continue
		}
		l.ack(ids, false)
		r.kind, r.body = "call ends (agent)", ends
		if !s.client.acked(ctx, stop, r) {
			continue
		}
		l.end(ids)
		for _, name := range []string{"first", "second"} {
			body, _ := json.Marshal(map[string]any{"project_id": l.project, "call_id": ids[0], "display_name": name + "-" + ids[0]})
			r := soakReq{kind: "call rename (agent)", proc: s.agent, method: "POST", path: "/call/update", body: body}
			if !s.client.acked(ctx, stop, r) {
				break
			}
			l.rename(ids[0], name+"-"+ids[0])
		}
	}
}

// callBodies are the upsert_batch bodies of a batch's starts and ends.
func (s *soak) callBodies(rng *rand.Rand, prefix string) (ids []string, starts, ends []byte) {
	project := s.calls.project
	now := time.Now().UTC()
	thread := "thread-" + prefix[:strings.LastIndexByte(prefix, '-')] + fmt.Sprint(rng.IntN(20))
	var st, en []map[string]any
	for i := range s.o.callBatch {
		id := fmt.Sprintf("%s-%d", prefix, i)
		ids = append(ids, id)
		op := ops[i%len(ops)]
		start := map[string]any{"project_id": project, "id": id, "trace_id": prefix, "thread_id": thread, "turn_id": ids[0],
			"op_name": "weave:///" + project + "/op/" + op + ":v1", "started_at": now.Add(time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano),
			"attributes": map[string]any{"env": "soak", "worker": prefix},
			"inputs":     map[string]any{"prompt": id + " " + s.pool.pick(rng), "i": i}}
		if i > 0 {
			start["parent_id"] = ids[0]
		}
		st = append(st, map[string]any{"mode": "start", "req": map[string]any{"start": start}})
		en = append(en, map[string]any{"mode": "end", "req": map[string]any{"end": map[string]any{
			"project_id": project, "id": id, "ended_at": now.Add(time.Duration(40+i) * time.Millisecond).Format(time.RFC3339Nano),
			"output":  map[string]any{"text": s.pool.pick(rng) + " " + id},
			"summary": map[string]any{"usage": map[string]any{"gpt-4o": map[string]any{"prompt_tokens": 10 + i, "completion_tokens": 20, "requests": 1}}}}}})
	}
	starts, _ = json.Marshal(map[string]any{"batch": st})
	ends, _ = json.Marshal(map[string]any{"batch": en})
	return ids, starts, ends
}
