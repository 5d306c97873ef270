package otelmap

import (
	"errors"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/weftdev/weft/storage"
)

// scopeCtx is what the spans of one scope share.
type scopeCtx struct {
	project  string
	wbUserID string
	resource []byte   // rendered otel_dump.resource
	resTrunc []string // resource keys cut by the size limit
	scope    pcommon.InstrumentationScope
}

// CheckSpan reports what makes span impossible to map whatever its
// attributes: a missing trace id, span id or start time.
func CheckSpan(span ptrace.Span) error {
	switch {
	case span.TraceID().IsEmpty():
		return errors.New("trace_id is missing or all zeros")
	case span.SpanID().IsEmpty():
		return errors.New("span_id is missing or all zeros")
	case span.StartTimestamp() == 0:
		return errors.New("start_time_unix_nano is missing")
	}
	return nil
}

// mapSpan maps one span. Ids are the OTel ids in lowercase hex: the call id
// is the 16-digit span id and the trace id the 32-digit trace id, both of
// which Weave accepts as call and trace ids.
func (m *Mapper) mapSpan(st *mapState, sc *scopeCtx, span ptrace.Span) (storage.Call, error) {
	if err := CheckSpan(span); err != nil {
		return storage.Call{}, err
	}
	v, err := m.buildView(st, span)
	if err != nil {
		return storage.Call{}, err
	}
	call := storage.Call{
		ProjectID: sc.project,
		ID:        span.SpanID().String(),
		TraceID:   span.TraceID().String(),
		OpName:    OpName(span.Name()),
		WBUserID:  sc.wbUserID,
	}
	if p := span.ParentSpanID(); !p.IsEmpty() {
		call.ParentID = p.String()
	}
	m.setStartFields(v, span, &call)
	m.setEndFields(v, span, &call)
	m.render(st, sc, span, &call)
	return call, nil
}

// buildView unflattens the span, event and link attributes into st.t and
// indexes the span's root keys for the compiled conventions.
func (m *Mapper) buildView(st *mapState, span ptrace.Span) (*spanView, error) {
	t := &st.t
	t.reset()
	root := t.newRoot()
	if err := t.insertMap(root, span.Attributes(), ""); err != nil {
		return nil, err
	}
	v := &st.view
	*v = spanView{t: t, root: root, found: v.found[:0], events: v.events[:0]}
	evs := span.Events()
	for i := 0; i < evs.Len(); i++ {
		e := evs.At(i)
		r := t.newRoot()
		if err := t.insertMap(r, e.Attributes(), "events."+e.Name()+"."); err != nil {
			return nil, errors.New("event " + e.Name() + ": " + err.Error())
		}
		v.events = append(v.events, eventTree{name: e.Name(), root: r})
	}
	st.links = st.links[:0]
	links := span.Links()
	for i := 0; i < links.Len(); i++ {
		r := t.newRoot()
		if err := t.insertMap(r, links.At(i).Attributes(), "links."); err != nil {
			return nil, errors.New("link: " + err.Error())
		}
		st.links = append(st.links, r)
	}
	for range m.conv.nkeys {
		v.found = append(v.found, noNode)
	}
	v.match(m.conv.trie, root, 0)
	return v, nil
}

func (m *Mapper) setStartFields(v *spanView, span ptrace.Span, call *storage.Call) {
	call.StartedAt = span.StartTimestamp().AsTime().UTC()
	if t, ok := v.overrideTime(m.conv.start); ok {
		call.StartedAt = t
	}
	if d, _ := v.first(m.conv.display); d.kind != valNone {
		call.DisplayName = DisplayName(v.str(d))
	}
	if th, _ := v.first(m.conv.thread); th.kind != valNone {
		call.ThreadID = v.str(th)
		if turn, _ := v.first(m.conv.isTurn); call.ThreadID != "" && v.truthy(turn) {
			call.TurnID = call.ID
		}
	}
	if r, _ := v.first(m.conv.runID); r.kind != valNone {
		// Weave accepts a bare run name only and scopes it to the project.
		if id := v.str(r); id != "" && !strings.ContainsAny(id, "/:") {
			call.WBRunID = call.ProjectID + ":" + id
		}
	}
	call.WBRunStep = v.intPtr(m.conv.runStep)
}

func (m *Mapper) setEndFields(v *spanView, span ptrace.Span, call *storage.Call) {
	end := span.EndTimestamp().AsTime().UTC()
	if t, ok := v.overrideTime(m.conv.end); ok {
		end = t
	}
	if end.Before(call.StartedAt) {
		end = call.StartedAt // a received span has ended; never negative
	}
	call.EndedAt = &end
	call.WBRunStepEnd = v.intPtr(m.conv.runStepEnd)
	if span.Status().Code() == ptrace.StatusCodeError {
		msg := span.Status().Message()
		if msg == "" {
			msg = v.exceptionEvent()
		}
		call.Exception = &msg
	}
}

func (s *spanView) intPtr(keys []key) *int64 {
	for i := range keys {
		if n, ok := s.int(s.get(&keys[i])); ok {
			return &n
		}
	}
	return nil
}

// overrideTime reads an override time: ISO-8601 text or integer Unix
// nanoseconds.
func (s *spanView) overrideTime(keys []key) (time.Time, bool) {
	v, _ := s.first(keys)
	if v.kind == valNone {
		return time.Time{}, false
	}
	if pv, ok := s.scalar(v); ok && pv.Type() == pcommon.ValueTypeInt && pv.Int() > 0 {
		return time.Unix(0, pv.Int()).UTC(), true
	}
	text := strings.TrimSpace(s.str(v))
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, text); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// exceptionEvent describes the first "exception" event as "type: message",
// for error spans whose status carries no message.
func (s *spanView) exceptionEvent() string {
	for _, e := range s.events {
		if e.name != "exception" {
			continue
		}
		ex := s.step(val{kind: valNode, n: e.root}, "exception")
		typ, msg := s.str(s.step(ex, "type")), s.str(s.step(ex, "message"))
		switch {
		case typ != "" && msg != "":
			return typ + ": " + msg
		case msg != "":
			return msg
		}
		return typ
	}
	return ""
}
