package storageexporter

import (
	"time"

	"github.com/weftdev/weft/storage"
)

// The applier runs in two stages so that the store's single writer never
// waits for the log: while one transaction is written, the next is read
// back from the log, decoded and merged on another goroutine. The store
// path was serial on one core, and reading and merging were a tenth of it.

// prepared is a transaction ready for the store: its batches, their
// records merged, and where each record landed in the merge.
type prepared struct {
	batches []*logged
	ops     [][]storage.CallOp
	merged  []storage.CallOp
	index   []int
}

// applyLoop replays what an earlier run left in the log, then writes the
// log's backlog to the store, as much as MaxApplyOps records at a time,
// until stopped with nothing left (or leaving).
func (e *Exporter) applyLoop() {
	defer close(e.exited)
	if e.isReplaying() && !e.replayLog() {
		if !e.isLeaving() {
			e.checkpoint(true) // the next start replays only what follows
		}
		return
	}
	next := make(chan prepared, 1)
	quit := make(chan struct{})
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		e.prepareLoop(next, quit)
	}()
	defer func() {
		close(quit)
		<-readerDone
	}()
	idle := time.NewTimer(idleCheckpoint)
	defer idle.Stop()
	for {
		select {
		case p, ok := <-next:
			if !ok {
				if !e.isLeaving() {
					e.checkpoint(true)
				}
				return
			}
			if e.isLeaving() || !e.applyPrepared(p) {
				return // the log keeps what was not stored or checkpointed
			}
			idle.Reset(idleCheckpoint)
		case <-idle.C:
			if !e.checkpoint(false) {
				idle.Reset(checkpointRetry)
			}
		}
	}
}

// prepareLoop reads the batches after those handed to the writer back
// from the log and merges them, one transaction ahead of the writer.
func (e *Exporter) prepareLoop(out chan<- prepared, quit <-chan struct{}) {
	defer close(out)
	r := e.log.NewReader(e.applied)
	defer r.Close()
	for {
		batches, ok := e.take()
		if !ok {
			return
		}
		ops := e.readBatches(r, batches)
		var all []storage.CallOp
		for _, o := range ops {
			all = append(all, o...)
		}
		merged, index := storage.MergeOps(all)
		select {
		case out <- prepared{batches: batches, ops: ops, merged: merged, index: index}:
		case <-quit:
			return
		}
	}
}

// take waits for pending batches not yet handed to the writer and returns
// a prefix of them; false once stopped and drained, or leaving.
func (e *Exporter) take() ([]*logged, bool) {
	for {
		e.mu.Lock()
		if e.leaving {
			e.mu.Unlock()
			return nil, false
		}
		if rest := e.pending[e.handed:]; len(rest) > 0 {
			ops, bytes, k := 0, int64(0), 0
			for k < len(rest) && (k == 0 || (ops+rest[k].ops <= e.cfg.MaxApplyOps && bytes+rest[k].rawBytes <= maxApplyBytes)) {
				ops += rest[k].ops
				bytes += rest[k].rawBytes
				k++
			}
			out := append([]*logged(nil), rest[:k]...)
			e.handed += k
			e.mu.Unlock()
			return out, true
		}
		stopped := e.stopped
		e.mu.Unlock()
		if stopped {
			return nil, false
		}
		<-e.wake
	}
}

// applyPrepared stores a transaction, retrying while the store takes no
// writes, then answers its waiters and retires its batches; false when
// leaving first.
func (e *Exporter) applyPrepared(p prepared) bool {
	results, stored := e.applyUntilStored(e.leaveCtx, p.merged)
	if !stored {
		return false
	}
	at := 0
	for i, b := range p.batches {
		if b.done != nil {
			b.results = make([]storage.CallOpResult, b.ops)
			for j := range p.ops[i] {
				b.results[j] = results[p.index[at+j]]
			}
		}
		at += len(p.ops[i])
	}
	e.retire(p.batches)
	return true
}

func (e *Exporter) isReplaying() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.replaying
}
