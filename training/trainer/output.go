package trainer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"github.com/weftdev/weft/training/protocol"
)

// maxBatch bounds the events sent at once.
const maxBatch = 100

// events holds progress events until they are sent, numbered within the
// lease so a batch sent again after a lost answer lands once.
type events struct {
	next    int64
	pending []protocol.Event
}

// readOutput reads the command's output to its end, turning protocol
// lines into events and checkpoints; events are sent in batches of what
// the command printed at once.
func (j *job) readOutput(ctx context.Context, out io.Reader) {
	br := bufio.NewReaderSize(out, 64<<10)
	evs := &events{next: 1}
	for {
		line, tooLong, err := readLine(br, j.t.o.MaxLineBytes)
		if tooLong {
			j.log.Warn("an output line of the command is longer than the limit; it is skipped (a protocol line in it is lost); make the command print shorter lines", "limit_bytes", j.t.o.MaxLineBytes)
		} else if len(line) > 0 {
			j.handle(ctx, evs, line)
		}
		if br.Buffered() == 0 || len(evs.pending) >= maxBatch || err != nil {
			j.send(ctx, evs)
		}
		if err != nil {
			return
		}
	}
}

// readLine reads one line without its newline; a line over max is
// consumed and reported too long.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > max+1 {
			tooLong, buf = true, nil
		} else if !tooLong {
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(buf, "\r\n"), tooLong, err
	}
}

// handle acts on one output line.
func (j *job) handle(ctx context.Context, evs *events, raw []byte) {
	l, ok, err := protocol.ParseLine(raw)
	switch {
	case !ok:
		j.log.Info("command output", "line", string(raw))
	case err != nil:
		j.log.Warn("a protocol line printed by the command is invalid; it is ignored; fix what the err names in the command's output", "err", err, "line", truncate(raw, 200))
	case l.Type == protocol.LineStarted || l.Type == protocol.LineGradientStep:
		evs.pending = append(evs.pending, protocol.Event{Type: l.Type, Data: l.Data})
	case l.Type == protocol.LineCheckpoint:
		j.send(ctx, evs)
		j.checkpoint(ctx, l)
	case l.Type == protocol.LineFailed:
		j.fail(l.ErrorMessage)
	case l.Type == protocol.LineLog:
		j.log.Info("command says", "message", l.Message)
	}
}

func (j *job) fail(msg string) {
	if msg == "" {
		msg = "the command reported a failure without a message"
	}
	j.mu.Lock()
	if j.failure == "" {
		j.failure = msg
	}
	j.mu.Unlock()
}

// send delivers the pending events; a lost lease stops the command.
func (j *job) send(ctx context.Context, evs *events) {
	if len(evs.pending) == 0 || j.lost.Load() {
		return
	}
	err := j.t.c.Events(ctx, j.l.Job.ID, j.l.LeaseID, evs.next, evs.pending)
	if err != nil && !LeaseLost(err) && ctx.Err() == nil {
		// Once more: a batch sent twice lands once.
		err = j.t.c.Events(ctx, j.l.Job.ID, j.l.LeaseID, evs.next, evs.pending)
	}
	switch {
	case LeaseLost(err):
		j.lost.Store(true)
		j.stop()
	case err != nil:
		j.log.Error("sending events to weft failed twice; they are dropped from the job's history and the job goes on; check that --url reaches weft", "count", len(evs.pending), "err", err)
	}
	evs.next += int64(len(evs.pending))
	evs.pending = evs.pending[:0]
}

// checkpoint uploads the files under the line's directory and registers
// them; a failure fails the job when the command exits.
func (j *job) checkpoint(ctx context.Context, l protocol.Line) {
	dir := l.Dir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(j.task.OutputDir, dir)
	}
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		up, err := j.t.c.Upload(ctx, j.l.Job.ID, j.l.LeaseID, filepath.ToSlash(rel), path)
		files[filepath.ToSlash(rel)] = up.Digest
		return err
	})
	if err == nil {
		var cp protocol.Checkpoint
		cp, err = j.t.c.Register(ctx, j.l.Job.ID, j.l.LeaseID, protocol.CheckpointRegistration{Step: l.Step, Metrics: l.Metrics, Files: files})
		j.log.Info("registered a checkpoint", "artifact", cp.Artifact, "files", len(files))
	}
	if err != nil {
		j.fail(fmt.Sprintf("registering the checkpoint of step %d from %s: %v", l.Step, dir, err))
	}
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// tail keeps the last max bytes written.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := strings.TrimSpace(string(t.buf)); s != "" {
		return s
	}
	return "(nothing on standard error)"
}

// teeTail writes to a tail and passes the output on.
type teeTail struct {
	t  *tail
	to io.Writer
}

func (w teeTail) Write(p []byte) (int, error) {
	_, _ = w.t.Write(p)
	return w.to.Write(p)
}
