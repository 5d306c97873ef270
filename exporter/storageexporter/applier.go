package storageexporter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/weftdev/weft/internal/backoff"
	"github.com/weftdev/weft/internal/wal"
	"github.com/weftdev/weft/storage"
)

// appliedFile records the last sequence number known to be in the store,
// so a restart replays only what follows. It is written after each apply
// and not synced: a stale value only replays records again, which merge
// idempotently.
const appliedFile = "applied"

// retryPause is the wait before a write is tried again while the store
// takes no writes at all.
const retryPause = 500 * time.Millisecond

// writeTimeout bounds one store transaction; probeTimeout the probe that
// tells a store that takes no writes from a record it refuses.
const (
	writeTimeout = 5 * time.Minute
	probeTimeout = 10 * time.Second
)

// maxApplyBytes bounds the decoded bytes of one store transaction: what
// the applier holds in memory while the store writes it, so large records
// make smaller transactions instead of a bigger heap (a single batch may
// exceed it alone). Bounding the log's compressed bytes instead let a
// transaction decode to over 100 MB.
const maxApplyBytes = 12 << 20

// WriteProber is a store that can tell whether it takes writes at all,
// with a small write that involves no caller's record. Without it the
// exporter probes with an empty WriteCallOps.
type WriteProber interface {
	ProbeWrites(ctx context.Context) error
}

// readBatches reads the batches' records back from the log. A record that
// cannot be read or decoded (the log was damaged under a running server)
// is reported and skipped: its batch stores nothing.
func (e *Exporter) readBatches(r *wal.Reader, batches []*logged) [][]storage.CallOp {
	out := make([][]storage.CallOp, len(batches))
	for i, b := range batches {
		seq, rec, err := r.Next(b.seq)
		if err == nil && seq != b.seq {
			err = fmt.Errorf("read record %d, expected %d", seq, b.seq)
		}
		if err == nil {
			out[i], err = decodeRecord(rec)
		}
		if err != nil {
			e.m.rejected.Add(float64(b.ops))
			e.logger.Error("storage exporter: an acknowledged batch cannot be read back from the write-ahead log (damaged under the running server); its records are lost and the log moves on; check the disk under wal.dir and the kernel log for I/O errors", "seq", b.seq, "records", b.ops, "err", err)
		}
	}
	return out
}

// applyUntilStored writes ops in order and returns their results; false
// when ctx ended first (shutdown), in which case the log keeps them for
// the next start. A record the store refuses never blocks the ones behind
// it: see storeRun.
func (e *Exporter) applyUntilStored(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, bool) {
	results := make([]storage.CallOpResult, len(ops))
	if !e.storeRun(ctx, ops, results) {
		return nil, false
	}
	return results, true
}

// storeRun writes a run of ops as one transaction. When that fails it
// asks the store, with a probe that involves none of them, whether it
// takes writes at all:
//
//   - it does not (down, invalidated, out of memory for anything): the
//     same run is tried again after a pause, for as long as that lasts;
//     nothing is set aside;
//   - it does: the run is halved and each half written in turn, so that a
//     transaction too large for the store's memory becomes smaller ones;
//     a single record the store still refuses is tried again alone, with
//     a growing pause (DuckDB frees the memory of a failed transaction),
//     RecordAttempts times in all, and then set aside in the rejected file.
//
// Halves are written in order and a refused record is retried before
// anything after it is written, so a call's parts keep their order. It
// returns false when ctx ended first (after the write in flight).
func (e *Exporter) storeRun(ctx context.Context, ops []storage.CallOp, results []storage.CallOpResult) bool {
	for attempt := 1; ; {
		if ctx.Err() != nil {
			return false
		}
		// A write in flight is not canceled: it is bounded by the
		// transaction's size, and a commit cut off part way would leave
		// its connection in a transaction.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
		res, err := e.write(wctx, ops)
		cancel()
		if err == nil {
			copy(results, res)
			e.noteStored()
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		failures := e.noteFailure()
		if perr := e.probe(ctx); perr != nil {
			if ctx.Err() != nil {
				return false
			}
			if wasDown := e.noteDown(true); !wasDown || failures%20 == 0 {
				e.logger.Error("storage exporter: the store takes no writes; the records wait in the write-ahead log and are retried every 500ms until it does; check /ready, the disk space and the weft log lines before this one",
					"records", len(ops), "failures", failures, "err", err, "probe", perr)
			}
			if !backoff.Sleep(ctx, retryPause) {
				return false
			}
			continue
		}
		e.noteDown(false)
		if len(ops) > 1 {
			half := len(ops) / 2
			return e.storeRun(ctx, ops[:half], results[:half]) && e.storeRun(ctx, ops[half:], results[half:])
		}
		if attempt >= e.cfg.RecordAttempts {
			e.setAside(ops[0], attempt, err)
			return true
		}
		pause := recordPause(e.cfg.RecordBackoff, attempt)
		e.logger.Warn("storage exporter: the store refused a record on its own while it takes other writes; trying it again up to wal.record_attempts times, then setting it aside in wal.dir",
			"project", ops[0].ProjectID(), "call_id", callIDs(ops[0]), "attempt", attempt, "of", e.cfg.RecordAttempts,
			"pause", pause, "err", err)
		if !backoff.Sleep(ctx, pause) {
			return false
		}
		attempt++
	}
}

// probe asks the store whether it takes writes at all, with a write that
// involves no caller's record.
func (e *Exporter) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if p, ok := e.store.(WriteProber); ok {
		return p.ProbeWrites(ctx)
	}
	_, err := e.store.WriteCallOps(ctx, nil)
	return err
}

// maxRecordPause caps the doubling pause between a refused record's
// attempts.
const maxRecordPause = 30 * time.Second

// recordPause is the pause after a record's attempt-th refusal.
func recordPause(first time.Duration, attempt int) time.Duration {
	d := first
	for i := 1; i < attempt && d < maxRecordPause; i++ {
		d *= 2
	}
	return min(d, maxRecordPause)
}

// setAside keeps a record the store refused, even alone and after
// several attempts, in a file beside the log, so nothing acknowledged is
// lost, and reports it.
func (e *Exporter) setAside(op storage.CallOp, attempts int, cause error) {
	e.m.rejected.Inc()
	path := filepath.Join(e.cfg.Dir, fmt.Sprintf("rejected-%d.rec", time.Now().UnixNano()))
	if err := os.WriteFile(path, encodeOps(nil, []storage.CallOp{op}), 0o600); err != nil {
		e.logger.Error("storage exporter: writing a rejected file failed; the refused record is lost; check the free space and permissions of wal.dir", "path", path, "err", err)
	}
	e.logger.Error("storage exporter: the store refused an acknowledged record even alone; it is kept in the rejected file and the log moves on; see docs/operations.md#weftcallssetaside",
		"project", op.ProjectID(), "call_id", callIDs(op), "attempts", attempts, "path", path, "err", cause)
}

// setAsideRaw keeps a log record that cannot be decoded, as it is in the
// log, beside it.
func (e *Exporter) setAsideRaw(seq uint64, rec []byte, cause error) {
	e.m.rejected.Inc()
	path := filepath.Join(e.cfg.Dir, fmt.Sprintf("rejected-%d.raw", time.Now().UnixNano()))
	if err := os.WriteFile(path, rec, 0o600); err != nil {
		e.logger.Error("storage exporter: writing a rejected file failed; the undecodable record is lost; check the free space and permissions of wal.dir", "path", path, "err", err)
	}
	e.logger.Error("storage exporter: an acknowledged log record cannot be decoded; it is kept as it is in the rejected file and the log moves on; see docs/operations.md#weftcallssetaside",
		"seq", seq, "path", path, "err", cause)
}

// callIDs names the call (or calls) an op is about, for logs.
func callIDs(op storage.CallOp) string {
	switch {
	case op.Part != nil:
		return op.Part.Call.ID
	case op.Update != nil:
		return op.Update.ID
	case op.Delete != nil:
		return strings.Join(op.Delete.IDs, ",")
	}
	return ""
}

// retire removes stored batches from the backlog, answers their waiters,
// records progress and drops log segments that are wholly stored.
func (e *Exporter) retire(batches []*logged) {
	last := batches[len(batches)-1].seq
	var rawBytes int64
	e.mu.Lock()
	e.pending = e.pending[len(batches):]
	e.handed -= len(batches)
	for _, b := range batches {
		e.backlog.Release(b.ops, b.bytes)
		rawBytes += b.rawBytes
	}
	e.advance(last)
	e.mu.Unlock()
	for _, b := range batches {
		if b.done != nil {
			b.done <- nil
		}
	}
	e.stored(last, rawBytes)
}

// advance records that the log is in the store through seq and wakes
// Barrier's waiters. The caller holds mu.
func (e *Exporter) advance(seq uint64) {
	e.applied = seq
	close(e.progress)
	e.progress = make(chan struct{})
}

func (e *Exporter) recordApplied(seq uint64) {
	err := wal.WriteMark(filepath.Join(e.cfg.Dir, appliedFile), seq)
	if err == nil {
		err = e.log.TrimThrough(seq)
	}
	if err != nil {
		e.logger.Warn("storage exporter: recording how far the log is applied failed; a restart applies some records again (harmless) and the log is not trimmed: check the free space and permissions of the log directory", "err", err)
	}
}

func readApplied(dir string) uint64 { return wal.ReadMark(filepath.Join(dir, appliedFile)) }

func (e *Exporter) isLeaving() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leaving
}

// noteStored, noteFailure and noteDown keep the applier's view of the
// store for Health.
func (e *Exporter) noteStored() {
	e.mu.Lock()
	e.failures = 0
	e.mu.Unlock()
	e.noteDown(false)
}

func (e *Exporter) noteFailure() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failures++
	return e.failures
}

// noteDown records whether the store takes writes and returns what was
// known before.
func (e *Exporter) noteDown(down bool) bool {
	e.mu.Lock()
	was := e.storeDown
	e.storeDown = down
	e.mu.Unlock()
	if was && !down {
		e.logger.Info("storage exporter: the store takes writes again")
	}
	return was
}
