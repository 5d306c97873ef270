package otelmap

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// gen turns fuzz bytes into pdata; it returns zeros once the input ends.
type gen struct{ data []byte }

func (g *gen) byte() byte {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return b
}

func (g *gen) n(max int) int { return int(g.byte()) % max }

// Keys come from a tiny alphabet so that dotted paths collide often
// (conflicts, merges, numeric lists) and conventions match.
var fuzzSegs = []string{"gen_ai", "prompt", "0", "1", "input", "value", "usage", "input_tokens",
	"wandb", "attributes", "thread_id", "is_turn", "llm", "model_name", "output", "", "x"}

func (g *gen) key() string {
	var b bytes.Buffer
	for i := range 1 + g.n(4) {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(fuzzSegs[g.n(len(fuzzSegs))])
	}
	return b.String()
}

var fuzzStrings = []string{"", "a", `{"a":1}`, `[1,{"b":2}]`, `{"bad":`, "\xff\xfe", "12", "{}", "[]", `"q"`}

func (g *gen) value(v pcommon.Value, depth int) {
	switch g.n(8) {
	case 0:
		v.SetStr(fuzzStrings[g.n(len(fuzzStrings))])
	case 1:
		v.SetInt(int64(g.byte()) - 100)
	case 2:
		v.SetDouble([]float64{0.5, math.NaN(), math.Inf(1), -1e300}[g.n(4)])
	case 3:
		v.SetBool(g.byte()%2 == 0)
	case 4:
		v.SetEmptyBytes().FromRaw(bytes.Repeat([]byte{g.byte()}, g.n(40)))
	case 5:
		if depth < 3 {
			s := v.SetEmptySlice()
			for range g.n(3) {
				g.value(s.AppendEmpty(), depth+1)
			}
		}
	case 6:
		if depth < 3 {
			g.attrs(v.SetEmptyMap(), depth+1)
		}
	default:
		n := g.n(64)
		v.SetStr(string(g.data[:min(len(g.data), n)]))
	}
}

func (g *gen) attrs(m pcommon.Map, depth int) {
	for range g.n(8) {
		g.value(m.PutEmpty(g.key()), depth)
	}
}

func (g *gen) span(s ptrace.Span) {
	s.SetName(g.key())
	if g.n(8) != 0 {
		s.SetTraceID(pcommon.TraceID{1, g.byte()})
		s.SetSpanID(pcommon.SpanID{g.byte(), 2})
	}
	s.SetStartTimestamp(pcommon.Timestamp(g.byte()))
	s.SetEndTimestamp(pcommon.Timestamp(g.byte()))
	s.Status().SetCode(ptrace.StatusCode(g.n(3)))
	g.attrs(s.Attributes(), 0)
	for range g.n(3) {
		e := s.Events().AppendEmpty()
		e.SetName([]string{"exception", "gen_ai.choice", "x"}[g.n(3)])
		g.attrs(e.Attributes(), 0)
	}
}

func (g *gen) traces() ptrace.Traces {
	td := ptrace.NewTraces()
	for range 1 + g.n(2) {
		rs := td.ResourceSpans().AppendEmpty()
		if g.n(4) != 0 {
			rs.Resource().Attributes().PutStr("wandb.entity", "e")
			rs.Resource().Attributes().PutStr("wandb.project", "p")
		}
		g.attrs(rs.Resource().Attributes(), 1)
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		for range 1 + g.n(4) {
			g.span(spans.AppendEmpty())
		}
	}
	return td
}

func FuzzMap(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("gen_ai.prompt.0 input.value wandb.attributes {\"a\":1}"))
	f.Add(bytes.Repeat([]byte{1, 6, 2, 5, 0, 3, 4, 7}, 16))
	f.Add(bytes.Repeat([]byte{0xff, 0x10, 0x80, 0x02}, 32))
	m := NewMapper(Options{MaxAttributeValueBytes: 16})
	f.Fuzz(func(t *testing.T, data []byte) {
		td := (&gen{data: data}).traces()
		res := m.Map(td, Input{WBUserID: "u"})
		if got := len(res.Parts) + len(res.Rejected); got != td.SpanCount() {
			t.Fatalf("%d parts + rejections for %d spans", got, td.SpanCount())
		}
		for _, p := range res.Parts {
			c := p.Call
			for name, doc := range map[string][]byte{"attributes": c.Attributes, "inputs": c.Inputs,
				"summary": c.Summary, "otel_dump": c.OtelDump} {
				var obj map[string]any
				if !utf8.Valid(doc) {
					t.Fatalf("%s is not UTF-8: %q", name, doc)
				}
				if err := json.Unmarshal(doc, &obj); err != nil {
					t.Fatalf("%s is not a JSON object: %v: %q", name, err, doc)
				}
			}
			if c.Output != nil && (!json.Valid(c.Output) || !utf8.Valid(c.Output)) {
				t.Fatalf("output is not JSON: %q", c.Output)
			}
			if c.ID == "" || c.TraceID == "" || c.OpName == "" || c.ProjectID == "" {
				t.Fatalf("call without identity: %+v", c)
			}
		}
	})
}
