package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"google.golang.org/grpc"

	"github.com/weftdev/weft/config"
)

// listen binds the HTTP listener and, when withGRPC, the OTLP/gRPC one
// (nil when otlp_grpc_listen is empty). Each holds at most
// connections.max_connections at once.
func listen(cfg config.Config, withGRPC bool) (ln, grpcLn net.Listener, err error) {
	limits := httpLimits(cfg.Connections)
	if ln, err = limits.Listen(cfg.Listen); err != nil {
		return nil, nil, fmt.Errorf("%w (set --listen or WEFT_LISTEN to a free address)", err)
	}
	if cfg.OTLPGRPCListen == "" || !withGRPC {
		return ln, nil, nil
	}
	if grpcLn, err = limits.Listen(cfg.OTLPGRPCListen); err != nil {
		_ = ln.Close()
		return nil, nil, fmt.Errorf("%w (set --otlp-grpc-listen or WEFT_OTLP_GRPC_LISTEN to a free address, or empty to disable OTLP/gRPC)", err)
	}
	return ln, grpcLn, nil
}

// beginServing binds the listeners with listen unless bound, and serves
// pprof and /metrics on their own addresses when configured, until ctx
// ends.
func beginServing(ctx context.Context, cfg config.Config, metrics http.Handler, logger *slog.Logger, bound bool, listen func() error) error {
	if !bound {
		if err := listen(); err != nil {
			return err
		}
	}
	if cfg.DebugListen != "" {
		if err := serveAux(ctx, "pprof", cfg.DebugListen, debugHandler(), logger); err != nil {
			return fmt.Errorf("debug_listen: %w", err)
		}
	}
	if cfg.MetricsListen == "" {
		return nil
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	if err := serveAux(ctx, "metrics", cfg.MetricsListen, mux, logger); err != nil {
		return fmt.Errorf("metrics_listen: %w", err)
	}
	return nil
}

// startServing serves both listeners (grpcLn may be nil); the channel
// gets what either Serve returns.
func startServing(httpSrv *http.Server, ln net.Listener, grpcSrv *grpc.Server, grpcLn net.Listener) <-chan error {
	errCh := make(chan error, 2)
	go func() { errCh <- httpSrv.Serve(ln) }()
	if grpcLn != nil {
		go func() { errCh <- grpcSrv.Serve(grpcLn) }()
	}
	return errCh
}

// stopServing stops accepting and lets requests in flight finish, until
// ctx ends; then gRPC streams are cut.
func stopServing(ctx context.Context, httpSrv *http.Server, grpcSrv *grpc.Server) error {
	stopped := make(chan struct{})
	go func() { grpcSrv.GracefulStop(); close(stopped) }()
	err := httpSrv.Shutdown(ctx)
	select {
	case <-stopped:
	case <-ctx.Done():
		grpcSrv.Stop()
	}
	return err
}
