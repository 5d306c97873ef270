package otelmap

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func TestAttributeTree(t *testing.T) {
	tests := []struct {
		name     string
		attrs    []kv
		want     string // attributes.x of the whole-tree fallback; "" = rejected
		conflict string
	}{
		{"dotted keys nest", []kv{{"x.a.b", int64(1)}, {"x.a.c", "s"}}, `{"a":{"b":1,"c":"s"}}`, ""},
		{"value then nested keys", []kv{{"x.a", int64(1)}, {"x.a.b", int64(2)}}, "", "x.a"},
		{"nested keys then value", []kv{{"x.a.b", int64(2)}, {"x.a", int64(1)}}, "", "x.a"},
		{"top-level value then nested", []kv{{"x", "v"}, {"x.a", "w"}}, "", "x"},
		{"json object merges with dotted keys", []kv{{"x", `{"a":1}`}, {"x.b", int64(2)}}, `{"a":1,"b":2}`, ""},
		{"kvlist merges with dotted keys", []kv{{"x", map[string]any{"a": int64(1)}}, {"x.b", int64(2)}}, `{"a":1,"b":2}`, ""},
		{"json object after dotted keys merges", []kv{{"x.b", int64(2)}, {"x", `{"a":1}`}}, `{"b":2,"a":1}`, ""},
		{"json array blocks nesting", []kv{{"x", `[1]`}, {"x.0", int64(2)}}, "", "x"},
		{"numeric keys become a list", []kv{{"x.1", "b"}, {"x.0", "a"}}, `["a","b"]`, ""},
		{"gapped numeric keys stay an object", []kv{{"x.0", "a"}, {"x.2", "c"}}, `{"0":"a","2":"c"}`, ""},
		{"invalid json stays a string", []kv{{"x", `{"a":`}}, `"{\"a\":"`, ""},
		{"bytes are base64", []kv{{"x", []byte("hi")}}, `"aGk="`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			td := oneSpan(t, tc.attrs, nil)
			res := NewMapper(Options{}).Map(td, Input{})
			if tc.want == "" {
				if len(res.Rejected) != 1 || !strings.Contains(res.Rejected[0].Reason, `"`+tc.conflict+`"`) {
					t.Fatalf("rejections = %v, want a conflict at %q", res.Rejected, tc.conflict)
				}
				return
			}
			if len(res.Parts) != 1 {
				t.Fatalf("rejected: %v", res.Rejected)
			}
			jsonEq(t, "attributes.x", mustMarshal(t, path(t, res.Parts[0].Call.Attributes, "x")), tc.want)
		})
	}
}

func mustMarshal(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRepeatedKeyLastWins(t *testing.T) {
	tr := tree{}
	root := tr.newRoot()
	for _, v := range []string{"a", "b"} {
		if err := tr.insert(root, "x.y", leaf{pv: pcommon.NewValueStr(v)}); err != nil {
			t.Fatal(err)
		}
	}
	if got := string(tr.appendNode(nil, root)); got != `{"x":{"y":"b"}}` {
		t.Errorf("tree = %s", got)
	}
}

func TestConflictError(t *testing.T) {
	var tr tree
	root := tr.newRoot()
	if err := tr.insert(root, "a.b", leaf{pv: pcommon.NewValueInt(1)}); err != nil {
		t.Fatal(err)
	}
	err := tr.insert(root, "a.b.c", leaf{pv: pcommon.NewValueInt(2)})
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Key != "a.b.c" || ce.Path != "a.b" {
		t.Fatalf("err = %v, want a conflict of a.b.c at a.b", err)
	}
}

func TestRejectedSpans(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(ptrace.Span)
		reason string
	}{
		{"no trace id", func(s ptrace.Span) { s.SetTraceID(pcommon.TraceID{}) }, "trace_id"},
		{"no span id", func(s ptrace.Span) { s.SetSpanID(pcommon.SpanID{}) }, "span_id"},
		{"no start", func(s ptrace.Span) { s.SetStartTimestamp(0) }, "start_time"},
		{"event conflict", func(s ptrace.Span) {
			e := s.Events().AppendEmpty()
			e.SetName("ev")
			e.Attributes().PutStr("a", "x")
			e.Attributes().PutStr("a.b", "y")
		}, "event ev"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			td := oneSpan(t, nil, tc.edit)
			// A second, valid span in the same request still maps.
			ok := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty()
			oneSpan(t, nil, nil).ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).CopyTo(ok)
			res := NewMapper(Options{}).Map(td, Input{})
			if len(res.Parts) != 1 || len(res.Rejected) != 1 {
				t.Fatalf("parts %d rejected %v", len(res.Parts), res.Rejected)
			}
			r := res.Rejected[0]
			if r.Span != 0 || !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("rejection = %+v, want span 0 for %q", r, tc.reason)
			}
			if !strings.Contains(r.String(), "chat gpt") {
				t.Errorf("message %q does not name the span", r.String())
			}
		})
	}
}

func TestProjects(t *testing.T) {
	td := ptrace.NewTraces()
	for _, res := range [][]kv{
		{{"wandb.entity", "a"}, {"wandb.project", "p1"}},
		{{"wandb.entity", "a"}, {"wandb.project", "p2"}},
		{{"wandb.entity", "a"}},
		{{"wandb.entity", "a"}, {"wandb.project", "p1"}},
	} {
		rs := td.ResourceSpans().AppendEmpty()
		putAttrs(t, rs.Resource().Attributes(), res)
		oneSpan(t, nil, nil).ResourceSpans().At(0).ScopeSpans().CopyTo(rs.ScopeSpans())
	}
	m := NewMapper(Options{})
	res := m.Map(td, Input{})
	if strings.Join(res.Projects, ",") != "a/p1,a/p2" || len(res.Parts) != 3 || res.NoProject != 1 {
		t.Fatalf("projects %v parts %d noProject %d", res.Projects, len(res.Parts), res.NoProject)
	}
	if res.Rejected[0].Resource != 2 || res.Rejected[0].Reason != ReasonNoProject {
		t.Errorf("rejection = %+v", res.Rejected[0])
	}
	// The header project wins over resource attributes.
	res = m.Map(td, Input{ProjectID: "h/x"})
	if strings.Join(res.Projects, ",") != "h/x" || len(res.Parts) != 4 {
		t.Errorf("with header: projects %v parts %d", res.Projects, len(res.Parts))
	}
}

func TestTruncation(t *testing.T) {
	big := strings.Repeat("é", 40) // 80 bytes
	call := mapOK(t, Options{MaxAttributeValueBytes: 21}, oneSpan(t, []kv{
		{"input.value", big}, {"small", "ok"}, {"list", []any{"short", big}},
		{"json", `{"k":"` + big + `"}`},
	}, nil))
	in := path(t, call.Inputs, "input.value").(string)
	if in != strings.Repeat("é", 10) {
		t.Errorf("input cut to %q (%d bytes), want 10 runes", in, len(in))
	}
	jsonEq(t, "truncated", mustMarshal(t, path(t, call.Attributes, "weft", "truncated")), `["input.value","list","json"]`)
	if got := path(t, call.OtelDump, "attributes", "json"); got != `{"k":"ééééééé` {
		t.Errorf("cut JSON text must stay a string, got %v", got)
	}
	call = mapOK(t, Options{MaxAttributeValueBytes: 1000}, oneSpan(t, []kv{{"input.value", big}}, nil))
	if path(t, call.Attributes, "weft") != nil {
		t.Errorf("attributes = %s, want no truncation mark", call.Attributes)
	}
}

func TestRejectionMessage(t *testing.T) {
	var rs []Rejection
	for range 25 {
		rs = append(rs, Rejection{Name: "s", Reason: "r"})
	}
	msg := RejectionMessage(rs)
	if strings.Count(msg, "span \"s\"") != 20 || !strings.HasSuffix(msg, "; ...") {
		t.Errorf("message = %q", msg)
	}
	if RejectionMessage(rs[:1]) != rs[0].String() {
		t.Error("a single rejection is its own message")
	}
}
