package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/weftdev/weft/storage"
)

func TestOpenUnreachableIsUnavailable(t *testing.T) {
	// A port that was just free: nothing listens there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, dsn := range []string{"http://" + addr + "/db", "clickhouse://" + addr + "/db?dial_timeout=2s"} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s, err := Open(ctx, dsn, Options{}, nil)
		cancel()
		if err == nil {
			s.Close()
			t.Fatalf("%s: Open succeeded with nothing listening", dsn)
		}
		if !errors.Is(err, storage.ErrUnavailable) {
			t.Errorf("%s: %v; want ErrUnavailable", dsn, err)
		}
	}
}

func TestOpenRejectsBadDSN(t *testing.T) {
	_, err := Open(context.Background(), "https://host:8443/db", Options{}, nil) // https needs secure=true
	if err == nil || errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("bad DSN: %v; want a configuration error", err)
	}
}

func TestOpenHTTPDSN(t *testing.T) {
	s, err := Open(context.Background(), testDSN(t), Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.chOpts.Protocol != clickhouse.HTTP || s.chOpts.Auth.Database == "" {
		t.Errorf("parsed %v database %q; want HTTP and the DSN's database", s.chOpts.Protocol, s.chOpts.Auth.Database)
	}
	if err := s.Ping(context.Background()); err != nil {
		t.Errorf("Ping: %v", err)
	}
	if !s.Capabilities().TTL {
		t.Error("Capabilities().TTL = false")
	}
}

func TestWrapErr(t *testing.T) {
	tests := []struct {
		name        string
		err         error
		unavailable bool
	}{
		{"too many parts", &clickhouse.Exception{Code: 252, Message: "too many parts"}, true},
		{"memory limit", &clickhouse.Exception{Code: 241}, true},
		{"syntax error", &clickhouse.Exception{Code: 62, Message: "syntax"}, false},
		{"unknown table", fmt.Errorf("query: %w", &clickhouse.Exception{Code: 60}), false},
		{"refused", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{"canceled", context.Canceled, false},
	}
	for _, tt := range tests {
		err := wrapErr("op", tt.err)
		if got := errors.Is(err, storage.ErrUnavailable); got != tt.unavailable {
			t.Errorf("%s: unavailable = %v; want %v", tt.name, got, tt.unavailable)
		}
		if !errors.Is(err, tt.err) {
			t.Errorf("%s: the cause is not wrapped: %v", tt.name, err)
		}
	}
	if wrapErr("op", nil) != nil {
		t.Error("wrapErr(nil) != nil")
	}
}

func TestVersionClock(t *testing.T) {
	fixed := time.Unix(100, 0)
	c := versionClock{now: func() time.Time { return fixed }}
	a := c.next(0)
	b := c.next(0)
	if a != uint64(fixed.UnixNano()) || b != a+1 {
		t.Errorf("versions %d, %d; want the clock, then one more", a, b)
	}
	if v := c.next(1 << 62); v != 1<<62+1 {
		t.Errorf("next above a stored version ahead of the clock = %d", v)
	}
}
