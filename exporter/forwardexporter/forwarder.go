package forwardexporter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/weftdev/weft/internal/backoff"
	"github.com/weftdev/weft/internal/wal"
)

// forwarder reads the buffer in order and delivers it upstream, one batch
// at a time, so a call's parts arrive in the order they were accepted.
type forwarder struct {
	cfg    Config
	buf    *buffer
	sink   Sink
	logger *slog.Logger
	m      *exporterMetrics
	reader *wal.Reader
	// held is a record read but not yet sent: it did not fit the batch
	// before it (another key, or the batch was full).
	held *entry
	// readSeq is the last record read from the buffer.
	readSeq uint64
}

// entry is one buffer record read back.
type entry struct {
	seq  uint64
	key  string
	load load
	size int
}

// batch is consecutive records that travel in one request: the same key,
// and calls, or OTLP requests with the same project header.
type batch struct {
	key  string
	load load
	last uint64
}

// next gathers the following batch, waiting for records to arrive.
func (f *forwarder) next(ctx context.Context) (batch, bool) {
	var b batch
	var size int
	for {
		e, ok := f.read(ctx, b.last == 0)
		if !ok {
			return b, b.last != 0
		}
		fits := b.last == 0 || (e.key == b.key && b.load.joins(e.load) &&
			b.load.records()+e.load.records() <= f.cfg.MaxBatchOps && int64(size+e.size) <= f.cfg.MaxBatchBytes)
		if !fits {
			f.held = e
			return b, true
		}
		b.key, b.last, size = e.key, e.seq, size+e.size
		b.load.add(e.load)
	}
}

// read returns the next record: the held one, or one from the buffer. It
// waits for an append only when wait is set; otherwise it reports false at
// once when nothing more is buffered.
func (f *forwarder) read(ctx context.Context, wait bool) (*entry, bool) {
	if e := f.held; e != nil {
		f.held = nil
		return e, true
	}
	for attempt := 0; ; {
		upTo := f.buf.last()
		if upTo <= f.readSeq {
			if !wait {
				return nil, false
			}
			var ok bool
			if upTo, ok = f.buf.waitFor(ctx, f.readSeq); !ok {
				return nil, false
			}
		}
		seq, rec, err := f.reader.Next(upTo)
		if err != nil && !errors.Is(err, io.EOF) {
			f.logger.Error("agent: reading the buffer failed; forwarding pauses and retries with backoff; check the disk and permissions of agent.buffer_dir", "err", err)
			if !f.pause(ctx, attempt, 0) {
				return nil, false
			}
			attempt++
			continue
		}
		if err != nil {
			continue
		}
		f.readSeq = seq
		if e, ok := f.decode(seq, rec); ok {
			return e, true
		}
	}
}

// decode reads a record back; one that cannot be read is set aside.
func (f *forwarder) decode(seq uint64, rec []byte) (*entry, bool) {
	key, l, err := decodeRecord(rec)
	if err != nil {
		f.logger.Error("agent: a buffered record cannot be read back; it is kept in a rejected-*.rec file in agent.buffer_dir and forwarding moves on; see docs/operations.md#weftcallssetaside", "seq", seq, "err", err)
		f.keepRejected(append([]byte(nil), rec...), 1)
		return nil, false
	}
	return &entry{seq: seq, key: key, load: l, size: len(rec)}, true
}

// deliver sends l until the upstream accepts it, waiting between
// attempts. Records refused for good are found by halving and set aside.
// It reports false when ctx ended first.
func (f *forwarder) deliver(ctx context.Context, key string, l load) bool {
	for attempt := 0; ; attempt++ {
		sctx, cancel := context.WithTimeout(ctx, f.cfg.RequestTimeout)
		begin := time.Now()
		accepted, err := f.send(sctx, key, l)
		cancel()
		l = l.slice(accepted, l.units())
		switch {
		case err == nil:
			f.m.sendLatency.Observe(time.Since(begin).Seconds())
			return true
		case ctx.Err() != nil:
			return false
		case isPermanent(err) && l.units() == 1:
			f.reject(l, err)
			return true
		case isPermanent(err):
			half := l.units() / 2
			return f.deliver(ctx, key, l.slice(0, half)) && f.deliver(ctx, key, l.slice(half, l.units()))
		}
		if attempt == 0 || attempt%20 == 0 {
			f.logger.Warn("agent: forwarding to the upstream failed; the records stay buffered and are retried with backoff; check that agent.upstream is up and reachable and agent.api_key is valid", "records", l.records(), "attempt", attempt+1, "err", err)
		}
		if !f.pause(ctx, attempt, retryAfter(err)) {
			return false
		}
	}
}

// send makes one attempt at l and returns how many of its units the
// upstream accepted. Spans the center accepts the request with but cannot
// map are counted and logged: they could never become calls.
func (f *forwarder) send(ctx context.Context, key string, l load) (int, error) {
	if !l.isOTLP() {
		return f.sink.Send(ctx, key, l.ops)
	}
	refused, msg, err := f.sink.SendOTLP(ctx, key, l.project, bytes.Join(l.otlp, nil))
	if err != nil {
		return 0, err
	}
	if refused > 0 {
		f.m.rejected.Add(float64(refused))
		f.logger.Info("agent: the upstream could not map some spans to calls (the instrumentation's fault); they are dropped and counted in weft_storage_rejected_calls; the reason says what the sending application must fix", "spans", refused, "reason", msg)
	}
	return l.units(), nil
}

// pause waits the attempt's backoff (doubling from retry_backoff_min to
// retry_backoff_max, with jitter so agents do not retry in step), or what
// the upstream asked for, capped by max_retry_after. It reports false when
// ctx ended first.
func (f *forwarder) pause(ctx context.Context, attempt int, asked time.Duration) bool {
	d := backoff.Jittered(attempt, f.cfg.RetryBackoffMin, f.cfg.RetryBackoffMax)
	if asked > 0 {
		d = min(asked, f.cfg.MaxRetryAfter) + rand.N(f.cfg.RetryBackoffMin+1)
	}
	return backoff.Sleep(ctx, d)
}

// reject sets aside a record the upstream refused even alone: it is
// written, without its key, to a rejected file beside the buffer,
// counted and logged, and forwarding moves on.
func (f *forwarder) reject(l load, err error) {
	if l.isOTLP() {
		f.logger.Error("agent: the upstream refused an OTLP request even alone; it is kept in a rejected-*.rec file in agent.buffer_dir and forwarding moves on; see docs/operations.md#weftcallssetaside", "project_header", l.project, "err", err)
		f.keepRejected(encodeOTLPRecord("", l.project, l.spans[0], l.otlp[0]), l.records())
		return
	}
	f.logger.Error("agent: the upstream refused a record even alone; it is kept in a rejected-*.rec file in agent.buffer_dir and forwarding moves on; see docs/operations.md#weftcallssetaside",
		"project", l.ops[0].ProjectID(), "err", err)
	f.keepRejected(encodeRecord("", l.ops), l.records())
}

func (f *forwarder) keepRejected(rec []byte, n int) {
	f.m.rejected.Add(float64(n))
	path := filepath.Join(f.cfg.BufferDir, fmt.Sprintf("rejected-%d.rec", time.Now().UnixNano()))
	if err := os.WriteFile(path, rec, 0o600); err != nil {
		f.logger.Error("agent: writing a rejected file failed; the refused record is lost; check the free space and permissions of agent.buffer_dir", "path", path, "err", err)
	}
}
