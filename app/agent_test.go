package app_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/weftdev/weft/app"
	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/internal/kafkatest"
)

// TestAgentForwardsStraightToKafka runs the agent role with Kafka as its
// upstream: Weave writes over HTTP and spans from the OpenTelemetry SDK
// over gRPC (mapped to calls on receipt, with no key store to ask) land
// on the call topic in the format the process role reads.
func TestAgentForwardsStraightToKafka(t *testing.T) {
	cfg, agent := startKafkaAgent(t)
	ctx := context.Background()
	body := `{"batch":[{"mode":"start","req":{"start":{"project_id":"acme/weave","id":"w1","trace_id":"t1","op_name":"chat",
		"started_at":"2025-01-01T00:00:00Z","attributes":{},"inputs":{"q":"hi"}}}}]}`
	resp, err := http.Post("http://"+agent.Addr()+"/call/upsert_batch", "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("upsert_batch through the agent = %d", resp.StatusCode)
	}
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(agent.GRPCAddr()), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithResource(resource.NewSchemaless(
		attribute.String("wandb.entity", "acme"), attribute.String("wandb.project", "otel"))))
	_, span := tp.Tracer("agent-test").Start(ctx, "llm call")
	span.End()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("exporting to the agent: %v", err)
	}

	got := map[string]string{} // project -> op name
	for _, m := range readCallTopic(t, cfg.Kafka, 2) {
		op, err := kafkabase.Decode(m.Value)
		if err != nil {
			t.Fatalf("record on the call topic is not an envelope: %v", err)
		}
		if string(m.Key) != op.ProjectID() {
			t.Errorf("record keyed %q for project %q", m.Key, op.ProjectID())
		}
		got[op.ProjectID()] = op.Part.Call.OpName
	}
	if got["acme/weave"] != "chat" || got["acme/otel"] != "llm call" {
		t.Fatalf("call topic holds %v, want the Weave call and the span", got)
	}
}

// startKafkaAgent runs an agent forwarding to a fresh Kafka cluster.
func startKafkaAgent(t *testing.T) (config.Config, *app.Agent) {
	t.Helper()
	cluster := kafkatest.Start(t)
	cfg := config.Default()
	cfg.Roles, cfg.DataDir = config.RoleAgent, t.TempDir()
	cfg.Listen, cfg.OTLPGRPCListen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Kafka = kafkatest.Config(cluster.Addrs(), "agent-calls")
	cfg.KafkaBrokers = cluster.Addrs()[0]
	cfg.Agent.APIKey = "weft-configured"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	agent, err := app.NewAgent(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := agent.Listen(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- agent.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return cfg, agent
}

func readCallTopic(t *testing.T, cfg kafkabase.Config, n int) []kafka.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: cfg.Brokers, GroupID: "agent-test-reader", Topic: cfg.Topic,
		StartOffset: kafka.FirstOffset, MaxWait: 100 * time.Millisecond, HeartbeatInterval: 100 * time.Millisecond})
	defer r.Close()
	var out []kafka.Message
	for len(out) < n {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatalf("reading %s: %d of %d records: %v", cfg.Topic, len(out), n, err)
		}
		out = append(out, m)
	}
	return out
}
