package otelmap

import (
	"encoding/hex"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The otel_dump column keeps the span as received, in the shape Weave's
// server writes (and surfaces on read as attributes.otel_span): name,
// context, kind, parent_id, start/end time, status, nested attributes,
// events, links and resource. Weft adds the instrumentation scope, the
// flags and the dropped counts, so that nothing of the span is lost.

// renderResource renders otel_dump.resource once for all spans of it.
func (m *Mapper) renderResource(st *mapState, res pcommon.Resource, sc *scopeCtx) error {
	t := &st.t
	t.reset()
	root := t.newRoot()
	if err := t.insertMap(root, res.Attributes(), "resource."); err != nil {
		return err
	}
	b := make([]byte, 0, 256)
	b = append(b, `{"attributes":`...)
	b = t.appendNode(b, root)
	b = append(b, `,"dropped_attributes_count":`...)
	b = strconv.AppendUint(b, uint64(res.DroppedAttributesCount()), 10)
	sc.resource = append(b, '}')
	sc.resTrunc = slices.Clone(t.truncated)
	return nil
}

func (m *Mapper) appendDump(b []byte, st *mapState, sc *scopeCtx, span ptrace.Span) []byte {
	t := &st.t
	b = append(b, `{"name":`...)
	b = appendString(b, span.Name(), 0)
	b = appendContext(b, span)
	b = append(b, `,"kind":"`...)
	b = append(b, kindName(span.Kind())...)
	b = append(b, `","parent_id":`...)
	if p := span.ParentSpanID(); p.IsEmpty() {
		b = append(b, "null"...)
	} else {
		b = appendSpanID(b, p)
	}
	b = append(b, `,"start_time":`...)
	b = appendTime(b, span.StartTimestamp())
	b = append(b, `,"end_time":`...)
	b = appendTime(b, span.EndTimestamp())
	b = append(b, `,"status":{"code":"`...)
	b = append(b, statusName(span.Status().Code())...)
	b = append(b, `","message":`...)
	b = appendString(b, span.Status().Message(), 0)
	b = append(b, `},"attributes":`...)
	b = t.appendNode(b, st.view.root)
	b = m.appendEvents(b, st, span)
	b = m.appendLinks(b, st, span)
	b = append(b, `,"resource":`...)
	b = append(b, sc.resource...)
	b = append(b, `,"scope":{"name":`...)
	b = appendString(b, sc.scope.Name(), 0)
	b = append(b, `,"version":`...)
	b = appendString(b, sc.scope.Version(), 0)
	b = append(b, `},"flags":`...)
	b = strconv.AppendUint(b, uint64(span.Flags()), 10)
	b = appendCount(b, "dropped_attributes_count", span.DroppedAttributesCount())
	b = appendCount(b, "dropped_events_count", span.DroppedEventsCount())
	b = appendCount(b, "dropped_links_count", span.DroppedLinksCount())
	return append(b, '}')
}

func appendContext(b []byte, span ptrace.Span) []byte {
	b = append(b, `,"context":{"trace_id":`...)
	b = appendTraceID(b, span.TraceID())
	b = append(b, `,"span_id":`...)
	b = appendSpanID(b, span.SpanID())
	b = append(b, `,"trace_state":`...)
	b = appendString(b, span.TraceState().AsRaw(), 0)
	return append(b, '}')
}

func (m *Mapper) appendEvents(b []byte, st *mapState, span ptrace.Span) []byte {
	b = append(b, `,"events":[`...)
	evs := span.Events()
	for i := 0; i < evs.Len(); i++ {
		e := evs.At(i)
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendString(b, e.Name(), 0)
		b = append(b, `,"timestamp":`...)
		b = appendTime(b, e.Timestamp())
		b = append(b, `,"attributes":`...)
		b = st.t.appendNode(b, st.view.events[i].root)
		b = appendCount(b, "dropped_attributes_count", e.DroppedAttributesCount())
		b = append(b, '}')
	}
	return append(b, ']')
}

func (m *Mapper) appendLinks(b []byte, st *mapState, span ptrace.Span) []byte {
	b = append(b, `,"links":[`...)
	links := span.Links()
	for i := 0; i < links.Len(); i++ {
		l := links.At(i)
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"trace_id":`...)
		b = appendTraceID(b, l.TraceID())
		b = append(b, `,"span_id":`...)
		b = appendSpanID(b, l.SpanID())
		b = append(b, `,"trace_state":`...)
		b = appendString(b, l.TraceState().AsRaw(), 0)
		b = append(b, `,"attributes":`...)
		b = st.t.appendNode(b, st.links[i])
		b = appendCount(b, "dropped_attributes_count", l.DroppedAttributesCount())
		b = append(b, `,"flags":`...)
		b = strconv.AppendUint(b, uint64(l.Flags()), 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

// kindName and statusName give the enum names Weave writes.
func kindName(k ptrace.SpanKind) string {
	switch k {
	case ptrace.SpanKindInternal:
		return "INTERNAL"
	case ptrace.SpanKindServer:
		return "SERVER"
	case ptrace.SpanKindClient:
		return "CLIENT"
	case ptrace.SpanKindProducer:
		return "PRODUCER"
	case ptrace.SpanKindConsumer:
		return "CONSUMER"
	}
	return "UNSPECIFIED"
}

func statusName(c ptrace.StatusCode) string {
	switch c {
	case ptrace.StatusCodeOk:
		return "OK"
	case ptrace.StatusCodeError:
		return "ERROR"
	}
	return "UNSET"
}

func appendTraceID(b []byte, id pcommon.TraceID) []byte {
	b = append(b, '"')
	b = hex.AppendEncode(b, id[:])
	return append(b, '"')
}

func appendSpanID(b []byte, id pcommon.SpanID) []byte {
	b = append(b, '"')
	b = hex.AppendEncode(b, id[:])
	return append(b, '"')
}

func appendTime(b []byte, ts pcommon.Timestamp) []byte {
	b = append(b, '"')
	b = ts.AsTime().UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

func appendCount(b []byte, name string, n uint32) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return strconv.AppendUint(b, uint64(n), 10)
}
