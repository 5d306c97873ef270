package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/weftdev/weft/app"
	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/internal/memlimit"
)

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(strings.ToUpper(level)))
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	cfg, err := loadSettings("serve", config.ServeFlags, args, stderr, getenv)
	if err != nil {
		return err
	}
	privateFiles()
	if err := keepCrashReports(cfg.DataDir, getenv); err != nil {
		return err
	}
	logger := newLogger(stderr, cfg.LogLevel)
	memory := memlimit.New(getenv)
	if roles, _ := config.ParseRoles(cfg.Roles); roles.Agent {
		return serveAgent(ctx, cfg, logger, stdout)
	}
	srv, err := app.New(ctx, cfg, logger, app.WithMemoryLimit(memory))
	if err != nil {
		return err
	}
	secret, err := auth.EnsureAdminKey(ctx, srv.Keys(), cfg.DataDir, time.Now())
	if err != nil {
		return err
	}
	if secret != "" {
		fmt.Fprintf(stdout, "Created the admin API key (shown once; also saved to %s):\n%s\n",
			filepath.Join(cfg.DataDir, auth.AdminKeyFile), secret)
	}
	if err := srv.Listen(); err != nil {
		return err
	}
	if addr := srv.GRPCAddr(); addr != "" {
		fmt.Fprintf(stdout, "OTLP/gRPC on %s\n", addr)
	}
	fmt.Fprintf(stdout, "weft %s listening on %s://%s (data in %s)\n", app.Version, srv.Scheme(), srv.Addr(), cfg.DataDir)
	return srv.Serve(ctx)
}
