package storageexporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/weftdev/weft/internal/wal"
	"github.com/weftdev/weft/storage"
)

// appliedFile records the last sequence number known to be in the store,
// so a restart replays only what follows. It is written after each apply
// and not synced: a stale value only replays records again, which merge
// idempotently.
const appliedFile = "applied"

// retryPause is the wait before a failed store write is tried again.
const retryPause = 500 * time.Millisecond

// maxApplyBytes bounds the decoded bytes of one store transaction: what
// the applier holds in memory while the store writes it, so large records
// make smaller transactions instead of a bigger heap (a single batch may
// exceed it alone). Bounding the log's compressed bytes instead let a
// transaction decode to over 100 MB.
const maxApplyBytes = 12 << 20

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
			e.logger.Error("storage exporter: an acknowledged batch cannot be read back from the log", "seq", b.seq, "records", b.ops, "err", err)
		}
	}
	return out
}

// applyUntilStored writes ops, splitting on failure to set aside records
// the store refuses even alone. While nothing at all can be written the
// store itself is failing: it waits and tries again, for as long as that
// lasts (the bounded backlog turns new writes away meanwhile).
func (e *Exporter) applyUntilStored(ops []storage.CallOp) ([]storage.CallOpResult, bool) {
	results := make([]storage.CallOpResult, len(ops))
	for attempt := 0; ; attempt++ {
		s := splitter{e: e}
		s.write(ops, results)
		if s.stored > 0 || len(s.refused) == 0 {
			e.setAside(s.refused)
			return results, true
		}
		if e.isLeaving() {
			return nil, false
		}
		if attempt == 0 || attempt%20 == 0 {
			e.logger.Error("storage exporter: the store refuses every write; retrying", "records", len(ops), "err", s.lastErr)
		}
		time.Sleep(retryPause)
	}
}

// splitter writes a run of ops, halving runs that fail, and collects the
// single ops that fail alone.
type splitter struct {
	e       *Exporter
	stored  int
	refused []refusal
	lastErr error
}

type refusal struct {
	op  storage.CallOp
	err error
}

func (s *splitter) write(ops []storage.CallOp, results []storage.CallOpResult) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	res, err := s.e.write(ctx, ops)
	cancel()
	if err == nil {
		copy(results, res)
		s.stored += len(ops)
		return
	}
	s.lastErr = err
	if len(ops) == 1 || errors.Is(err, storage.ErrUnavailable) {
		for _, op := range ops {
			s.refused = append(s.refused, refusal{op, err})
		}
		return
	}
	half := len(ops) / 2
	s.write(ops[:half], results[:half])
	s.write(ops[half:], results[half:])
}

// setAside keeps records the store refused even alone in a file beside the
// log, so nothing acknowledged is lost, and reports each.
func (e *Exporter) setAside(refused []refusal) {
	if len(refused) == 0 {
		return
	}
	e.m.rejected.Add(float64(len(refused)))
	ops := make([]storage.CallOp, len(refused))
	for i, r := range refused {
		ops[i] = r.op
		e.logger.Error("storage exporter: the store refused an acknowledged record; kept in the rejected file",
			"project", r.op.ProjectID(), "err", r.err)
	}
	path := filepath.Join(e.cfg.Dir, fmt.Sprintf("rejected-%d.rec", time.Now().UnixNano()))
	if err := os.WriteFile(path, encodeOps(nil, ops), 0o600); err != nil {
		e.logger.Error("storage exporter: writing the rejected file", "path", path, "err", err)
	}
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
		e.pendOps -= b.ops
		e.pendBytes -= b.bytes
		rawBytes += b.rawBytes
	}
	e.setGauges()
	e.applied = last
	close(e.progress)
	e.progress = make(chan struct{})
	e.mu.Unlock()
	for _, b := range batches {
		if b.done != nil {
			b.done <- nil
		}
	}
	e.stored(last, rawBytes)
}

func (e *Exporter) recordApplied(seq uint64) {
	err := wal.WriteMark(filepath.Join(e.cfg.Dir, appliedFile), seq)
	if err == nil {
		err = e.log.TrimThrough(seq)
	}
	if err != nil {
		e.logger.Warn("storage exporter: recording progress", "err", err)
	}
}

// replay writes to the store what the log holds past the recorded
// progress, in transactions of up to MaxApplyOps records.
func (e *Exporter) replay(ctx context.Context) error {
	after, last := readApplied(e.cfg.Dir), e.log.LastSeq()
	r := e.log.NewReader(min(after, last))
	defer r.Close()
	var chunk []storage.CallOp
	var chunkBytes int64
	replayed := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, rec, err := r.Next(last)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		ops, err := decodeRecord(rec)
		if err != nil {
			return err
		}
		replayed += len(ops)
		chunkBytes += int64(sizeHint(ops))
		if chunk = append(chunk, ops...); len(chunk) >= e.cfg.MaxApplyOps || chunkBytes >= maxApplyBytes {
			e.applyMerged(chunk)
			chunk, chunkBytes = chunk[:0], 0
		}
	}
	e.applyMerged(chunk)
	e.acked, e.applied = last, last
	if replayed > 0 {
		e.logger.Info("storage exporter: stored the write-ahead log's backlog", "records", replayed)
	}
	if e.ckpt.store == nil {
		e.recordApplied(last)
	} else if replayed > 0 {
		e.ckpt.seq = last
		e.checkpoint()
	}
	return nil
}

func (e *Exporter) applyMerged(ops []storage.CallOp) {
	if len(ops) > 0 {
		merged, _ := storage.MergeOps(ops)
		_, _ = e.applyUntilStored(merged) // not leaving during Start: it stores or retries
	}
}

func readApplied(dir string) uint64 { return wal.ReadMark(filepath.Join(dir, appliedFile)) }

func (e *Exporter) isLeaving() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leaving
}
