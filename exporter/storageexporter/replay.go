package storageexporter

import (
	"errors"
	"fmt"
	"io"

	"github.com/weftdev/weft/storage"
)

// The replay stores what an earlier run acknowledged but did not store
// (or checkpoint): the log's records past the applied mark. It runs on the
// applier's goroutine before any new batch, so Start returns at once and
// the listeners open while it runs. New batches are refused meanwhile
// with storage.ErrUnavailable (503 with Retry-After): the node is not
// ready (see Health), and a client is better served by a node that is.
// Barrier waits for the replayed records, so a read after a restart still
// sees every write acknowledged before it.
//
// Each transaction stored moves the progress on (and, at checkpoints, the
// applied mark), so a replay cut short by shutdown resumes where the
// store's durable state ends on the next start.

// replay stores the log's records after replayFrom through replayTo in
// transactions of up to MaxApplyOps records and maxApplyBytes decoded
// bytes, and reports whether it got through them all; false when
// shutdown ended it first.
func (e *Exporter) replay() bool {
	ctx, from, to := e.replayCtx, e.replayFrom, e.replayTo
	r := e.log.NewReader(from)
	defer func() { _ = r.Close() }()
	var chunk []storage.CallOp
	var chunkBytes int64
	var chunkLast uint64 // last log record in chunk; 0: none
	replayed := 0
	flush := func() bool {
		if chunkLast == 0 {
			return true
		}
		if len(chunk) > 0 {
			merged, _ := storage.MergeOps(chunk)
			if _, ok := e.applyUntilStored(ctx, merged); !ok {
				return false
			}
		}
		e.mu.Lock()
		e.advance(chunkLast)
		if chunkLast == to {
			e.replaying = false // new batches are taken from here on
		}
		e.mu.Unlock()
		e.stored(chunkLast, chunkBytes)
		chunk, chunkBytes, chunkLast = chunk[:0], 0, 0
		return true
	}
	for next := from + 1; next <= to; next++ {
		if ctx.Err() != nil {
			return false
		}
		seq, rec, err := r.Next(to)
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil && seq != next {
			err = fmt.Errorf("read record %d, expected %d", seq, next)
		}
		if err != nil {
			// The log changed under the process since Open checked it:
			// report the record and go on after it.
			e.m.rejected.Inc()
			e.logger.Error("storage exporter: an acknowledged record cannot be read back from the write-ahead log (changed under the running server); it is lost and the replay moves on; check the disk under wal.dir and the kernel log for I/O errors", "seq", next, "err", err)
			_ = r.Close()
			r = e.log.NewReader(next)
			chunkLast = next
			continue
		}
		ops, err := decodeRecord(rec)
		if err != nil {
			e.setAsideRaw(seq, rec, err)
			chunkLast = seq
			continue
		}
		replayed += len(ops)
		chunk = append(chunk, ops...)
		chunkBytes += int64(sizeHint(ops))
		chunkLast = seq
		if len(chunk) >= e.cfg.MaxApplyOps || chunkBytes >= maxApplyBytes {
			if !flush() {
				return false
			}
		}
	}
	chunkLast = to // the progress reaches the end even past records skipped
	if !flush() {
		return false
	}
	e.logger.Info("storage exporter: stored the write-ahead log of an earlier run", "log_records", to-from, "records", replayed)
	return true
}

// replayLog runs the replay and ends its state: new batches are taken
// once it got through, while after shutdown cut it short they stay
// refused, and Barrier's waiters for replayed records are answered.
func (e *Exporter) replayLog() bool {
	done := e.replay()
	e.mu.Lock()
	if done {
		e.replaying = false
	} else {
		e.replayStopped = true
		close(e.progress)
		e.progress = make(chan struct{})
	}
	e.mu.Unlock()
	if done {
		e.checkpoint(false)
	} else {
		e.logger.Info("storage exporter: shutdown ended the replay of the write-ahead log; the next start goes on with it")
	}
	return done
}
