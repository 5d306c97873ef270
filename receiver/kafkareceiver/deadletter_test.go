package kafkareceiver

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/storage"
)

// rejectingWriter refuses, as invalid, any batch holding a call whose id
// starts with "reject": a backend's answer to data it can never store.
type rejectingWriter struct{ storage.CallWriter }

func (r rejectingWriter) WriteCallOps(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	for _, op := range ops {
		if op.Part != nil && strings.HasPrefix(op.Part.Call.ID, "reject") {
			return nil, fmt.Errorf("%w: call %s: inputs too deep", storage.ErrInvalidArgument, op.Part.Call.ID)
		}
	}
	return r.CallWriter.WriteCallOps(ctx, ops)
}

func TestPoisonRecordsAreDeadLetteredAndDoNotBlock(t *testing.T) {
	_, cfg := startKafka(t, "calls-poison")
	store := openStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	project := "acme/poison"
	values := poisonRecords(t, project)
	// All records share the project key, so they sit in one partition at
	// offsets 0..6, the poison ones between good calls.
	poison := map[int64]string{2: "malformed record", 3: "unknown record version", 4: "storage rejected the op"}
	writeRaw(ctx, t, cfg, project, values)

	proc := startProcessor(t, cfg, rejectingWriter{store})
	l := newLedger()
	l.add(project, "before")
	l.add(project, "after")
	waitLanded(t, store, l)
	waitFor(t, 30*time.Second, "three dead letters to be counted", func() bool { return proc.Stats().DeadLettered >= 3 })

	for _, m := range readTopic(ctx, t, cfg.Brokers, cfg.DeadLetterTopic, len(poison)) {
		h := headerMap(m.Headers)
		off, _ := strconv.ParseInt(h[HeaderOffset], 10, 64)
		want, ok := poison[off]
		switch {
		case !ok || !strings.Contains(h[HeaderReason], want):
			t.Errorf("dead letter at offset %d has reason %q, want one containing %q", off, h[HeaderReason], want)
		case string(m.Key) != project || string(m.Value) != string(values[off]):
			t.Errorf("dead letter at offset %d changed key or value: %q %q", off, m.Key, m.Value)
		case h[HeaderTopic] != cfg.Topic || h[HeaderPartition] == "" || h[HeaderTime] == "" || h["origin"] != "test":
			t.Errorf("dead letter at offset %d lacks its origin headers: %v", off, h)
		}
		delete(poison, off)
	}
}

// poisonRecords returns a good call, garbage, a future version, a call
// storage rejects, and another good call, in that order.
func poisonRecords(t *testing.T, project string) [][]byte {
	encode := func(op storage.CallOp) []byte {
		v, err := kafkabase.Encode(op)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	rejected := storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: storage.Call{
		ProjectID: project, ID: "reject-1", StartedAt: callStart, Inputs: json.RawMessage(`{}`)}}}
	return [][]byte{
		encode(endOp(project, "before")), encode(startOp(project, "before")),
		[]byte("\x00\x01 not an envelope"),
		[]byte(`{"v":9,"op":"start","call":{"project_id":"` + project + `","id":"future"}}`),
		encode(rejected),
		encode(endOp(project, "after")), encode(startOp(project, "after")),
	}
}

// writeRaw produces values as they are, bypassing the Producer's encoding.
func writeRaw(ctx context.Context, t *testing.T, cfg kafkabase.Config, key string, values [][]byte) {
	msgs := make([]kafka.Message, len(values))
	for i, v := range values {
		msgs[i] = kafka.Message{Key: []byte(key), Value: v, Headers: []kafka.Header{{Key: "origin", Value: []byte("test")}}}
	}
	writeMessages(ctx, t, cfg, msgs)
}

func TestDeadLetterMessageTruncatesOversizedValues(t *testing.T) {
	long := strings.Repeat("x", 2000)
	tests := []struct {
		name      string
		value     string
		wantValue int
		truncated string
	}{
		{"fits", "small", 5, ""},
		{"too big", long, 1024 - len("key"), "2000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := letter{msg: kafka.Message{Topic: "t", Partition: 1, Offset: 9, Key: []byte("key"), Value: []byte(tc.value)},
				reason: strings.Repeat("r", 3000)}
			m := deadLetterMessage(l, "now", 1024)
			h := headerMap(m.Headers)
			if len(m.Value) != tc.wantValue || h[HeaderTruncated] != tc.truncated {
				t.Fatalf("value %d bytes, truncated header %q; want %d, %q", len(m.Value), h[HeaderTruncated], tc.wantValue, tc.truncated)
			}
			if len(h[HeaderReason]) != maxReasonBytes || h[HeaderOffset] != "9" || h[HeaderPartition] != "1" {
				t.Fatalf("headers wrong: reason %d bytes, %v", len(h[HeaderReason]), h)
			}
		})
	}
}

func headerMap(hs []kafka.Header) map[string]string {
	out := map[string]string{}
	for _, h := range hs {
		out[h.Key] = string(h.Value)
	}
	return out
}

// readTopic reads n records from every partition of topic, bounded by ctx.
func readTopic(ctx context.Context, t *testing.T, brokers []string, topic string, n int) []kafka.Message {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, GroupID: topic + "-reader", Topic: topic,
		StartOffset: kafka.FirstOffset, MaxWait: 100 * time.Millisecond,
		HeartbeatInterval: 100 * time.Millisecond, SessionTimeout: 10 * time.Second})
	defer r.Close()
	var out []kafka.Message
	for len(out) < n {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatalf("reading %s: got %d of %d records: %v", topic, len(out), n, err)
		}
		out = append(out, m)
	}
	return out
}
