package pricing

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestDefaultTableCoversMajorProviders(t *testing.T) {
	tb, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if tb.Len() < 50 {
		t.Fatalf("default table has %d rows; want the common models of every major provider", tb.Len())
	}
	for _, id := range []string{"gpt-4o", "gpt-4o-mini", "claude-3-5-sonnet-20241022", "gemini-2.0-flash", "mistral-large-latest"} {
		rows := tb.For([]string{id})
		if len(rows) == 0 {
			t.Errorf("no default price for %s", id)
		}
		for _, p := range rows {
			if p.Level != LevelDefault || p.LevelID != DefaultLevelID || p.PromptTokenCostUnit != UnitUSD || p.PromptTokenCost <= 0 || p.PromptTokenCost > 1e-3 {
				t.Errorf("%s: implausible default row %+v (costs are USD per token)", id, p)
			}
		}
	}
}

func TestParseRejects(t *testing.T) {
	const hdr = "provider_id,llm_id,effective_date,prompt_token_cost,completion_token_cost,cache_read_input_token_cost,cache_creation_input_token_cost\n"
	cases := map[string]string{
		"empty":          "",
		"bad header":     "provider,llm_id\n",
		"short row":      hdr + "openai,gpt,2024-01-01,1\n",
		"bad date":       hdr + "openai,gpt,01/02/2024,1e-6,1e-6,0,0\n",
		"negative cost":  hdr + "openai,gpt,2024-01-01,-1,1e-6,0,0\n",
		"not a number":   hdr + "openai,gpt,2024-01-01,cheap,1e-6,0,0\n",
		"empty llm id":   hdr + "openai,,2024-01-01,1e-6,1e-6,0,0\n",
		"infinite price": hdr + "openai,gpt,2024-01-01,Inf,1e-6,0,0\n",
	}
	for name, in := range cases {
		if _, err := Parse(strings.NewReader(in)); err == nil {
			t.Errorf("%s: Parse accepted %q", name, in)
		}
	}
}

func TestLoadReplacesTheTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prices.csv")
	body := "# mine\nprovider_id,llm_id,effective_date,prompt_token_cost,completion_token_cost,cache_read_input_token_cost,cache_creation_input_token_cost\n" +
		"acme,acme-1,2024-02-03T04:05:06Z,1e-06,2e-06,0,0\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	tb, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	rows := tb.For([]string{"acme-1", "gpt-4o"})
	if tb.Len() != 1 || len(rows) != 1 || !rows[0].EffectiveDate.Equal(time.Date(2024, 2, 3, 4, 5, 6, 0, time.UTC)) {
		t.Fatalf("Load: len %d rows %+v", tb.Len(), rows)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.csv")); err == nil {
		t.Fatal("Load of a missing file succeeded")
	}
}

func TestBestRanking(t *testing.T) {
	started := day("2024-06-01")
	p := func(level, date string, cost float64) Price {
		return Price{LLMID: "m", Level: level, EffectiveDate: day(date), PromptTokenCost: cost}
	}
	cases := []struct {
		name   string
		prices []Price
		want   float64
	}{
		{"latest in effect wins", []Price{p(LevelDefault, "2024-01-01", 1), p(LevelDefault, "2024-05-01", 2), p(LevelDefault, "2024-07-01", 3)}, 2},
		{"project beats newer default", []Price{p(LevelDefault, "2024-05-01", 1), p(LevelProject, "2024-02-01", 2)}, 2},
		{"in effect beats project in the future", []Price{p(LevelProject, "2024-07-01", 1), p(LevelDefault, "2024-01-01", 2)}, 2},
		{"future price when none in effect", []Price{p(LevelDefault, "2024-07-01", 1), p(LevelDefault, "2024-09-01", 2)}, 2},
		{"effective on the start instant counts", []Price{p(LevelDefault, "2024-06-01", 1), p(LevelDefault, "2024-01-01", 2)}, 1},
		{"other models ignored", []Price{{LLMID: "x", Level: LevelProject, PromptTokenCost: 9}, p(LevelDefault, "2024-01-01", 1)}, 1},
	}
	for _, c := range cases {
		got, ok := Best("m", started, c.prices)
		if !ok || got.PromptTokenCost != c.want {
			t.Errorf("%s: got %v (found %v), want cost %v", c.name, got.PromptTokenCost, ok, c.want)
		}
	}
	if _, ok := Best("m", started, nil); ok {
		t.Error("Best found a price in an empty list")
	}
}

func TestComputeCostObject(t *testing.T) {
	prices := []Price{{
		LLMID: "gpt-x", Level: LevelProject, LevelID: "e/p", ProviderID: "openai", EffectiveDate: day("2024-01-01"),
		PromptTokenCost: 0.01, CompletionTokenCost: 0.02, CacheReadInputTokenCost: 0.001, CacheCreationInputTokenCost: 0.005,
		PromptTokenCostUnit: UnitUSD, CompletionTokenCostUnit: UnitUSD, CreatedBy: "u1", CreatedAt: day("2024-01-02"),
	}}
	usage := json.RawMessage(`{"gpt-x":{"prompt_tokens":100,"input_tokens":20,"output_tokens":50,"requests":2,"total_tokens":170,
		"cache_read_input_tokens":30,"cache_creation_input_tokens":10},"unpriced":{"prompt_tokens":5},"broken":7}`)
	out := Compute(usage, day("2024-03-01"), prices)
	var got map[string]map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("Compute output %s: %v", out, err)
	}
	if len(got) != 1 {
		t.Fatalf("costs for %d models, want only the priced one: %s", len(got), out)
	}
	c := got["gpt-x"]
	want := map[string]any{
		"prompt_tokens": 120.0, "completion_tokens": 50.0, "requests": 2.0, "total_tokens": 170.0,
		"cache_read_input_tokens": 30.0, "cache_creation_input_tokens": 10.0,
		"prompt_tokens_total_cost": 0.8, "completion_tokens_total_cost": 1.0,
		"cache_read_input_tokens_total_cost": 0.03, "cache_creation_input_tokens_total_cost": 0.05,
		"prompt_token_cost": 0.01, "pricing_level": "project", "pricing_level_id": "e/p", "provider_id": "openai",
		"effective_date": "2024-01-01T00:00:00Z", "created_at": "2024-01-02T00:00:00Z", "created_by": "u1",
		"prompt_token_cost_unit": "USD",
	}
	for k, v := range want {
		f, isNum := v.(float64)
		g, gotNum := c[k].(float64)
		if isNum && gotNum && (f-g > 1e-9 || g-f > 1e-9) || !isNum && c[k] != v || isNum && !gotNum {
			t.Errorf("%s = %v, want %v", k, c[k], v)
		}
	}
}

func TestComputeWithoutPricesOrUsage(t *testing.T) {
	tb, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, usage := range []string{``, `null`, `[]`, `{}`, `{"unknown-model":{"prompt_tokens":1}}`, `{"gpt-4o":"nope"}`} {
		raw := json.RawMessage(usage)
		if out := Compute(raw, day("2025-01-01"), tb.For(LLMIDs(raw))); out != nil {
			t.Errorf("Compute(%q) = %s, want nil", usage, out)
		}
	}
	if u := Usage(json.RawMessage(`{"usage":{"m":{"requests":1}},"x":2}`)); string(u) != `{"m":{"requests":1}}` {
		t.Errorf("Usage = %s", u)
	}
	if u := Usage(json.RawMessage(`{"usage":null}`)); u != nil {
		t.Errorf("Usage of a null usage = %s, want nil", u)
	}
	got := LLMIDs(json.RawMessage(`{"b":{},"a":{}}`))
	if strings.Join(got, ",") != "a,b" {
		t.Errorf("LLMIDs = %v, want sorted [a b]", got)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(string(defaultPrices))
	f.Add("provider_id,llm_id,effective_date,prompt_token_cost,completion_token_cost,cache_read_input_token_cost,cache_creation_input_token_cost\na,b,2024-01-01,1,1,1,1\n")
	f.Fuzz(func(t *testing.T, in string) {
		tb, err := Parse(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, ps := range tb.byLLM {
			for _, p := range ps {
				if p.PromptTokenCost < 0 || p.LLMID == "" {
					t.Fatalf("accepted invalid row %+v", p)
				}
			}
		}
	})
}

func FuzzCompute(f *testing.F) {
	f.Add(`{"m":{"prompt_tokens":1e300,"completion_tokens":"x","requests":null}}`)
	f.Add(`{"m":{"input_tokens":-5,"output_tokens":3.7}}`)
	prices := []Price{{LLMID: "m", Level: LevelDefault, PromptTokenCost: 1e-6, CompletionTokenCost: 2e-6}}
	f.Fuzz(func(t *testing.T, usage string) {
		out := Compute(json.RawMessage(usage), day("2024-01-01"), prices)
		if out != nil && !json.Valid(out) {
			t.Fatalf("Compute(%q) produced invalid JSON %s", usage, out)
		}
	})
}
