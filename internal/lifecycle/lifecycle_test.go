package lifecycle

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
)

type recorder struct {
	mu  sync.Mutex
	log []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, s)
}

type fakePart struct {
	name     string
	r        *recorder
	startErr error
}

func (p fakePart) Start(context.Context, component.Host) error {
	p.r.add("start " + p.name)
	return p.startErr
}

func (p fakePart) Shutdown(context.Context) error {
	p.r.add("stop " + p.name)
	return nil
}

func TestListStartsInOrderAndStopsInReverse(t *testing.T) {
	tests := []struct {
		name    string
		failing string
		want    []string
	}{
		{name: "all start", want: []string{"start a", "start b", "start c", "stop c", "stop b", "stop a"}},
		{name: "one fails", failing: "b", want: []string{"start a", "start b", "stop a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{}
			var l List
			for _, n := range []string{"a", "b", "c"} {
				var err error
				if n == tc.failing {
					err = errors.New("no")
				}
				l.Add(n, fakePart{name: n, r: r, startErr: err})
			}
			l.Add("absent", nil)
			err := l.Start(context.Background())
			if (err != nil) != (tc.failing != "") || (err != nil && !strings.Contains(err.Error(), "start b")) {
				t.Fatalf("Start = %v", err)
			}
			if err := l.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := l.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.log, tc.want) {
				t.Fatalf("order %v, want %v", r.log, tc.want)
			}
		})
	}
}

func TestLoop(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	t.Run("shutdown ends the run, then closes, once", func(t *testing.T) {
		r := &recorder{}
		l := NewLoop("loop", logger, func(ctx context.Context) error {
			<-ctx.Done()
			r.add("run ended")
			return ctx.Err()
		}, WithCloser(func() error { r.add("closed"); return nil }))
		if err := l.Start(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := l.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if want := []string{"run ended", "closed"}; !slices.Equal(r.log, want) {
			t.Fatalf("%v, want %v", r.log, want)
		}
	})
	t.Run("an idle run stops although the deadline was used up before its turn", func(t *testing.T) {
		l := NewLoop("idle", logger, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
		_ = l.Start(context.Background(), nil)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := l.Shutdown(ctx); err != nil {
			t.Fatalf("Shutdown = %v", err)
		}
	})
	t.Run("shutdown honours its deadline", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		l := NewLoop("stuck", logger, func(context.Context) error { <-release; return nil })
		_ = l.Start(context.Background(), nil)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if err := l.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "stuck") {
			t.Fatalf("Shutdown = %v, want the deadline, naming the part", err)
		}
	})
	t.Run("a run that fails by itself is reported when fatal", func(t *testing.T) {
		got := make(chan error, 1)
		l := NewLoop("consumer", logger, func(context.Context) error { return errors.New("broker gone") },
			WithFatal(func(err error) { got <- err }))
		_ = l.Start(context.Background(), nil)
		select {
		case err := <-got:
			if !strings.Contains(err.Error(), "consumer stopped: broker gone") {
				t.Fatalf("fatal %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no fatal report")
		}
		_ = l.Shutdown(context.Background())
	})
	t.Run("shutdown before start closes only", func(t *testing.T) {
		closed := false
		l := NewLoop("idle", logger, func(context.Context) error { return nil }, WithCloser(func() error { closed = true; return nil }))
		if err := l.Shutdown(context.Background()); err != nil || !closed {
			t.Fatalf("Shutdown = %v, closed %v", err, closed)
		}
	})
}
