package kafkaexporter

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/internal/kafkatest"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/storage"
)

func TestSubmitRefusesWithoutContactingKafka(t *testing.T) {
	cfg := kafkatest.Config([]string{kafkatest.DeadAddr(t)}, "refuse")
	cfg.MaxMessageBytes = 2048
	huge := startOp("e/p", "big")
	huge.Part.Call.Inputs = json.RawMessage(`{"blob":"` + strings.Repeat("x", 4096) + `"}`)
	tests := []struct {
		name string
		ops  []storage.CallOp
		want error
	}{
		{"op above max_message_bytes", []storage.CallOp{startOp("e/p", "a"), huge}, storage.ErrTooLarge},
		{"op without body", []storage.CallOp{{}}, storage.ErrInvalidArgument},
	}
	p := newProducer(t, cfg)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := p.ConsumeCalls(context.Background(), tc.ops); !errors.Is(err, tc.want) {
				t.Fatalf("Submit = %v, want %v", err, tc.want)
			}
		})
	}
	if res, err := p.ConsumeCalls(context.Background(), nil); err != nil || res != nil {
		t.Fatalf("empty Submit = %v, %v; want nothing", res, err)
	}
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ConsumeCalls(context.Background(), []storage.CallOp{startOp("e/p", "a")}); !errors.Is(err, consumer.ErrStopped) {
		t.Fatalf("Submit after Stop = %v, want ErrStopped", err)
	}
}

func TestAdmitBoundsInFlightWork(t *testing.T) {
	tests := []struct {
		name             string
		inOps            int
		inBytes          int64
		ops              int
		bytes            int64
		want             error
		wantOps, wantMem int64
	}{
		{"fits", 5, 100, 5, 100, nil, 10, 200},
		{"ops full", 8, 0, 3, 10, consumer.ErrOverloaded, 8, 0},
		{"bytes full", 0, 1 << 20, 1, 1, consumer.ErrOverloaded, 0, 1 << 20},
		{"larger than the bound", 0, 0, 11, 10, storage.ErrTooLarge, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := kafkatest.Config([]string{"127.0.0.1:1"}, "admit")
			cfg.Producer.MaxInFlightOps, cfg.Producer.MaxInFlightBytes = 10, 1<<20
			p := newProducer(t, cfg)
			if err := p.inOps.Admit(tc.inOps, tc.inBytes); err != nil {
				t.Fatal(err)
			}
			err := p.admit(tc.ops, tc.bytes)
			ops, bytes := p.inOps.Held()
			if !errors.Is(err, tc.want) || int64(ops) != tc.wantOps || bytes != tc.wantMem {
				t.Fatalf("admit = %v with %d ops / %d bytes in flight; want %v, %d / %d", err, ops, bytes, tc.want, tc.wantOps, tc.wantMem)
			}
			if err == nil {
				p.release(tc.ops, tc.bytes)
			}
		})
	}
}

func TestSubmitToDeadBrokerIsUnavailable(t *testing.T) {
	cfg := kafkatest.Config([]string{kafkatest.DeadAddr(t)}, "dead")
	p := newProducer(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := p.ConsumeCalls(ctx, []storage.CallOp{startOp("e/p", "a")})
	if !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("Submit = %v, want ErrUnavailable", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Submit used up the caller's whole deadline instead of answering at once")
	}
	if s := p.Stats(); s.FailedOps != 1 || s.AckedOps != 0 {
		t.Fatalf("stats %+v; want one failed op", s)
	}
}

func startOp(project, id string) storage.CallOp {
	return storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{
		ProjectID: project, ID: id, TraceID: "t-" + id, OpName: "op",
		Attributes: json.RawMessage(`{}`), Inputs: json.RawMessage(`{"id":"` + id + `"}`)}}}
}

func newProducer(t testing.TB, cfg kafkabase.Config) *Producer {
	t.Helper()
	p, err := NewProducer(telemetry.NopSettings("kafka"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(context.Background()) })
	return p
}
