package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/weftdev/weft/app"
	"github.com/weftdev/weft/config"
)

// serveAgent runs the agent role: no store, no admin key; its buffer is
// the only thing it writes.
func serveAgent(ctx context.Context, cfg config.Config, logger *slog.Logger, stdout io.Writer) error {
	agent, err := app.NewAgent(ctx, cfg, logger)
	if err != nil {
		return err
	}
	if err := agent.Listen(); err != nil {
		return errors.Join(err, agent.Close())
	}
	if addr := agent.GRPCAddr(); addr != "" {
		fmt.Fprintf(stdout, "OTLP/gRPC on %s\n", addr)
	}
	fmt.Fprintf(stdout, "weft %s agent listening on http://%s (buffer in %s)\n", app.Version, agent.Addr(), cfg.AgentConfig().BufferDir)
	return agent.Serve(ctx)
}
