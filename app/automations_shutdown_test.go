package app

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

// Idle loops stop at once, so even a deadline another component used up
// is no error; a loop still busy when the deadline passes is.
func TestAutomationsShutdown(t *testing.T) {
	tests := []struct {
		name    string
		loop    func(context.Context) error
		wantErr bool
	}{
		{"idle loop, expired deadline", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, false},
		{"loop busy past the deadline", func(ctx context.Context) error { <-ctx.Done(); time.Sleep(time.Second); return nil }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &automationsPart{loops: []func(context.Context) error{tc.loop}}
			p.start(slog.Default())
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // the deadline has passed before automations' turn
			err := p.shutdown(ctx)
			if (err != nil) != tc.wantErr {
				t.Fatalf("shutdown = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}
