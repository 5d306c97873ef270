package otelmap

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/weftdev/weft/storage"
)

// kv is an ordered attribute; order matters for conflicts and output.
type kv struct {
	k string
	v any
}

var (
	testTraceID = pcommon.TraceID{0xc7, 0x13, 0x52, 0xd6, 0x77, 0x8e, 0xd9, 0x8a, 0x26, 0x94, 0xfd, 0x2c, 0xce, 0xc2, 0xb1, 0x3f}
	testSpanID  = pcommon.SpanID{0x00, 0xf4, 0x7f, 0xd1, 0x19, 0xd3, 0x21, 0xaf}
	testParent  = pcommon.SpanID{0xd9, 0xb5, 0xe0, 0x38, 0x75, 0x85, 0x96, 0x1d}
	testStart   = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
)

func putAttrs(t testing.TB, m pcommon.Map, attrs []kv) {
	t.Helper()
	for _, a := range attrs {
		if err := m.PutEmpty(a.k).FromRaw(a.v); err != nil {
			t.Fatalf("attribute %s: %v", a.k, err)
		}
	}
}

// oneSpan builds a request with one resource (project acme/demo), one
// scope and one span carrying attrs; edit may change the span further.
func oneSpan(t testing.TB, attrs []kv, edit func(ptrace.Span)) ptrace.Traces {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	putAttrs(t, rs.Resource().Attributes(), []kv{
		{"service.name", "svc"}, {"wandb.entity", "acme"}, {"wandb.project", "demo"},
	})
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("scope")
	ss.Scope().SetVersion("1.0")
	s := ss.Spans().AppendEmpty()
	s.SetName("chat gpt")
	s.SetTraceID(testTraceID)
	s.SetSpanID(testSpanID)
	s.SetParentSpanID(testParent)
	s.SetKind(ptrace.SpanKindClient)
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(testStart))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(testStart.Add(1500 * time.Millisecond)))
	putAttrs(t, s.Attributes(), attrs)
	if edit != nil {
		edit(s)
	}
	return td
}

// mapOK maps td and requires exactly one call.
func mapOK(t *testing.T, opts Options, td ptrace.Traces) storage.Call {
	t.Helper()
	res := NewMapper(opts).Map(td, Input{WBUserID: "user-1"})
	if len(res.Rejected) != 0 {
		t.Fatalf("rejected: %v", res.Rejected)
	}
	if len(res.Parts) != 1 {
		t.Fatalf("got %d parts, want 1", len(res.Parts))
	}
	if res.Parts[0].Kind != storage.PartComplete {
		t.Fatalf("kind = %v, want complete", res.Parts[0].Kind)
	}
	return res.Parts[0].Call
}

// jsonEq fails unless got is valid JSON equal in value to want ("" means
// the field must be unset).
func jsonEq(t *testing.T, field string, got json.RawMessage, want string) {
	t.Helper()
	if want == "" {
		if got != nil {
			t.Errorf("%s = %s, want unset", field, got)
		}
		return
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s is not JSON: %v: %s", field, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation for %s: %v", field, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s =\n  %s\nwant\n  %s", field, got, want)
	}
}

// path reads a dotted path from a JSON document.
func path(t *testing.T, doc json.RawMessage, keys ...string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, doc)
	}
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("no object at %q in %s", k, doc)
		}
		v = m[k]
	}
	return v
}
