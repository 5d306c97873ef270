package app_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/weftdev/weft/app"
	"github.com/weftdev/weft/config"
)

// The connections settings reach the real listener: with a cap of one,
// a second client waits until the first, idle, is closed by idle_timeout.
func TestConnectionSettingsApplyToTheListener(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Listen, cfg.OTLPGRPCListen = "127.0.0.1:0", ""
	cfg.Connections.MaxConnections, cfg.Connections.IdleTimeout = 1, 2*time.Second
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := app.New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	health := "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
	first, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if _, err := io.WriteString(first, health); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.ReadResponse(bufio.NewReader(first), nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("first client: %v, %v", resp, err)
	}
	second, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if _, err := io.WriteString(second, health); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(second)
	_ = second.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := br.Peek(1); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("second client served while the first held the only slot (%v)", err)
	}
	_ = second.SetReadDeadline(time.Now().Add(20 * time.Second))
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("second client after the first went idle: %v, %v", resp, err)
	}
}
