package app_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/inference/catalog"
	"github.com/weftdev/weft/inference/upstreamtest"
)

// TestFollowedAliasServesTheTrainedCheckpoint links the checkpoint a
// training job produced into the models registry under production, and
// chats with a catalog model following that alias: the LoRA server is
// asked for the checkpoint's adapter, as soon as the link's alias event
// is recorded (the hourly refresh never runs in the test).
func TestFollowedAliasServesTheTrainedCheckpoint(t *testing.T) {
	lora := upstreamtest.New(upstreamtest.Options{Record: true})
	t.Cleanup(lora.Close)
	e := newTrainingEnv(t, func(c *config.Config) {
		c.Inference.Providers = []catalog.ProviderConfig{{Name: "lora", BaseURL: lora.BaseURL()}}
		c.Inference.Models = []catalog.ModelConfig{{ID: "agent-production", Upstreams: []catalog.UpstreamConfig{{Provider: "lora"}},
			Routing: catalog.Routing{Follow: &catalog.Follow{Collection: "acme/wandb-registry-models/agent", Alias: "production"}}}}
		c.Inference.AliasRefresh = time.Hour
	})
	chat := func() (int, []byte, string) {
		status, header, out := e.do(http.MethodPost, "/v1/chat/completions", e.member, map[string]any{"model": "agent-production",
			"messages": []any{map[string]any{"role": "user", "content": "hi"}}})
		return status, out, header.Get("X-Weft-Call-Id")
	}
	if status, out, _ := chat(); status != http.StatusServiceUnavailable {
		t.Fatalf("before any version: %d %s, want 503", status, out)
	}
	runJobByHand(e, e.createJob(e.createModel("p", "agent")))
	e.call(http.MethodPost, "/artifacts/link", e.member, map[string]any{"project_id": "acme/p", "collection": "agent", "version": "step1",
		"registry": "models", "target_collection": "agent", "aliases": []string{"production"}}, 200, nil)
	var status int
	var out []byte
	var callID string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if status, out, callID = chat(); status == http.StatusOK {
			break
		}
	}
	reqs := lora.Requests()
	if status != http.StatusOK || len(reqs) != 1 || string(reqs[0].Body["model"]) != `"acme/p/agent:step1"` {
		t.Fatalf("after the link: %d %s; the LoRA server got %d requests", status, out, len(reqs))
	}
	var read struct {
		Call struct{ Attributes json.RawMessage } `json:"call"`
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && read.Call.Attributes == nil; time.Sleep(20 * time.Millisecond) {
		if s, _, body := e.do(http.MethodPost, "/call/read", e.member, map[string]any{"project_id": "acme/inference", "id": callID}); s == http.StatusOK {
			_ = json.Unmarshal(body, &read)
		}
	}
	var attrs struct {
		Inference struct {
			Artifact struct {
				Collection, Alias, Version string
				ServedAs                   string `json:"served_as"`
			}
		}
	}
	_ = json.Unmarshal(read.Call.Attributes, &attrs)
	if a := attrs.Inference.Artifact; a.Collection != "acme/wandb-registry-models/agent" || a.Alias != "production" || a.Version != "v0" || a.ServedAs != "acme/p/agent:step1" {
		t.Fatalf("the call's attributes: %s", read.Call.Attributes)
	}
}
