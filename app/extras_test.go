package app_test

import "testing"

type costOut struct {
	PromptTokens          int64   `json:"prompt_tokens"`
	PromptTokensTotalCost float64 `json:"prompt_tokens_total_cost"`
	PricingLevel          string  `json:"pricing_level"`
}

func readExtras(t *testing.T, e *env, id string) (map[string]costOut, []map[string]any) {
	t.Helper()
	var read struct {
		Call struct {
			Summary struct {
				Weave struct {
					Costs    map[string]costOut `json:"costs"`
					Feedback []map[string]any   `json:"feedback"`
				} `json:"weave"`
			} `json:"summary"`
		} `json:"call"`
	}
	e.ok("/call/read", map[string]any{"project_id": "acme/app", "id": id, "include_costs": true}, &read)
	var legacy struct {
		Calls []struct {
			Summary struct {
				Weave struct {
					Feedback []map[string]any `json:"feedback"`
				} `json:"weave"`
			} `json:"summary"`
		} `json:"calls"`
	}
	e.ok("/calls/query", map[string]any{"project_id": "acme/app", "include_feedback": true,
		"filter": map[string]any{"call_ids": []string{id}}}, &legacy)
	if len(legacy.Calls) != 1 {
		t.Fatalf("query returned %d calls", len(legacy.Calls))
	}
	return read.Call.Summary.Weave.Costs, legacy.Calls[0].Summary.Weave.Feedback
}

func TestIncludeCostsAndFeedback(t *testing.T) {
	e := newEnv(t)
	item := startBody("c1", "", "llm", "2025-06-01T00:00:00Z")
	item["ended_at"] = "2025-06-01T00:00:01Z"
	item["summary"] = map[string]any{"usage": map[string]any{"gpt-4o": map[string]any{"prompt_tokens": 1000, "completion_tokens": 10, "requests": 1}}}
	e.ok("/v2/acme/app/calls/complete", map[string]any{"batch": []any{item}}, nil)

	costs, fb := readExtras(t, e, "c1")
	def := costs["gpt-4o"]
	if def.PromptTokens != 1000 || def.PromptTokensTotalCost <= 0 || def.PricingLevel != "default" {
		t.Fatalf("default costs = %+v", costs)
	}
	if len(fb) != 0 {
		t.Fatalf("feedback before any = %v", fb)
	}

	e.ok("/cost/create", map[string]any{"project_id": "acme/app", "costs": map[string]any{"gpt-4o": map[string]any{
		"prompt_token_cost": 1.0, "completion_token_cost": 2.0, "effective_date": "2025-01-01T00:00:00Z"}}}, nil)
	e.ok("/feedback/create", map[string]any{"project_id": "acme/app", "weave_ref": "weave:///acme/app/call/c1",
		"feedback_type": "wandb.note.1", "payload": map[string]any{"note": "good answer"}}, nil)

	costs, fb = readExtras(t, e, "c1")
	if p := costs["gpt-4o"]; p.PricingLevel != "project" || p.PromptTokensTotalCost != 1000 {
		t.Fatalf("project price did not win: %+v", p)
	}
	if len(fb) != 1 || fb[0]["feedback_type"] != "wandb.note.1" {
		t.Fatalf("feedback = %v", fb)
	}
}
