package otlpreceiver

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// waitState waits until cc reaches want or the deadline passes.
func waitState(ctx context.Context, cc *grpc.ClientConn, want connectivity.State) bool {
	for s := cc.GetState(); s != want; s = cc.GetState() {
		if !cc.WaitForStateChange(ctx, s) {
			return false
		}
	}
	return true
}

// A connection without calls is closed once it has been idle for
// MaxConnectionIdle: the client sees it go idle.
func TestGRPCIdleConnectionIsClosed(t *testing.T) {
	addr := serveGRPC(t, Config{}, &recorder{}, nil, ConnLimits{MaxConnectionIdle: 300 * time.Millisecond}.ServerOptions()...)
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	md := metadata.AppendToOutgoingContext(ctx, "wandb-api-key", fixtureKey)
	if _, err := ptraceotlp.NewGRPCClient(cc).Export(md, ptraceotlp.NewExportRequestFromTraces(traces(1, "acme/demo"))); err != nil {
		t.Fatal(err)
	}
	if !waitState(ctx, cc, connectivity.Idle) {
		t.Fatalf("connection still %v long after the idle limit", cc.GetState())
	}
}

// Keepalive enforcement cannot be shown quickly (gRPC clients ping every
// 10s at the most and the server tolerates two strikes); the options are.
func TestGRPCServerOptions(t *testing.T) {
	if n := len((ConnLimits{}).ServerOptions()); n != 2 {
		t.Errorf("zero limits give %d options, want the 2 keepalive ones", n)
	}
	if n := len((ConnLimits{MaxConcurrentStreams: 4, HandshakeTimeout: time.Second}).ServerOptions()); n != 4 {
		t.Errorf("full limits give %d options, want 4", n)
	}
}
