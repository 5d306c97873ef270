package delivery

import (
	"context"
	"sync"

	"github.com/weftdev/weft/storage"
)

// saver coalesces the saves of concurrent attempts into one store write
// (group commit): an attempt hands its delivery over and waits; the one
// that finds no write in flight writes everything waiting, again and
// again until nothing waits. A store pays per write, not per row.
type saver struct {
	store interface {
		SaveDeliveries(ctx context.Context, ds []storage.Delivery) error
	}
	mu      sync.Mutex
	pending []pendingSave
	writing bool
}

type pendingSave struct {
	d    storage.Delivery
	done chan error
}

// save returns once d is written (or its write failed).
func (s *saver) save(ctx context.Context, d storage.Delivery) error {
	done := make(chan error, 1)
	s.mu.Lock()
	s.pending = append(s.pending, pendingSave{d: d, done: done})
	if s.writing {
		s.mu.Unlock()
		return <-done
	}
	s.writing = true
	for len(s.pending) > 0 {
		batch := s.pending
		s.pending = nil
		s.mu.Unlock()
		ds := make([]storage.Delivery, len(batch))
		for i, p := range batch {
			ds[i] = p.d
		}
		err := s.store.SaveDeliveries(ctx, ds)
		for _, p := range batch {
			p.done <- err
		}
		s.mu.Lock()
	}
	s.writing = false
	s.mu.Unlock()
	return <-done
}
