// Package lifecycle runs Weft's long-running parts the way the
// OpenTelemetry Collector runs its components: each is a
// component.Component whose Start returns at once and whose Shutdown is
// idempotent, lets the work in hand finish and honours its context's
// deadline. Loop makes one of a function that runs until its context
// ends; List starts parts in order and shuts them down in reverse, so a
// service plugs in by adding one value.
//
// It imports nothing of Weft.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
)

// Loop is a part that runs a function until Shutdown cancels its
// context, then closes what the function used.
type Loop struct {
	name   string
	run    func(context.Context) error
	closer func() error
	logger *slog.Logger
	// fatal reports a run that ended by itself with an error; nil: it is
	// logged only.
	fatal func(error)

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
	closed bool
}

// LoopOption adjusts a Loop.
type LoopOption func(*Loop)

// WithCloser closes what the run used, after it has returned.
func WithCloser(closer func() error) LoopOption { return func(l *Loop) { l.closer = closer } }

// WithFatal hands fatal a run's error when it ends by itself: the
// process cannot go on without the part.
func WithFatal(fatal func(error)) LoopOption { return func(l *Loop) { l.fatal = fatal } }

// NewLoop is the part named name that runs run.
func NewLoop(name string, logger *slog.Logger, run func(context.Context) error, opts ...LoopOption) *Loop {
	l := &Loop{name: name, run: run, logger: logger}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Start implements component.Component: the run goes on in the
// background, on a context that only Shutdown ends.
func (l *Loop) Start(ctx context.Context, _ component.Host) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done != nil {
		return nil
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l.cancel, l.done = cancel, make(chan struct{})
	go func() {
		defer close(l.done)
		err := l.run(runCtx)
		if err == nil || errors.Is(err, context.Canceled) || runCtx.Err() != nil {
			return
		}
		if l.fatal != nil {
			l.fatal(fmt.Errorf("%s stopped: %w", l.name, err))
			return
		}
		l.logger.Error(l.name+" stopped; its work waits until weft restarts; restart weft, and check the store or Kafka if it repeats", "err", err)
	}()
	return nil
}

// Shutdown implements component.Component: it ends the run, waits for
// it within ctx, then closes; a second call does nothing.
func (l *Loop) Shutdown(ctx context.Context) error {
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	var err error
	if cancel != nil {
		cancel()
		if !awaitStopped(ctx, done) {
			err = fmt.Errorf("%s did not stop within shutdown_timeout: %w", l.name, ctx.Err())
		}
	}
	if l.closer != nil {
		err = errors.Join(err, l.closer())
	}
	return err
}

// List holds a process's parts in the order they start.
type List struct {
	mu      sync.Mutex
	names   []string
	parts   []component.Component
	started int
}

// Add appends a part; nil parts are skipped, so optional services add
// unconditionally.
func (l *List) Add(name string, c component.Component) {
	if c == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.names, l.parts = append(l.names, name), append(l.parts, c)
}

// Start starts the parts not yet started, in order. When one fails, the
// ones it started are shut down in reverse and the error names the part.
func (l *List) Start(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.started < len(l.parts) {
		if err := l.parts[l.started].Start(ctx, nil); err != nil {
			return errors.Join(fmt.Errorf("start %s: %w", l.names[l.started], err), l.shutdownLocked(ctx))
		}
		l.started++
	}
	return nil
}

// Shutdown shuts the started parts down in reverse order: the last
// started, which feeds the others, first. It is idempotent.
func (l *List) Shutdown(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.shutdownLocked(ctx)
}

func (l *List) shutdownLocked(ctx context.Context) error {
	var err error
	for ; l.started > 0; l.started-- {
		if e := l.parts[l.started-1].Shutdown(ctx); e != nil {
			err = errors.Join(err, fmt.Errorf("shut down %s: %w", l.names[l.started-1], e))
		}
	}
	return err
}

// idleGrace is how long Shutdown still waits for a stopped run once its
// deadline has passed.
const idleGrace = 200 * time.Millisecond

// awaitStopped waits for done; false when it has not closed by ctx's
// deadline and the grace after it. An idle run returns as soon as it is
// stopped, so a deadline that parts shut down before it used up does not
// count against it.
func awaitStopped(ctx context.Context, done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	case <-ctx.Done():
	}
	select {
	case <-done:
		return true
	case <-time.After(idleGrace):
		return false
	}
}

// Group is a List that is itself a part: a service with several loops
// starts and stops them as one.
type Group struct{ list List }

// Add appends a part to the group.
func (g *Group) Add(name string, c component.Component) { g.list.Add(name, c) }

// Start implements component.Component.
func (g *Group) Start(ctx context.Context, _ component.Host) error { return g.list.Start(ctx) }

// Shutdown implements component.Component.
func (g *Group) Shutdown(ctx context.Context) error { return g.list.Shutdown(ctx) }
