package inference

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/weftdev/weft/inference/chatstream"
	"github.com/weftdev/weft/inference/sse"
)

// sink is where a relayed stream goes: server-sent events for /v1, JSON
// lines for the trace API.
type sink interface {
	open() error                 // the 200 and its headers, sent or buffered for the first event
	event(ev sse.Event) error    // one upstream event, as it came, buffered
	flush() error                // sends what is buffered
	fail(e *apiError) error      // an error after the stream began, sent
	done() error                 // the end of a complete stream, sent
	clientGone() <-chan struct{} // closed when the client went away
}

var doneData = []byte("[DONE]")

// relayStream forwards an upstream stream event by event, folding its
// chunks into the traced output. The usage chunk the gateway asked for on
// the client's behalf is kept for the trace and not forwarded.
func (g *Gateway) relayStream(ex *exchange, req *chatRequest, ans *answer, out sink) {
	defer ans.close()
	asm := chatstream.NewAssembler(int(g.cfg.MaxResponseBytes))
	defer func() { ex.output, ex.usage, ex.truncatedOutput = asm.Completion(), asm.Usage(), asm.Truncated() }()
	if err := out.open(); err != nil {
		ex.clientClosedEarly = true
		return
	}
	rd := sse.NewReader(ans.stream, int(g.cfg.MaxResponseBytes))
	for {
		ev, err := rd.Next()
		if err != nil {
			g.streamBroke(ex, ans, err, out)
			return
		}
		ans.idle.reset()
		stop, err := g.relayEvent(ex, req, asm, ev, out)
		if err == nil && (stop || !rd.Ready()) {
			// Nothing more to send without waiting: send what is held.
			err = out.flush()
		}
		if err != nil {
			ex.clientClosedEarly = true
			ex.fail(&apiError{status: ex.status, message: "the client closed the connection before the stream ended"})
			return
		}
		if stop {
			return
		}
	}
}

// relayEvent handles one event; stop ends the stream.
func (g *Gateway) relayEvent(ex *exchange, req *chatRequest, asm *chatstream.Assembler, ev sse.Event, out sink) (stop bool, err error) {
	if ev.Comment {
		return false, out.event(ev)
	}
	if ex.firstByte == 0 {
		ex.firstByte = g.now().Sub(ex.started)
	}
	if bytes.Equal(bytes.TrimSpace(ev.Data), doneData) {
		return true, out.done()
	}
	chunk, perr := chatstream.Parse(ev.Data)
	if perr != nil {
		if ev.Name == "error" {
			ex.fail(&apiError{status: ex.status, message: "the upstream sent an error mid-stream: " + string(ev.Data)})
			return true, out.event(ev)
		}
		return false, out.event(ev) // not ours to judge: relayed unchanged
	}
	if msg, isErr := chunk.ErrorMessage(); isErr || ev.Name == "error" {
		ex.fail(&apiError{status: ex.status, message: "the upstream sent an error mid-stream: " + msg})
		return true, out.event(ev)
	}
	asm.Add(chunk)
	if chunk.UsageOnly() && !req.wantUsage {
		return false, nil
	}
	return false, out.event(ev)
}

// streamBroke ends a stream the upstream did not finish: the client, if
// still there, gets an error event.
func (g *Gateway) streamBroke(ex *exchange, ans *answer, err error, out sink) {
	select {
	case <-out.clientGone():
		ex.clientClosedEarly = true
		ex.fail(&apiError{status: ex.status, message: "the client closed the connection before the stream ended"})
		return
	default:
	}
	var e *apiError
	switch {
	case ans.idle.hasFired():
		e = badGateway(0, "The upstream sent nothing for inference.stream_idle_timeout (%s)", g.cfg.StreamIdleTimeout)
	case errors.Is(err, sse.ErrTooLarge):
		e = badGateway(0, "The upstream sent an event larger than inference.max_response_bytes")
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		e = badGateway(0, "The upstream ended the stream before [DONE]")
	case errors.Is(err, context.DeadlineExceeded):
		e = badGateway(0, "The upstream did not finish the stream within inference.timeout")
	default:
		e = badGateway(0, "Reading the upstream stream failed: %v", err)
	}
	g.logger.Warn("inference: an upstream stream broke mid-way; the client got an error event and the call is traced as failed; if it repeats, check the provider or the setting the err names", "model", ex.modelID, "provider", ans.upstream.Provider, "err", e.message)
	ex.fail(&apiError{status: ex.status, message: e.message})
	_ = out.fail(e)
}

// streamWriter is what both sinks share: the response, flushing, and the
// write deadline pushed ahead as events go out.
type streamWriter struct {
	w  http.ResponseWriter
	r  *http.Request
	rc *http.ResponseController
	// grace is how long the next write may take to come.
	grace    time.Duration
	extended time.Time
}

func newStreamWriter(w http.ResponseWriter, r *http.Request, grace time.Duration) streamWriter {
	return streamWriter{w: w, r: r, rc: http.NewResponseController(w), grace: grace}
}

func (s *streamWriter) clientGone() <-chan struct{} { return s.r.Context().Done() }

func (s *streamWriter) flush() error {
	if err := s.rc.Flush(); err != nil {
		return fmt.Errorf("flushing the stream: %w", err)
	}
	return extendDeadline(s.rc, s.grace, &s.extended)
}

// sseSink writes a stream as server-sent events, OpenAI's format.
type sseSink struct {
	streamWriter
	callID  string
	scratch []byte // one event's wire form, reused
}

func newSSESink(w http.ResponseWriter, r *http.Request, callID string, grace time.Duration) *sseSink {
	return &sseSink{streamWriter: newStreamWriter(w, r, grace), callID: callID}
}

// open buffers the 200 and its headers: the upstream's first bytes are
// already in, so they leave with the first event, in one write instead
// of two.
func (s *sseSink) open() error {
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set(callIDHeader, s.callID)
	s.w.WriteHeader(http.StatusOK)
	return nil
}

func (s *sseSink) event(ev sse.Event) error {
	var err error
	if s.scratch, err = sse.AppendEvent(s.scratch[:0], ev); err != nil {
		return err
	}
	_, err = s.w.Write(s.scratch)
	return err
}

// fail sends the error as a data event with an error object: what the
// openai clients raise as an API error once the status is already sent.
func (s *sseSink) fail(e *apiError) error { return s.send(sse.Event{Data: e.body()}) }

func (s *sseSink) done() error { return s.send(sse.Event{Data: doneData}) }

func (s *sseSink) send(ev sse.Event) error {
	if err := s.event(ev); err != nil {
		return err
	}
	return s.flush()
}

// extendDeadline pushes the write deadline grace ahead, at most once a
// second: a stream of small events need not touch it for each one.
func extendDeadline(rc *http.ResponseController, grace time.Duration, last *time.Time) error {
	now := time.Now()
	if now.Sub(*last) < time.Second {
		return nil
	}
	*last = now
	if err := rc.SetWriteDeadline(now.Add(grace)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}
