package forwardexporter

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/wal"
)

// progressFile holds the sequence number of the last record the upstream
// accepted. It is rewritten after each accepted batch and not synced: a
// stale value only sends records again, which the center merges by id.
const progressFile = "forwarded"

// maxGroupBytes bounds the records one fsync commits together.
const maxGroupBytes = 16 << 20

// buffer is the bounded on-disk queue between the receivers and the
// forwarder. Concurrent appends share one fsync (group commit).
type buffer struct {
	log      *wal.Log
	dir      string
	maxBytes int64

	appends chan *appendReq
	quit    chan struct{}
	done    chan struct{}

	mu        sync.Mutex
	appended  uint64        // last sequence number fsynced
	forwarded uint64        // last sequence number the upstream accepted
	grew      chan struct{} // closed and replaced after each append
}

type appendReq struct {
	rec  []byte
	done chan error
}

// openBuffer opens the buffer in dir and starts its committer.
func openBuffer(dir string, maxBytes, segmentBytes int64) (*buffer, error) {
	l, err := wal.Open(dir, wal.Options{SegmentBytes: segmentBytes})
	if err != nil {
		return nil, fmt.Errorf("agent buffer: %w", err)
	}
	b := &buffer{log: l, dir: dir, maxBytes: maxBytes,
		appends: make(chan *appendReq), quit: make(chan struct{}), done: make(chan struct{}),
		appended: l.LastSeq(), grew: make(chan struct{})}
	b.forwarded = min(readProgress(dir), b.appended)
	go b.commitLoop()
	return b, nil
}

// append makes rec durable. It answers consumer.ErrOverloaded when the
// buffer is full and consumer.ErrStopped once the buffer is closing.
func (b *buffer) append(ctx context.Context, rec []byte) error {
	req := &appendReq{rec: rec, done: make(chan error, 1)}
	select {
	case b.appends <- req:
	case <-b.quit:
		return consumer.ErrStopped
	case <-ctx.Done():
		return fmt.Errorf("waiting for the agent buffer: %w", ctx.Err())
	}
	// Once taken, the append finishes even if the caller leaves: its
	// outcome decides whether the record was acknowledged.
	return <-req.done
}

// commitLoop takes every append waiting, writes them with one fsync and
// answers each.
func (b *buffer) commitLoop() {
	defer close(b.done)
	for {
		var first *appendReq
		select {
		case first = <-b.appends:
		case <-b.quit:
			return
		}
		b.commit(b.gather(first))
	}
}

func (b *buffer) gather(first *appendReq) []*appendReq {
	group, size := []*appendReq{first}, len(first.rec)
	for size < maxGroupBytes {
		select {
		case req := <-b.appends:
			group = append(group, req)
			size += len(req.rec)
		default:
			return group
		}
	}
	return group
}

// commit admits what fits in the bound and appends it in one fsync.
func (b *buffer) commit(group []*appendReq) {
	used := b.log.Bytes()
	var recs [][]byte
	var admitted []*appendReq
	for _, req := range group {
		if used+int64(len(req.rec)) > b.maxBytes {
			req.done <- fmt.Errorf("the agent's buffer holds %d of agent.max_buffer_bytes %d while the upstream catches up: %w",
				used, b.maxBytes, consumer.ErrOverloaded)
			continue
		}
		used += int64(len(req.rec)) + 16
		recs = append(recs, req.rec)
		admitted = append(admitted, req)
	}
	if len(recs) == 0 {
		return
	}
	last, err := b.log.Append(recs...)
	if err == nil {
		b.mu.Lock()
		b.appended = last
		close(b.grew)
		b.grew = make(chan struct{})
		b.mu.Unlock()
	} else {
		err = fmt.Errorf("agent buffer: %w", err)
	}
	for _, req := range admitted {
		req.done <- err
	}
}

// waitFor returns the last appended sequence number once it is past seq,
// or false when ctx ends first.
func (b *buffer) waitFor(ctx context.Context, seq uint64) (uint64, bool) {
	for {
		b.mu.Lock()
		last, grew := b.appended, b.grew
		b.mu.Unlock()
		if last > seq {
			return last, true
		}
		select {
		case <-grew:
		case <-ctx.Done():
			return 0, false
		}
	}
}

// markForwarded records that the upstream accepted everything through
// seq and frees the files that hold only such records.
func (b *buffer) markForwarded(seq uint64) error {
	b.mu.Lock()
	b.forwarded = seq
	b.mu.Unlock()
	err := wal.WriteMark(filepath.Join(b.dir, progressFile), seq)
	if err == nil {
		err = b.log.TrimThrough(seq)
	}
	return err
}

// backlog is the number of records appended and not yet accepted upstream.
func (b *buffer) backlog() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.appended - b.forwarded
}

// saturated reports a buffer nine tenths full.
func (b *buffer) saturated() bool { return b.log.Bytes() >= b.maxBytes/10*9 }

// close stops the committer (appends waiting get ErrStopped) and closes
// the log; the forwarder must have stopped reading.
func (b *buffer) close() error {
	close(b.quit)
	<-b.done
	return b.log.Close()
}

func readProgress(dir string) uint64 { return wal.ReadMark(filepath.Join(dir, progressFile)) }

// last is the last appended sequence number.
func (b *buffer) last() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.appended
}
