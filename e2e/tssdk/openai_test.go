package tssdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/inference"
	"github.com/weftdev/weft/inference/catalog"
	"github.com/weftdev/weft/inference/upstreamtest"
)

const (
	openaiVersion  = "6.49.0" // pinned in package.json and package-lock.json
	gatewayModel   = "acme-llama"
	gatewayPrice   = 0.5 // USD per million tokens, input and output
	gatewayProject = "acme/node"
	limitedProject = "acme/node-limited" // one request a minute
)

// openaiResult is what openai.mjs saw through the npm client.
type openaiResult struct {
	Models                         []map[string]any
	Plain, Tools, JSON             plainAnswer
	Failover, Slow                 plainAnswer
	StreamWithUsage, StreamNoUsage streamAnswer
	RateLimit                      struct{ Limit, Remaining, RetryAfter *string }
	Errors                         map[string]struct {
		Status  int
		Code    *string
		Kind    string
		Message string
	}
}

type plainAnswer struct {
	Message struct {
		Content   *string
		ToolCalls []struct {
			Function struct{ Name, Arguments string }
		} `json:"tool_calls"`
	}
	Finish string
	Usage  struct {
		TotalTokens int `json:"total_tokens"`
	}
	CallID string
}

type streamAnswer struct {
	Content string
	Usage   *struct {
		TotalTokens int `json:"total_tokens"`
	}
	Chunks int
	CallID string
}

// TestOpenAINodeClient drives the gateway with the official openai npm
// package and checks what it saw and the calls it left behind.
func TestOpenAINodeClient(t *testing.T) {
	node := requireNodePackage(t, "openai", openaiVersion)
	url, key := startGatewayWeft(t)
	res, raw := runOpenAIScript(t, node, url, key)
	checkNodeAnswers(t, res, raw)
	checkNodeErrors(t, res)
	c := &client{t: t, base: url, key: key}
	for _, id := range []string{res.Plain.CallID, res.Tools.CallID, res.JSON.CallID, res.StreamWithUsage.CallID, res.StreamNoUsage.CallID} {
		checkNodeCall(t, c, id)
	}
}

// startGatewayWeft serves a weft whose gateway fronts a fake upstream,
// and returns its URL and a member key of acme.
func startGatewayWeft(t *testing.T) (url, key string) {
	t.Helper()
	up := upstreamtest.New(upstreamtest.Options{Key: "sk-node-upstream", Delay: 200 * time.Millisecond})
	t.Cleanup(up.Close)
	t.Setenv("WEFT_TSSDK_LLM_KEY", "sk-node-upstream")
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Inference.Providers = []catalog.ProviderConfig{{Name: "fake", BaseURL: up.BaseURL(), APIKeyEnv: "WEFT_TSSDK_LLM_KEY"},
		{Name: "down", BaseURL: upstreamtest.DeadURL(t)}}
	cfg.Inference.Models = []catalog.ModelConfig{
		{ID: gatewayModel, Upstreams: []catalog.UpstreamConfig{{Provider: "fake", Model: "echo"}},
			Prices: catalog.Prices{InputPerMillion: gatewayPrice, OutputPerMillion: gatewayPrice}},
		{ID: "broken", Upstreams: []catalog.UpstreamConfig{{Provider: "fake", Model: "fail-500"}}},
		{ID: "midstream", Upstreams: []catalog.UpstreamConfig{{Provider: "fake", Model: "midstream-error"}}},
		{ID: "failover", Upstreams: []catalog.UpstreamConfig{{Provider: "down", Model: "echo"}, {Provider: "fake", Model: "echo-spare"}}},
		{ID: "slow", Upstreams: []catalog.UpstreamConfig{{Provider: "fake", Model: "slow"}}},
	}
	cfg.Inference.Limits = []inference.LimitRule{{Project: limitedProject, RequestsPerMinute: 1}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	url, newKey, _ := serveWeft(t, func(c *config.Config) { *c = cfg })
	return url, newKey("acme", auth.RoleMember, "node-user")
}

func runOpenAIScript(t *testing.T, node, url, key string) (openaiResult, []byte) {
	t.Helper()
	script, err := filepath.Abs("openai.mjs")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	resultFile := filepath.Join(work, "result.json")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "WEFT_BASE_URL=" + url + "/v1", "WEFT_API_KEY=" + key,
		"WEFT_PROJECT=" + gatewayProject, "WEFT_MODEL=" + gatewayModel, "WEFT_BROKEN_MODEL=broken",
		"WEFT_MIDSTREAM_MODEL=midstream", "WEFT_FAILOVER_MODEL=failover", "WEFT_SLOW_MODEL=slow", "WEFT_LIMITED_PROJECT=" + limitedProject, "WEFT_RESULT_FILE=" + resultFile}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node openai.mjs: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	raw, err := os.ReadFile(resultFile)
	if err != nil {
		t.Fatalf("script wrote no result: %v\nstderr:\n%s", err, stderr.String())
	}
	var res openaiResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	return res, raw
}

func checkNodeAnswers(t *testing.T, res openaiResult, raw []byte) {
	t.Helper()
	if len(res.Models) != 5 || res.Models[0]["id"] != gatewayModel || res.Models[0]["root"] != gatewayModel || res.Models[0]["owned_by"] != "system" {
		t.Errorf("models %v", res.Models)
	}
	if c := res.Plain.Message.Content; c == nil || *c != "echo: hello from node" || res.Plain.Usage.TotalTokens != 7 {
		t.Errorf("plain answer: %s", raw)
	}
	if tc := res.Tools.Message.ToolCalls; res.Tools.Finish != "tool_calls" || len(tc) != 1 || tc[0].Function.Name != "get_weather" ||
		tc[0].Function.Arguments != `{"input":"weather in Bergen"}` {
		t.Errorf("tool call: %s", raw)
	}
	for name, a := range map[string]plainAnswer{"failover": res.Failover, "slow upstream": res.Slow} {
		if c := a.Message.Content; c == nil || !strings.HasPrefix(*c, "echo: ") || a.CallID == "" {
			t.Errorf("%s: %s", name, raw)
		}
	}
	var obj map[string]string
	if c := res.JSON.Message.Content; c == nil || json.Unmarshal([]byte(*c), &obj) != nil || obj["echo"] != "as json" {
		t.Errorf("JSON mode: %s", raw)
	}
	for name, s := range map[string]streamAnswer{"with usage": res.StreamWithUsage, "without usage": res.StreamNoUsage} {
		if s.Content != "echo: count the words" || s.Chunks < 4 {
			t.Errorf("stream %s: content %q in %d chunks", name, s.Content, s.Chunks)
		}
	}
	if u := res.StreamWithUsage.Usage; u == nil || u.TotalTokens != 7 || res.StreamNoUsage.Usage != nil {
		t.Errorf("usage seen by the client: with %v, without %v", res.StreamWithUsage.Usage, res.StreamNoUsage.Usage)
	}
}

func checkNodeErrors(t *testing.T, res openaiResult) {
	t.Helper()
	tests := []struct {
		name, kind, code, msgPart string
		status                    int
	}{
		{"unknownModel", "NotFoundError", "model_not_found", "does not exist", 404},
		{"badRequest", "BadRequestError", "", "messages", 400},
		{"upstreamError", "InternalServerError", "upstream_error", "answered 500", 502},
		{"midStream", "APIError", "", "upstream exploded", 0},
		{"wrongKey", "AuthenticationError", "invalid_api_key", "unknown or revoked", 401},
		{"rateLimited", "RateLimitError", "rate_limit_exceeded", "Rate limit reached for project " + limitedProject, 429},
	}
	if rl := res.RateLimit; rl.Limit == nil || *rl.Limit != "1" || rl.Remaining == nil || *rl.Remaining != "0" || rl.RetryAfter == nil || *rl.RetryAfter == "" {
		t.Errorf("rate limit headers seen by the client: %+v", rl)
	}
	for _, tc := range tests {
		e := res.Errors[tc.name]
		code := ""
		if e.Code != nil {
			code = *e.Code
		}
		if e.Kind != tc.kind || e.Status != tc.status || code != tc.code || !strings.Contains(e.Message, tc.msgPart) {
			t.Errorf("%s: %+v; want %s %d code %q mentioning %q", tc.name, e, tc.kind, tc.status, tc.code, tc.msgPart)
		}
	}
}

// checkNodeCall reads a call the client left, with its usage priced at
// the catalog's price.
func checkNodeCall(t *testing.T, c *client, id string) {
	t.Helper()
	var read struct {
		Call struct {
			OpName    string `json:"op_name"`
			ProjectID string `json:"project_id"`
			Summary   struct {
				Weave struct {
					Costs map[string]struct {
						PromptTokens          int64   `json:"prompt_tokens"`
						PromptTokensTotalCost float64 `json:"prompt_tokens_total_cost"`
					} `json:"costs"`
				} `json:"weave"`
			} `json:"summary"`
		} `json:"call"`
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		status, body := c.post("/call/read", map[string]any{"project_id": gatewayProject, "id": id, "include_costs": true})
		if status == http.StatusOK && json.Unmarshal(body, &read) == nil && read.Call.OpName != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("call %s not readable", id)
		}
	}
	cost := read.Call.Summary.Weave.Costs[gatewayModel]
	if read.Call.OpName != "openai.chat.completions.create" || cost.PromptTokens == 0 ||
		math.Abs(cost.PromptTokensTotalCost-float64(cost.PromptTokens)*gatewayPrice/1e6) > 1e-15 {
		t.Errorf("call %s: %+v", id, read.Call)
	}
}
