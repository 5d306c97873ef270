package app_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/inference"
	"github.com/weftdev/weft/inference/catalog"
	"github.com/weftdev/weft/inference/upstreamtest"
)

// pricedEnv is a server whose gateway serves "priced" from a fake
// upstream at $1 a prompt token and $2 a completion token, so one "hi"
// (1 prompt word, 2 answer words) costs $5.
func pricedEnv(t *testing.T, budgets ...inference.BudgetRule) *env {
	up := upstreamtest.New(upstreamtest.Options{})
	t.Cleanup(up.Close)
	return newEnv(t, func(c *config.Config) {
		c.Inference.Providers = []catalog.ProviderConfig{{Name: "up", BaseURL: up.BaseURL()}}
		c.Inference.Models = []catalog.ModelConfig{{ID: "priced", Upstreams: []catalog.UpstreamConfig{{Provider: "up", Model: "echo"}},
			Prices: catalog.Prices{InputPerMillion: 1_000_000, OutputPerMillion: 2_000_000}}}
		c.Inference.Budgets = budgets
		c.Inference.BudgetsInterval = 20 * time.Millisecond
	})
}

func (e *env) pricedChat(key, project string) (int, []byte) {
	e.t.Helper()
	status, _, body := e.do(http.MethodPost, "/v1/chat/completions", key,
		map[string]any{"model": "priced", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}, "Service-Project", project)
	return status, body
}

// budgetSpend waits until the gateway measured want dollars spent today
// on the budget of project (and key), and returns the figure.
func (e *env) budgetSpend(project, key string, want float64, month bool) float64 {
	e.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var res struct {
			BudgetStatus []inference.BudgetStatus `json:"budget_status"`
		}
		status, _, body := e.do(http.MethodGet, "/inference/limits", e.admin, nil)
		if status != http.StatusOK || json.Unmarshal(body, &res) != nil {
			e.t.Fatalf("GET /inference/limits = %d %s", status, body)
		}
		for _, st := range res.BudgetStatus {
			got := st.SpentTodayUSD
			if month {
				got = st.SpentMonthUSD
			}
			if st.Project == project && st.Key == key && math.Abs(got-want) < 1e-9 {
				return got
			}
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("budget of %s %s never measured $%v: %s", project, key, want, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// includeCosts is what /calls/stream_query with include_costs says the
// project's calls cost.
func (e *env) includeCosts(project string) float64 {
	e.t.Helper()
	status, _, out := e.do(http.MethodPost, "/calls/stream_query", e.admin, map[string]any{"project_id": project, "include_costs": true})
	if status != http.StatusOK {
		e.t.Fatalf("stream_query = %d %s", status, out)
	}
	total := 0.0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var c struct {
			Summary struct {
				Weave struct {
					Costs map[string]struct {
						Prompt     float64 `json:"prompt_tokens_total_cost"`
						Completion float64 `json:"completion_tokens_total_cost"`
					} `json:"costs"`
				} `json:"weave"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			e.t.Fatalf("stream_query line %q: %v", line, err)
		}
		for _, cost := range c.Summary.Weave.Costs {
			total += cost.Prompt + cost.Completion
		}
	}
	return total
}

// TestGatewayBudgetFromConfig: a project spends through the gateway
// until its configured daily budget, then is refused 429 naming the
// budget; the spend the budget counted is what include_costs says the
// calls cost.
func TestGatewayBudgetFromConfig(t *testing.T) {
	e := pricedEnv(t, inference.BudgetRule{Name: "app daily", Project: "acme/app", USDPerDay: 12})
	served := 0
	for {
		status, body := e.pricedChat(e.member, "acme/app")
		if status == http.StatusTooManyRequests {
			if field := string(body); !strings.Contains(field, `"code":"budget_exceeded"`) || !strings.Contains(field, `"type":"insufficient_quota"`) ||
				!strings.Contains(field, `budget \"app daily\"`) || !strings.Contains(field, "usd_per_day 12") {
				t.Fatalf("over the budget: %s, want budget_exceeded naming the budget", body)
			}
			break
		}
		if status != http.StatusOK {
			t.Fatalf("under the budget: %d %s", status, body)
		}
		served++
		e.budgetSpend("acme/app", "", float64(5*served), false)
		if served > 5 {
			t.Fatal("the budget never refused")
		}
	}
	if served != 3 {
		t.Fatalf("%d requests of $5 served under a $12 budget, want 3", served)
	}
	spent := e.budgetSpend("acme/app", "", 15, false)
	if costs := e.includeCosts("acme/app"); math.Abs(costs-spent) > 1e-9 {
		t.Fatalf("the budget counted $%v, include_costs says $%v", spent, costs)
	}
	status, _, body := e.do(http.MethodPost, "/completions/create", e.member, map[string]any{"project_id": "acme/app",
		"inputs": map[string]any{"model": "priced", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}})
	if status != http.StatusTooManyRequests || !strings.Contains(string(body), "app daily") {
		t.Fatalf("/completions/create over the budget: %d %s", status, body)
	}
	if status, body := e.pricedChat(e.member, "acme/other"); status != http.StatusOK {
		t.Fatalf("another project: %d %s", status, body)
	}
}

// TestGatewayKeyBudgetFromAdminAPI: a budget set through the admin API
// for one key in a project refuses that key once its calls cost the cap,
// and no other key; the project's own budget it replaced no longer
// refuses.
func TestGatewayKeyBudgetFromAdminAPI(t *testing.T) {
	e := pricedEnv(t, inference.BudgetRule{Project: "acme/app", USDPerDay: 1})
	p, err := auth.StoreVerifier{Store: e.keys}.Verify(context.Background(), e.member)
	if err != nil {
		t.Fatal(err)
	}
	e.pricedChat(e.member, "acme/app")
	e.budgetSpend("acme/app", "", 5, false)
	if status, body := e.pricedChat(e.member, "acme/app"); status != http.StatusTooManyRequests {
		t.Fatalf("over the configured budget: %d %s", status, body)
	}
	status, _, body := e.do(http.MethodPut, "/inference/limits", e.admin, map[string]any{"budgets": []any{
		map[string]any{"project": "acme/keyed", "key": p.KeyID, "usd_per_month": 4}}})
	if status != http.StatusOK {
		t.Fatalf("PUT /inference/limits = %d %s", status, body)
	}
	other := e.newKey(e.keys, "acme", auth.RoleMember)
	if status, body := e.pricedChat(other, "acme/keyed"); status != http.StatusOK {
		t.Fatalf("another key's spend: %d %s", status, body)
	}
	if status, body := e.pricedChat(e.member, "acme/keyed"); status != http.StatusOK {
		t.Fatalf("the key under its budget: %d %s", status, body)
	}
	e.budgetSpend("acme/keyed", p.KeyID, 5, true) // the key's call alone, not the other key's
	status, body = e.pricedChat(e.member, "acme/keyed")
	if status != http.StatusTooManyRequests || !strings.Contains(string(body), "API key "+p.KeyID+" in project acme/keyed") {
		t.Fatalf("the key over its budget: %d %s", status, body)
	}
	if status, body := e.pricedChat(other, "acme/keyed"); status != http.StatusOK {
		t.Fatalf("another key under no budget: %d %s", status, body)
	}
	if status, body := e.pricedChat(e.member, "acme/app"); status != http.StatusOK {
		t.Fatalf("the replaced project budget still refuses: %d %s", status, body)
	}
}
