package kafkareceiver

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/receiver/otelmap"
	"github.com/weftdev/weft/storage"
)

// otlpSpan describes one span of a test record.
type otlpSpan struct {
	id   byte // span id 00..0<id>; 0 leaves the id empty (unmappable)
	name string
}

// otlpRecord is one Kafka record as the Collector's Kafka exporter writes
// it with encoding otlp_proto: a TracesData marshalled by pdata.
func otlpRecord(t *testing.T, attrs map[string]string, spans ...otlpSpan) []byte {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	for k, v := range attrs {
		rs.Resource().Attributes().PutStr(k, v)
	}
	ss := rs.ScopeSpans().AppendEmpty()
	for _, s := range spans {
		span := ss.Spans().AppendEmpty()
		span.SetName(s.name)
		span.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
		if s.id != 0 {
			span.SetSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, s.id})
		}
		now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
		span.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
		span.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Second)))
	}
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func spanCallID(id byte) string { return pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, id}.String() }

// TestOTLPTopicRecordsBecomeCalls feeds the OTLP topic the records a
// stock Collector writes, projects placed each way the consumer supports,
// among poison records. Good spans land once each (also after the records
// are delivered a second time), and every poison record is dead-lettered
// with its reason while the partition moves on.
func TestOTLPTopicRecordsBecomeCalls(t *testing.T) {
	_, base := startKafka(t, "otlp-calls")
	ocfg := OTLPConfig{Topic: "otlp_spans", Group: "weft-otlp-test", DefaultProject: "",
		Projects: map[string]string{"checkout": "acme/checkout"}}
	kcfg := ocfg.Kafka(base)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := kafkabase.EnsureTopics(ctx, kcfg, discard); err != nil {
		t.Fatal(err)
	}
	records := []struct {
		name    string
		header  string
		value   []byte
		project string // where its good spans land
		ids     []byte
		poison  string // dead-letter reason, if any
	}{
		{"resource attributes", "", otlpRecord(t, map[string]string{"wandb.entity": "acme", "wandb.project": "res"}, otlpSpan{1, "a"}, otlpSpan{2, "b"}), "acme/res", []byte{1, 2}, ""},
		{"service.name mapping", "", otlpRecord(t, map[string]string{"service.name": "checkout"}, otlpSpan{3, "c"}), "acme/checkout", []byte{3}, ""},
		{"project_id header", "acme/header", otlpRecord(t, map[string]string{"service.name": "other"}, otlpSpan{4, "d"}), "acme/header", []byte{4}, ""},
		{"not protobuf", "", []byte("\xff\xff\xff not otlp"), "", nil, "not an OTLP protobuf trace record"},
		{"no project anywhere", "", otlpRecord(t, map[string]string{"service.name": "unknown"}, otlpSpan{5, "e"}), "", nil, "no span of the record could be mapped"},
		{"malformed project header", "noslash", otlpRecord(t, nil, otlpSpan{6, "f"}), "", nil, "entity/project"},
		{"one span unmappable", "acme/partial", otlpRecord(t, nil, otlpSpan{7, "g"}, otlpSpan{0, "no id"}), "acme/partial", []byte{7}, "1 of 2 spans could not be mapped"},
	}
	msgs := make([]kafka.Message, len(records))
	for i, r := range records {
		msgs[i] = kafka.Message{Key: []byte("k"), Value: r.value}
		if r.header != "" {
			msgs[i].Headers = []kafka.Header{{Key: ProjectHeader, Value: []byte(r.header)}}
		}
	}
	writeMessages(ctx, t, kcfg, msgs)
	store := openStore(t)
	proc := startOTLPReceiver(ctx, t, base, ocfg, store)

	want := map[string][]string{}
	poison := map[int64]string{}
	for i, r := range records {
		for _, id := range r.ids {
			want[r.project] = append(want[r.project], spanCallID(id))
		}
		if r.poison != "" {
			poison[int64(i)] = r.poison
		}
	}
	waitFor(t, 60*time.Second, "every poison record dead-lettered", func() bool { return proc.Stats().DeadLettered >= int64(len(poison)) })
	// A redelivery (a crash before the commit) brings the same records
	// again: the calls must not double.
	writeMessages(ctx, t, kcfg, msgs[:3])
	waitFor(t, 60*time.Second, "the redelivered records handled", func() bool { return proc.Stats().Records >= int64(len(msgs)+3) })
	for project, ids := range want {
		checkSpanCalls(t, storedCalls(t, store, project), project, ids)
	}
	for _, m := range readTopic(ctx, t, base.Brokers, kcfg.DeadLetterTopic, len(poison)) {
		h := headerMap(m.Headers)
		off, _ := strconv.ParseInt(h[HeaderOffset], 10, 64)
		if reason, ok := poison[off]; !ok || !strings.Contains(h[HeaderReason], reason) || h[HeaderTopic] != "otlp_spans" {
			t.Errorf("dead letter of offset %d: reason %q, topic %q; want a reason containing %q", off, h[HeaderReason], h[HeaderTopic], reason)
		}
		if string(m.Value) != string(msgs[off].Value) {
			t.Errorf("dead letter of offset %d changed the record's value", off)
		}
	}
}

// startOTLPReceiver runs an OTLP topic consumer writing to store until
// the test ends.
func startOTLPReceiver(ctx context.Context, t *testing.T, base kafkabase.Config, ocfg OTLPConfig, store storage.CallWriter) *Receiver {
	t.Helper()
	proc, err := NewOTLPReceiver(telemetry.NopSettings("kafka"), base, ocfg, otelmap.NewMapper(otelmap.Options{}), pipelineTo(t, store))
	if err != nil {
		t.Fatal(err)
	}
	run := &running{Receiver: proc, done: make(chan struct{})}
	rctx, stop := context.WithCancel(ctx)
	run.cancel = stop
	go func() { run.err = proc.Run(rctx); close(run.done) }()
	t.Cleanup(func() { run.stop(t) })
	return proc
}

// checkSpanCalls checks that project holds exactly the calls of ids, once
// each, complete.
func checkSpanCalls(t *testing.T, stored []storage.StoredCall, project string, ids []string) {
	t.Helper()
	rows := map[string]int{}
	for _, c := range stored {
		rows[c.ID]++
		if c.EndedAt == nil || c.StartedAt.IsZero() {
			t.Errorf("%s/%s incomplete", project, c.ID)
		}
	}
	for _, id := range ids {
		if rows[id] != 1 {
			t.Errorf("%s/%s stored %d times, want exactly once", project, id, rows[id])
		}
	}
	if len(rows) != len(ids) {
		t.Errorf("%s holds %d calls, want %d: %v", project, len(rows), len(ids), rows)
	}
}

func writeMessages(ctx context.Context, t *testing.T, cfg kafkabase.Config, msgs []kafka.Message) {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(cfg.Brokers...), Topic: cfg.Topic, Balancer: kafka.Murmur2Balancer{Consistent: true},
		RequiredAcks: kafka.RequireAll, BatchTimeout: 2 * time.Millisecond}
	defer w.Close()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
}

func TestOTLPConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  OTLPConfig
		want string
	}{
		{"off", OTLPConfig{}, ""},
		{"on", OTLPConfig{Topic: "otlp_spans", Group: "g"}, ""},
		{"no group", OTLPConfig{Topic: "otlp_spans"}, "kafka_otlp.group"},
		{"dead letters on the same topic", OTLPConfig{Topic: "t", Group: "g", DeadLetterTopic: "t"}, "kafka_otlp.dead_letter_topic"},
		{"bad mapping", OTLPConfig{Topic: "t", Group: "g", Projects: map[string]string{"svc": "nope"}}, `kafka_otlp.projects["svc"]`},
		{"bad default", OTLPConfig{Topic: "t", Group: "g", DefaultProject: "a/b/c"}, "kafka_otlp.default_project"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate = %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

// FuzzOTLPRecord: any record value and project header decode to calls in
// well-formed projects, or fail with a reason; never a panic.
func FuzzOTLPRecord(f *testing.F) {
	f.Add(otlpRecordBytes(map[string]string{"service.name": "checkout"}), "")
	f.Add(otlpRecordBytes(nil), "acme/x")
	f.Add([]byte("\x0a\x02\x0a\x00"), "a/b/c")
	d := otlpDecoder{cfg: OTLPConfig{Projects: map[string]string{"checkout": "acme/checkout"}}, mapper: otelmap.NewMapper(otelmap.Options{})}
	f.Fuzz(func(t *testing.T, value []byte, header string) {
		msg := kafka.Message{Value: value, Headers: []kafka.Header{{Key: ProjectHeader, Value: []byte(header)}}}
		ops, partial, err := d.decode(msg)
		if err != nil && (len(ops) > 0 || partial != "") {
			t.Fatalf("a failed decode returned %d ops and reason %q", len(ops), partial)
		}
		for _, op := range ops {
			if p := op.ProjectID(); strings.Count(p, "/") != 1 || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
				t.Fatalf("call in malformed project %q", p)
			}
		}
	})
}

func otlpRecordBytes(attrs map[string]string) []byte {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	for k, v := range attrs {
		rs.Resource().Attributes().PutStr(k, v)
	}
	span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetTraceID(pcommon.TraceID{1})
	span.SetSpanID(pcommon.SpanID{1})
	span.SetStartTimestamp(1)
	b, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	return b
}
