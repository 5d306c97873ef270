package traceapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/traceapi"
)

// usageEnv is an apiEnv whose calls API prices with the store's project
// prices, holding two traces:
//
//	t1: root (gpt-4 10+5, 1 request) -> child (gpt-4 3+2 as input/output
//	    tokens, claude 7 prompt) -> grand (gpt-4 1 prompt, still running)
//	t2: lone (no usage)
func newUsageEnv(t *testing.T) *apiEnv {
	e := newAPIEnv(t)
	traceapi.New(e.store, traceapi.CallExtras{Prices: e.store}, 1<<20, slog.New(slog.DiscardHandler)).
		Register(e.mux, e.wrapAs)
	start := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	end := start.Add(time.Second)
	write := func(id, trace, parent, summary string, ended bool) {
		c := storage.Call{ProjectID: "acme/p", ID: id, TraceID: trace, ParentID: parent, OpName: "op",
			StartedAt: start, Attributes: json.RawMessage(`{}`), Inputs: json.RawMessage(`{}`), Summary: json.RawMessage(summary)}
		kind := storage.PartStart
		if ended {
			c.EndedAt, kind = &end, storage.PartComplete
		}
		if _, err := e.store.WriteCallOps(context.Background(), []storage.CallOp{{Part: &storage.CallPart{Kind: kind, Call: c}}}); err != nil {
			t.Fatal(err)
		}
	}
	write("root", "t1", "", `{"usage":{"gpt-4":{"prompt_tokens":10,"completion_tokens":5,"requests":1}}}`, true)
	write("child", "t1", "root", `{"usage":{"gpt-4":{"input_tokens":3,"output_tokens":2,"requests":1},"claude":{"prompt_tokens":7}}}`, true)
	write("grand", "t1", "child", `{"usage":{"gpt-4":{"prompt_tokens":1}}}`, false)
	write("lone", "t2", "", `{}`, true)
	err := e.store.CreatePrices(context.Background(), []pricing.Price{{ID: "p1", Level: pricing.LevelProject, LevelID: "acme/p",
		ProviderID: "openai", LLMID: "gpt-4", EffectiveDate: start.Add(-time.Hour), PromptTokenCost: 0.01, CompletionTokenCost: 0.02,
		PromptTokenCostUnit: "USD", CompletionTokenCostUnit: "USD", CreatedBy: "u", CreatedAt: start}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

type usageAnswer struct {
	CallUsage map[string]map[string]struct {
		Requests              int64    `json:"requests"`
		PromptTokens          int64    `json:"prompt_tokens"`
		CompletionTokens      int64    `json:"completion_tokens"`
		TotalTokens           int64    `json:"total_tokens"`
		PromptTokensTotalCost *float64 `json:"prompt_tokens_total_cost"`
		CompletionCost        *float64 `json:"completion_tokens_total_cost"`
	} `json:"call_usage"`
	UnfinishedCallIDs []string `json:"unfinished_call_ids"`
}

func (e *apiEnv) usage(path string, body any, want int) usageAnswer {
	e.t.Helper()
	status, out := e.send(http.MethodPost, path, body)
	if status != want {
		e.t.Fatalf("%s = %d %s; want %d", path, status, out, want)
	}
	var a usageAnswer
	if status == http.StatusOK {
		if err := json.Unmarshal(out, &a); err != nil {
			e.t.Fatalf("%s: %v in %s", path, err, out)
		}
	}
	return a
}

// TestCallsUsageRollsUpDescendants: each named call's usage is its own
// plus every descendant's, both token spellings adding up, totals filled
// from prompt+completion, the running descendant named.
func TestCallsUsageRollsUpDescendants(t *testing.T) {
	e := newUsageEnv(t)
	a := e.usage("/calls/usage", map[string]any{"project_id": "acme/p", "call_ids": []string{"root", "lone", "root"}}, http.StatusOK)
	gpt := a.CallUsage["root"]["gpt-4"]
	if gpt.Requests != 2 || gpt.PromptTokens != 14 || gpt.CompletionTokens != 7 || gpt.TotalTokens != 21 {
		t.Errorf("root gpt-4 = %+v; want 2 requests, 14 prompt, 7 completion, 21 total", gpt)
	}
	if c := a.CallUsage["root"]["claude"]; c.PromptTokens != 7 || c.TotalTokens != 7 {
		t.Errorf("root claude = %+v; want 7 prompt, 7 total", c)
	}
	if gpt.PromptTokensTotalCost != nil {
		t.Errorf("costs without include_costs: %v", *gpt.PromptTokensTotalCost)
	}
	if u, ok := a.CallUsage["lone"]; !ok || len(u) != 0 {
		t.Errorf("lone = %v, present %v; want an empty usage", u, ok)
	}
	if len(a.CallUsage) != 2 {
		t.Errorf("call_usage has %d calls; want the 2 named", len(a.CallUsage))
	}
	if !slices.Equal(a.UnfinishedCallIDs, []string{"grand"}) {
		t.Errorf("unfinished = %v; want [grand]", a.UnfinishedCallIDs)
	}

	priced := e.usage("/calls/usage", map[string]any{"project_id": "acme/p", "call_ids": []string{"root"}, "include_costs": true}, http.StatusOK)
	g := priced.CallUsage["root"]["gpt-4"]
	if g.PromptTokensTotalCost == nil || math.Abs(*g.PromptTokensTotalCost-0.14) > 1e-9 || math.Abs(*g.CompletionCost-0.14) > 1e-9 {
		t.Errorf("root gpt-4 costs = %v, %v; want 0.14 and 0.14", g.PromptTokensTotalCost, g.CompletionCost)
	}
	if c := priced.CallUsage["root"]["claude"]; c.PromptTokensTotalCost == nil || *c.PromptTokensTotalCost != 0 {
		t.Errorf("an unpriced model's cost = %v; want 0", c.PromptTokensTotalCost)
	}
}

// TestTraceUsageEveryCall: every matching call gets its own subtree's sum.
func TestTraceUsageEveryCall(t *testing.T) {
	e := newUsageEnv(t)
	a := e.usage("/trace/usage", map[string]any{"project_id": "acme/p", "filter": map[string]any{"trace_ids": []string{"t1"}}}, http.StatusOK)
	for id, want := range map[string]int64{"root": 14, "child": 4, "grand": 1} {
		if got := a.CallUsage[id]["gpt-4"].PromptTokens; got != want {
			t.Errorf("%s gpt-4 prompt = %d; want %d", id, got, want)
		}
	}
	if _, ok := a.CallUsage["lone"]; ok {
		t.Error("a call of another trace is in the answer")
	}
}

// TestUsageRefusals: bounds and scoping are errors naming the field,
// never partial sums.
func TestUsageRefusals(t *testing.T) {
	e := newUsageEnv(t)
	cases := []struct {
		name, path string
		body       map[string]any
		status     int
		mention    string
	}{
		{"trace over limit", "/calls/usage", map[string]any{"project_id": "acme/p", "call_ids": []string{"root"}, "limit": 2}, 400, "limit"},
		{"matches over limit", "/trace/usage", map[string]any{"project_id": "acme/p", "limit": 3}, 400, "limit"},
		{"limit zero", "/trace/usage", map[string]any{"project_id": "acme/p", "limit": 0}, 400, "limit"},
		{"no call_ids", "/calls/usage", map[string]any{"project_id": "acme/p"}, 400, "call_ids"},
		{"other entity", "/calls/usage", map[string]any{"project_id": "other/p", "call_ids": []string{"root"}}, 403, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, out := e.send(http.MethodPost, tc.path, tc.body)
			if status != tc.status && !(tc.status == 400 && status == 422) {
				t.Fatalf("status %d %s; want %d", status, out, tc.status)
			}
			if !strings.Contains(string(out), tc.mention) {
				t.Errorf("answer %s does not name %q", out, tc.mention)
			}
		})
	}
	// A read-only key may read usage.
	e.caller = principal("acme", auth.RoleViewer)
	e.usage("/calls/usage", map[string]any{"project_id": "acme/p", "call_ids": []string{"root"}}, http.StatusOK)
}
