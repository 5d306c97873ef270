package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/weftdev/weft/inference/upstreamtest"
)

// llamaID is the catalog model most cases use; its price is per million.
const (
	llamaID    = "meta-llama/Llama-3.1-8B-Instruct"
	llamaPrice = 0.22
	sdkProject = "acme/sdk"
)

// gatewayConfig is a weft config whose providers are the fake upstream
// (twice: once with a short timeout) and an address nothing listens on.
func gatewayConfig(t *testing.T, upstream string) string {
	t.Helper()
	cfg := fmt.Sprintf(`
inference:
  retry_after: 1s
  stream_idle_timeout: 2s
  project_concurrency: {acme/limited: 1}
  limits: [{project: acme/ratelimited, requests_per_minute: 2, tokens_per_minute: 100000}]
  providers:
    - {name: local, base_url: %[1]q, api_key_env: WEFT_E2E_LLM_KEY}
    - {name: impatient, base_url: %[1]q, api_key_env: WEFT_E2E_LLM_KEY, timeout: 100ms}
    - {name: down, base_url: %[2]q}
  models:
    - id: %[3]s
      upstreams: [{provider: local, model: llama-3.1-8b}]
      prices: {input_per_million: %[4]g, output_per_million: %[4]g}
    - {id: gateway/failover, upstreams: [{provider: down, model: echo}, {provider: local, model: fail-500}, {provider: local, model: echo-spare}]}
    - {id: gateway/broken, upstreams: [{provider: local, model: fail-502}]}
    - {id: gateway/slow, upstreams: [{provider: local, model: slow}]}
    - {id: gateway/too-slow, upstreams: [{provider: impatient, model: slow}]}
    - {id: gateway/midstream, upstreams: [{provider: local, model: midstream-error}]}
    - {id: gateway/hold, upstreams: [{provider: local, model: hold}]}
    - {id: gateway/retired, status: retired, upstreams: [{provider: local}]}
`, upstream, upstreamtest.DeadURL(t), llamaID, llamaPrice)
	path := filepath.Join(t.TempDir(), "weft.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// gateway is a running weft with the gateway in front of a fake upstream.
type gateway struct {
	weft *process
	up   *upstreamtest.Server
	key  string // a member key of acme
}

func startGateway(t *testing.T) *gateway {
	t.Helper()
	return startGatewayWith(t, upstreamtest.Options{Key: "sk-e2e-upstream", Delay: 300 * time.Millisecond, HoldInterval: 50 * time.Millisecond},
		gatewayConfig)
}

// startGatewayWith runs weft with the config config writes for a fake
// upstream of opts, and a member key of acme.
func startGatewayWith(t *testing.T, opts upstreamtest.Options, config func(t *testing.T, upstream string) string) *gateway {
	t.Helper()
	up := upstreamtest.New(opts)
	t.Cleanup(up.Close)
	t.Setenv("WEFT_E2E_LLM_KEY", "sk-e2e-upstream")
	dir := t.TempDir()
	p := startWeft(t, dir, "--config", config(t, up.BaseURL()))
	out, err := exec.Command(binary(t), "keys", "create", "--data-dir", dir, "--entity", "acme").Output()
	if err != nil {
		t.Fatalf("keys create: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	g := &gateway{weft: p, up: up, key: lines[len(lines)-1]}
	eventually(t, func() bool {
		_, err := g.client(0).Models.List(context.Background())
		return err == nil
	})
	return g
}

// client is an openai-go client pointed at weft's /v1 with the member key.
func (g *gateway) client(retries int, opts ...option.RequestOption) *openai.Client {
	c := openai.NewClient(append([]option.RequestOption{option.WithBaseURL(g.weft.URL + "/v1"), option.WithAPIKey(g.key),
		option.WithMaxRetries(retries), option.WithHeader("Service-Project", sdkProject)}, opts...)...)
	return &c
}

func userMessage(model, text string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}}
}

// TestInferenceWithOpenAIGoSDK drives the gateway with the official Go
// SDK and reads the calls it left back through the calls API.
func TestInferenceWithOpenAIGoSDK(t *testing.T) {
	g := startGateway(t)
	ctx := context.Background()
	c := g.client(2)
	var ids []string
	t.Run("models", func(t *testing.T) {
		page, err := c.Models.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range page.Data {
			got = append(got, m.ID+"/"+m.OwnedBy)
		}
		if len(got) != 7 || got[0] != llamaID+"/system" || strings.Contains(strings.Join(got, ","), "retired") {
			t.Fatalf("models %v", got)
		}
	})
	t.Run("plain", func(t *testing.T) { ids = append(ids, checkPlain(t, c)) })
	t.Run("stream", func(t *testing.T) { ids = append(ids, checkStream(t, c, false), checkStream(t, c, true)) })
	t.Run("tools", func(t *testing.T) { ids = append(ids, checkTools(t, c)) })
	t.Run("json mode", func(t *testing.T) { ids = append(ids, checkJSONMode(t, c)) })
	t.Run("slow upstream within the timeout", func(t *testing.T) {
		if _, err := c.Chat.Completions.New(ctx, userMessage("gateway/slow", "wait")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("failover", func(t *testing.T) {
		resp, err := c.Chat.Completions.New(ctx, userMessage("gateway/failover", "anyone there"))
		if err != nil || resp.Model != "echo-spare" || resp.Choices[0].Message.Content != "echo: anyone there" {
			t.Fatalf("failover answer %+v, %v", resp, err)
		}
	})
	t.Run("errors", func(t *testing.T) { checkSDKErrors(t, g) })
	t.Run("calls with usage and costs", func(t *testing.T) { checkCallsAndCosts(t, g, ids) })
}

func checkPlain(t *testing.T, c *openai.Client) string {
	t.Helper()
	var httpResp *http.Response
	resp, err := c.Chat.Completions.New(context.Background(), userMessage(llamaID, "how are you"), option.WithResponseInto(&httpResp))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "echo: how are you" || resp.Usage.PromptTokens != 3 || resp.Usage.CompletionTokens != 4 {
		t.Fatalf("answer %+v", resp)
	}
	return httpResp.Header.Get("X-Weft-Call-Id")
}

func checkStream(t *testing.T, c *openai.Client, includeUsage bool) string {
	t.Helper()
	params := userMessage(llamaID, "stream this please")
	if includeUsage {
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	}
	var httpResp *http.Response
	stream := c.Chat.Completions.NewStreaming(context.Background(), params, option.WithResponseInto(&httpResp))
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if got := acc.Choices[0].Message.Content; got != "echo: stream this please" {
		t.Fatalf("streamed content %q", got)
	}
	if got := acc.Usage.TotalTokens; (got == 7) != includeUsage {
		t.Fatalf("include_usage=%v: the client saw usage total %d", includeUsage, got)
	}
	return httpResp.Header.Get("X-Weft-Call-Id")
}

func checkTools(t *testing.T, c *openai.Client) string {
	t.Helper()
	params := userMessage(llamaID, "weather in Oslo")
	params.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"input": map[string]any{"type": "string"}}}})}
	var httpResp *http.Response
	resp, err := c.Chat.Completions.New(context.Background(), params, option.WithResponseInto(&httpResp))
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Choices[0].Message.ToolCalls
	if resp.Choices[0].FinishReason != "tool_calls" || len(calls) != 1 || calls[0].Function.Name != "get_weather" ||
		calls[0].Function.Arguments != `{"input":"weather in Oslo"}` {
		t.Fatalf("tool call %+v", resp.Choices[0])
	}
	return httpResp.Header.Get("X-Weft-Call-Id")
}

func checkJSONMode(t *testing.T, c *openai.Client) string {
	t.Helper()
	params := userMessage(llamaID, "as json")
	params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	var httpResp *http.Response
	resp, err := c.Chat.Completions.New(context.Background(), params, option.WithResponseInto(&httpResp))
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]string
	if err := json.Unmarshal([]byte(resp.Choices[0].Message.Content), &obj); err != nil || obj["echo"] != "as json" {
		t.Fatalf("JSON mode content %q: %v", resp.Choices[0].Message.Content, err)
	}
	return httpResp.Header.Get("X-Weft-Call-Id")
}
