package forwardexporter

import "context"

// inFlight is a batch being delivered.
type inFlight struct {
	b batch
	// calls are the ids of the calls its parts belong to; exclusive: it
	// holds an update or a delete, which must not overlap anything.
	calls     map[string]struct{}
	exclusive bool
	done      chan struct{}
	ok        bool
}

// run forwards until ctx ends. Up to agent.max_in_flight batches are
// delivered at once, so the center's parallelism is used, but never two
// that touch the same call: a call's parts arrive in the order they were
// buffered. A batch holding an update or a delete (whose order against
// other calls' parts matters) is delivered alone. The buffer's progress
// mark only moves past a batch once it and every batch before it were
// accepted; what is in flight when ctx ends is sent again after the next
// start.
func (f *forwarder) run(ctx context.Context) {
	defer f.reader.Close()
	var window []*inFlight
	defer func() {
		for _, fl := range window {
			<-fl.done
		}
	}()
	for {
		var ok bool
		if len(window) > 0 && f.held == nil && f.buf.last() <= f.readSeq {
			// Nothing new to send: settle what is in flight first, so
			// the progress mark follows the last delivery.
			<-window[0].done
			if window, ok = f.retire(window); !ok {
				return
			}
			continue
		}
		b, ok := f.next(ctx)
		if !ok {
			return
		}
		fl := newInFlight(b)
		for !fits(window, fl, f.cfg.MaxInFlight) {
			<-window[0].done
			if window, ok = f.retire(window); !ok {
				return
			}
		}
		window = append(window, fl)
		go func() {
			fl.ok = f.deliver(ctx, fl.b.key, fl.b.load)
			close(fl.done)
		}()
		if window, ok = f.retire(window); !ok {
			return
		}
	}
}

func newInFlight(b batch) *inFlight {
	// Spans are whole calls that nothing else touches in order: an OTLP
	// batch conflicts with no other.
	fl := &inFlight{b: b, calls: make(map[string]struct{}, len(b.load.ops)), done: make(chan struct{})}
	for _, op := range b.load.ops {
		if op.Part == nil {
			fl.exclusive = true
			continue
		}
		fl.calls[op.Part.Call.ID] = struct{}{}
	}
	return fl
}

// fits reports whether fl may be sent beside the batches in flight.
func fits(window []*inFlight, fl *inFlight, limit int) bool {
	if len(window) == 0 {
		return true
	}
	if len(window) >= limit || fl.exclusive {
		return false
	}
	for _, other := range window {
		if other.exclusive || sharesCall(other, fl) {
			return false
		}
	}
	return true
}

func sharesCall(a, b *inFlight) bool {
	if len(a.calls) > len(b.calls) {
		a, b = b, a
	}
	for id := range a.calls {
		if _, ok := b.calls[id]; ok {
			return true
		}
	}
	return false
}

// retire drops the delivered batches at the front of the window and moves
// the buffer's progress mark past them. It reports false once a batch
// gave up (the forwarder is stopping).
func (f *forwarder) retire(window []*inFlight) ([]*inFlight, bool) {
	for len(window) > 0 {
		select {
		case <-window[0].done:
		default:
			return window, true
		}
		fl := window[0]
		if !fl.ok {
			return window, false
		}
		window = window[1:]
		f.m.sent.Add(float64(fl.b.load.records()))
		if err := f.buf.markForwarded(fl.b.last); err != nil {
			f.logger.Warn("agent: recording forwarding progress failed; the buffer is not trimmed and a restart forwards some records again; check the free space and permissions of agent.buffer_dir", "err", err)
		}
		f.m.setBacklog(f.buf)
	}
	return window, true
}
