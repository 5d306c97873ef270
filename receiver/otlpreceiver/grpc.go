package otlpreceiver

import (
	"context"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip" // registers the gzip compressor OTLP exporters use
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/internal/telemetry"
)

// ConnLimits bound the connections of the OTLP/gRPC server, as the HTTP
// listener's are bounded.
type ConnLimits struct {
	// MaxConnectionIdle closes a connection that has had no call for this
	// long (a GOAWAY; clients reconnect when they next export).
	MaxConnectionIdle time.Duration
	// KeepaliveMinTime is the shortest interval between client keepalive
	// pings; a client pinging more often is disconnected. Pings on
	// connections without calls are allowed, as exporters send them.
	KeepaliveMinTime time.Duration
	// MaxConcurrentStreams caps the calls in flight on one connection.
	MaxConcurrentStreams uint32
	// HandshakeTimeout bounds setting up a new connection.
	HandshakeTimeout time.Duration
}

// ServerOptions are the grpc.ServerOptions enforcing l; zero fields keep
// gRPC's defaults.
func (l ConnLimits) ServerOptions() []grpc.ServerOption {
	opts := []grpc.ServerOption{
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: l.KeepaliveMinTime, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: l.MaxConnectionIdle}),
	}
	if l.MaxConcurrentStreams > 0 {
		opts = append(opts, grpc.MaxConcurrentStreams(l.MaxConcurrentStreams))
	}
	if l.HandshakeTimeout > 0 {
		opts = append(opts, grpc.ConnectionTimeout(l.HandshakeTimeout))
	}
	return opts
}

// NewGRPCServer returns a gRPC server with the OTLP TraceService
// registered. The largest accepted message is cfg.MaxRequestBytes after
// decompression. Decoded requests share inflight, the listener-wide budget
// of request bytes held at once, with the HTTP API (nil: no budget); a
// request that does not fit gets RESOURCE_EXHAUSTED with RetryInfo. Extra
// options are appended (TLS, keepalive, ...). The caller runs it with
// Serve(listener) and stops it with GracefulStop.
func NewGRPCServer(cfg Config, v auth.Verifier, sub consumer.Calls, set telemetry.Settings, inflight *httpapi.Inflight,
	opts ...grpc.ServerOption) (*grpc.Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newGRPCServer(newIngester(cfg, v, sub, set, "grpc"), inflight, opts...), nil
}

func newGRPCServer(in *ingester, inflight *httpapi.Inflight, opts ...grpc.ServerOption) *grpc.Server {
	all := append([]grpc.ServerOption{grpc.MaxRecvMsgSize(int(in.cfg.MaxRequestBytes))}, opts...)
	srv := grpc.NewServer(all...)
	ptraceotlp.RegisterGRPCServer(srv, &grpcTraces{in: in, inflight: inflight})
	return srv
}

// sizer measures a decoded request's protobuf size for the budget.
var sizer ptrace.ProtoMarshaler

type grpcTraces struct {
	ptraceotlp.UnimplementedGRPCServer
	in       *ingester
	inflight *httpapi.Inflight
}

// Export handles one TraceService/Export call. Errors are gRPC statuses
// per the OTLP specification.
func (g *grpcTraces) Export(ctx context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	h := metadataHeader(ctx)
	p, err := g.in.authenticate(ctx, h)
	if err != nil {
		return ptraceotlp.ExportResponse{}, asFailure(err).grpcStatus(g.in.cfg.RetryAfter).Err()
	}
	release, ok := g.inflight.Reserve(int64(sizer.TracesSize(req.Traces())))
	if !ok {
		f := fail(failOverloaded, "too many request bytes are being decoded at once (connections.max_inflight_bytes); retry later")
		return ptraceotlp.ExportResponse{}, f.grpcStatus(g.in.cfg.RetryAfter).Err()
	}
	defer release()
	out, err := g.in.export(ctx, p, h.Get(projectHeader), req.Traces())
	if err != nil {
		return ptraceotlp.ExportResponse{}, asFailure(err).grpcStatus(g.in.cfg.RetryAfter).Err()
	}
	resp := ptraceotlp.NewExportResponse()
	if out.rejected > 0 {
		resp.PartialSuccess().SetRejectedSpans(int64(out.rejected))
		resp.PartialSuccess().SetErrorMessage(strings.ToValidUTF8(out.message, "\uFFFD"))
	}
	return resp, nil
}

// metadataHeader copies the credentials and routing entries of the
// incoming metadata into a header, so that both transports share one
// authentication path.
func metadataHeader(ctx context.Context) http.Header {
	h := http.Header{}
	md, _ := metadata.FromIncomingContext(ctx)
	for _, k := range [...]string{"authorization", "wandb-api-key", projectHeader} {
		if v := md.Get(k); len(v) > 0 {
			h.Set(k, v[0])
		}
	}
	return h
}
