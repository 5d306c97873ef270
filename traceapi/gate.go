package traceapi

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"golang.org/x/sync/semaphore"
)

// gate bounds the reads running on the store at once (max), and those of
// one API key (perKey), so that no tenant's reads can take the store's
// memory and threads from the others. A read waits for its key's turn,
// then for the store's, in arrival order, at most wait in all.
type gate struct {
	shape gateShape
	all   *semaphore.Weighted
	mu    sync.Mutex
	keys  map[string]*keyShare
}

// keyShare is one key's part of the gate; it is dropped once no read of
// the key holds or waits for a turn.
type keyShare struct {
	sem  *semaphore.Weighted
	refs int // guarded by gate.mu
}

func newGate(shape gateShape) *gate {
	return &gate{shape: shape, all: semaphore.NewWeighted(int64(shape.max)), keys: map[string]*keyShare{}}
}

// acquire waits for a turn of key's, up to the gate's wait or until ctx
// ends; release gives it back. Past the wait the error is a 429 when the
// key held its whole share (its own reads are what it waits for), a 503
// when the store's turns were all taken.
func (g *gate) acquire(ctx context.Context, key string) (release func(), err error) {
	ks := g.join(key)
	wait, cancel := context.WithTimeout(ctx, g.shape.wait)
	defer cancel()
	if err := ks.sem.Acquire(wait, 1); err != nil {
		g.leave(key, ks)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, overBudget(http.StatusTooManyRequests, keyPerKey, fmt.Sprintf(
			"this API key already runs %d queries at once, as many as %s allows, and none ended within %s (%s); "+
				"retry when one of them has ended", g.shape.perKey, setting(keyPerKey), setting(keyMaxWait), g.shape.wait))
	}
	if err := g.all.Acquire(wait, 1); err != nil {
		ks.sem.Release(1)
		g.leave(key, ks)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, overBudget(http.StatusServiceUnavailable, keyMaxConcurrent, fmt.Sprintf(
			"the store already runs %d queries at once, as many as %s allows, and none ended within %s (%s); retry shortly",
			g.shape.max, setting(keyMaxConcurrent), setting(keyMaxWait), g.shape.wait))
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			g.all.Release(1)
			ks.sem.Release(1)
			g.leave(key, ks)
		})
	}, nil
}

func (g *gate) join(key string) *keyShare {
	g.mu.Lock()
	defer g.mu.Unlock()
	ks := g.keys[key]
	if ks == nil {
		ks = &keyShare{sem: semaphore.NewWeighted(int64(g.shape.perKey))}
		g.keys[key] = ks
	}
	ks.refs++
	return ks
}

func (g *gate) leave(key string, ks *keyShare) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ks.refs--; ks.refs == 0 {
		delete(g.keys, key)
	}
}
