package otelmap

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func TestCallFields(t *testing.T) {
	td := oneSpan(t, []kv{{"gen_ai.request.model", "m"}}, nil)
	call := mapOK(t, Options{}, td)
	checks := []struct{ name, got, want string }{
		{"project", call.ProjectID, "acme/demo"},
		{"id", call.ID, "00f47fd119d321af"},
		{"trace", call.TraceID, "c71352d6778ed98a2694fd2ccec2b13f"},
		{"parent", call.ParentID, "d9b5e0387585961d"},
		{"op", call.OpName, "chat gpt"},
		{"user", call.WBUserID, "user-1"},
		{"thread", call.ThreadID, ""},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if !call.StartedAt.Equal(testStart) || call.EndedAt == nil || call.EndedAt.Sub(testStart) != 1500*time.Millisecond {
		t.Errorf("times = %v .. %v", call.StartedAt, call.EndedAt)
	}
	if call.Exception != nil {
		t.Errorf("exception = %q, want none", *call.Exception)
	}
	if call.InputRefs != nil || call.OutputRefs != nil {
		t.Error("refs must be left to the ref extractor")
	}
}

func TestOtelDump(t *testing.T) {
	td := oneSpan(t, []kv{{"a.b", "x"}, {"n", int64(3)}}, func(s ptrace.Span) {
		s.TraceState().FromRaw("k=v")
		s.Status().SetCode(ptrace.StatusCodeOk)
		e := s.Events().AppendEmpty()
		e.SetName("first_token")
		e.SetTimestamp(pcommon.NewTimestampFromTime(testStart.Add(time.Millisecond)))
		e.Attributes().PutInt("token.index", 0)
		l := s.Links().AppendEmpty()
		l.SetTraceID(testTraceID)
		l.SetSpanID(testParent)
		l.Attributes().PutStr("why", "retry")
	})
	dump := mapOK(t, Options{}, td).OtelDump
	want := map[string]any{
		"name":                             "chat gpt",
		"kind":                             "CLIENT",
		"parent_id":                        "d9b5e0387585961d",
		"start_time":                       "2026-11-21T12:00:00Z",
		"end_time":                         "2026-11-21T12:00:01.5Z",
		"context.trace_id":                 "c71352d6778ed98a2694fd2ccec2b13f",
		"context.span_id":                  "00f47fd119d321af",
		"context.trace_state":              "k=v",
		"status.code":                      "OK",
		"attributes.a.b":                   "x",
		"scope.name":                       "scope",
		"resource.attributes.service.name": "svc",
		"resource.attributes.wandb.entity": "acme",
	}
	for p, w := range want {
		if got := path(t, dump, strings.Split(p, ".")...); got != w {
			t.Errorf("otel_dump.%s = %v, want %v", p, got, w)
		}
	}
	events := path(t, dump, "events").([]any)
	if len(events) != 1 || events[0].(map[string]any)["name"] != "first_token" {
		t.Errorf("events = %v", events)
	}
	links := path(t, dump, "links").([]any)
	if len(links) != 1 || links[0].(map[string]any)["span_id"] != "d9b5e0387585961d" {
		t.Errorf("links = %v", links)
	}
}

func TestStatusAndException(t *testing.T) {
	exception := func(s ptrace.Span) {
		e := s.Events().AppendEmpty()
		e.SetName("exception")
		e.Attributes().PutStr("exception.type", "ValueError")
		e.Attributes().PutStr("exception.message", "bad input")
	}
	tests := []struct {
		name string
		edit func(ptrace.Span)
		want *string
	}{
		{"unset is success", nil, nil},
		{"ok with exception event is success", func(s ptrace.Span) {
			s.Status().SetCode(ptrace.StatusCodeOk)
			exception(s)
		}, nil},
		{"error takes the status message", func(s ptrace.Span) {
			s.Status().SetCode(ptrace.StatusCodeError)
			s.Status().SetMessage("lookup failed")
			exception(s)
		}, ptr("lookup failed")},
		{"error without message takes the exception event", func(s ptrace.Span) {
			s.Status().SetCode(ptrace.StatusCodeError)
			exception(s)
		}, ptr("ValueError: bad input")},
		{"error without any message is still an error", func(s ptrace.Span) {
			s.Status().SetCode(ptrace.StatusCodeError)
		}, ptr("")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			call := mapOK(t, Options{}, oneSpan(t, nil, tc.edit))
			switch {
			case tc.want == nil && call.Exception != nil:
				t.Errorf("exception = %q, want none", *call.Exception)
			case tc.want != nil && (call.Exception == nil || *call.Exception != *tc.want):
				t.Errorf("exception = %v, want %q", call.Exception, *tc.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestWeaveKeys(t *testing.T) {
	call := mapOK(t, Options{}, oneSpan(t, []kv{
		{"wandb.display_name", "My call"}, {"wandb.thread_id", "th-1"}, {"wandb.is_turn", true},
		{"wandb.attributes", `{"env":"prod","kind":"custom"}`}, {"weave.span.kind", "agent"},
		{"wandb.wb_run_id", "run7"}, {"wandb.wb_run_step", int64(4)}, {"wandb.wb_run_step_end", "5"},
	}, nil))
	if call.DisplayName != "My call" || call.ThreadID != "th-1" || call.TurnID != call.ID {
		t.Errorf("display %q thread %q turn %q", call.DisplayName, call.ThreadID, call.TurnID)
	}
	if call.WBRunID != "acme/demo:run7" {
		t.Errorf("run = %q", call.WBRunID)
	}
	if call.WBRunStep == nil || *call.WBRunStep != 4 || call.WBRunStepEnd == nil || *call.WBRunStepEnd != 5 {
		t.Errorf("steps = %v %v", call.WBRunStep, call.WBRunStepEnd)
	}
	// Custom attributes merge at the top level and override fields.
	jsonEq(t, "attributes", call.Attributes, `{"kind":"custom","env":"prod"}`)
}

func TestThreadsAndTurns(t *testing.T) {
	tests := []struct {
		name           string
		attrs          []kv
		thread, turnID string
	}{
		{"nested span of a thread is not a turn", []kv{{"wandb.thread_id", "t"}}, "t", ""},
		{"is_turn false", []kv{{"wandb.thread_id", "t"}, {"wandb.is_turn", false}}, "t", ""},
		{"is_turn without thread", []kv{{"wandb.is_turn", true}}, "", ""},
		{"adk session is a turn", []kv{{"gcp.vertex.agent.session_id", "s1"}}, "s1", "00f47fd119d321af"},
		{"genai conversation id", []kv{{"gen_ai.conversation.id", "c9"}}, "c9", ""},
		{"bad run id is ignored", []kv{{"wandb.wb_run_id", "a/b"}}, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			call := mapOK(t, Options{}, oneSpan(t, tc.attrs, nil))
			if call.ThreadID != tc.thread || call.TurnID != tc.turnID || call.WBRunID != "" {
				t.Errorf("thread %q turn %q run %q", call.ThreadID, call.TurnID, call.WBRunID)
			}
		})
	}
}

func TestTimeOverrides(t *testing.T) {
	start := testStart.Add(-time.Hour)
	end := testStart.Add(-30 * time.Minute)
	call := mapOK(t, Options{}, oneSpan(t, []kv{
		{"langfuse.startTime", start.Format(time.RFC3339Nano)},
		{"langfuse.endTime", end.UnixNano()},
	}, nil))
	if !call.StartedAt.Equal(start) || !call.EndedAt.Equal(end) {
		t.Errorf("times = %v .. %v, want %v .. %v", call.StartedAt, call.EndedAt, start, end)
	}
	// An end before the start is clamped: a received span has ended.
	call = mapOK(t, Options{}, oneSpan(t, nil, func(s ptrace.Span) { s.SetEndTimestamp(0) }))
	if !call.EndedAt.Equal(call.StartedAt) {
		t.Errorf("end = %v, want the start %v", call.EndedAt, call.StartedAt)
	}
}

func TestModelFromParameters(t *testing.T) {
	call := mapOK(t, Options{}, oneSpan(t, []kv{
		{"llm.invocation_parameters", `{"model":"gpt-x","temperature":0}`},
		{"llm.token_count.prompt", int64(3)},
	}, nil))
	jsonEq(t, "summary", call.Summary, `{"usage":{"gpt-x":{"prompt_tokens":3}}}`)
	call = mapOK(t, Options{}, oneSpan(t, []kv{{"gen_ai.usage.input_tokens", "oops"}, {"gen_ai.usage.output_tokens", 2.9}}, nil))
	jsonEq(t, "summary", call.Summary, `{"usage":{"usage":{"output_tokens":2}}}`)
}
