package inference

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/weftdev/weft/inference/catalog"
)

// imageUpstream is a fake OpenAI images server: it answers
// /v1/images/generations with one base64 image per n, refuses the model
// "refuse-images" with a 400 and fails "broken-images" with a 500.
type imageUpstream struct {
	*httptest.Server
	mu       sync.Mutex
	requests []map[string]any
	paths    []string
}

func newImageUpstream(t *testing.T) *imageUpstream {
	u := &imageUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		u.mu.Lock()
		u.requests, u.paths = append(u.requests, body), append(u.paths, r.URL.Path)
		u.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+upstreamKey {
			http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
			return
		}
		switch body["model"] {
		case "refuse-images":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"message":"prompt rejected by the safety system"}}`)
			return
		case "broken-images":
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		n, _ := body["n"].(float64)
		data := make([]map[string]string, int(n))
		for i := range data {
			data[i] = map[string]string{"b64_json": "aW1hZ2U="}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"created": 1, "data": data,
			"usage": map[string]int{"input_tokens": 12, "output_tokens": 4160, "total_tokens": 4172}})
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *imageUpstream) last() (string, map[string]any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.requests) == 0 {
		return "", nil
	}
	return u.paths[len(u.paths)-1], u.requests[len(u.requests)-1]
}

func imageModels(url string) func(*Config) {
	return func(cfg *Config) {
		cfg.Providers = append(cfg.Providers, catalog.ProviderConfig{Name: "images", BaseURL: url + "/v1", APIKeyEnv: "UP_KEY"})
		for _, m := range []catalog.ModelConfig{
			model("painter", "", on("images", "gpt-image-1")),
			model("refusing-painter", "", on("images", "refuse-images")),
			model("failover-painter", "", on("images", "broken-images"), on("images", "dall-e-3")),
		} {
			m.Images = true
			cfg.Models = append(cfg.Models, m)
		}
	}
}

func imageBody(project, model string, extra map[string]any) map[string]any {
	b := map[string]any{"project_id": project, "inputs": map[string]any{"model": model, "prompt": "a lighthouse at dusk", "n": 2}}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func TestImageCreate(t *testing.T) {
	up := newImageUpstream(t)
	h := newHarness(t, imageModels(up.URL))
	tests := []struct {
		name        string
		body        any
		status      int
		contains    string
		images      int  // images in the response
		tracked     bool // a call id answered and traced
		exception   bool
		upstreamN   float64
		upstreamMod string
	}{
		{"generated", imageBody("acme/play", "painter", nil), 200, `"b64_json":"aW1hZ2U="`, 2, true, false, 2, "gpt-image-1"},
		{"untracked", imageBody("acme/play", "painter", map[string]any{"track_llm_call": false}), 200, "b64_json", 2, false, false, 2, "gpt-image-1"},
		// The first upstream fails; the second makes one image, as DALL·E 3 does.
		{"failover", imageBody("acme/play", "failover-painter", nil), 200, "b64_json", 1, true, false, 1, "dall-e-3"},
		{"refused upstream", imageBody("acme/play", "refusing-painter", nil), 200, "safety system", 0, true, true, 2, "refuse-images"},
		{"chat model", imageBody("acme/play", "echo-model", nil), 400, "cannot generate images", 0, false, false, 0, ""},
		{"unknown model", imageBody("acme/play", "nope", nil), 400, "unknown model", 0, false, false, 0, ""},
		{"retired model", imageBody("acme/play", "old", nil), 400, "unknown model", 0, false, false, 0, ""},
		{"no prompt", map[string]any{"project_id": "acme/play", "inputs": map[string]any{"model": "painter"}}, 400, "inputs.prompt", 0, false, false, 0, ""},
		{"too many", map[string]any{"project_id": "acme/play", "inputs": map[string]any{"model": "painter", "prompt": "x", "n": 11}}, 400, "inputs.n", 0, false, false, 0, ""},
		{"other team's project", imageBody("rival/play", "painter", nil), 403, "not a member", 0, false, false, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(h.calls.all())
			resp := h.do(http.MethodPost, "/image/create", tc.body, nil)
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.contains) {
				t.Fatalf("%d %s; want %d with %q", resp.StatusCode, body, tc.status, tc.contains)
			}
			if tc.status != http.StatusOK {
				if field(t, body, "reason") == nil {
					t.Errorf("error not in the trace API's shape: %s", body)
				}
				return
			}
			if data, _ := field(t, body, "response", "data").([]any); len(data) != tc.images {
				t.Errorf("%d images in %s, want %d", len(data), body, tc.images)
			}
			path, sent := up.last()
			if path != "/v1/images/generations" || sent["model"] != tc.upstreamMod || sent["n"] != tc.upstreamN ||
				sent["prompt"] != "a lighthouse at dusk" || sent["size"] != defaultImageSize {
				t.Errorf("upstream got %s %v", path, sent)
			}
			id, _ := field(t, body, "weave_call_id").(string)
			if (id != "") != tc.tracked {
				t.Fatalf("weave_call_id %q, tracked %v", id, tc.tracked)
			}
			if !tc.tracked {
				if len(h.calls.all()) != before {
					t.Error("track_llm_call false, yet traced")
				}
				return
			}
			call := h.waitCall(id)
			if call.OpName != opImageGeneration || call.ProjectID != "acme/play" || (call.Exception != nil) != tc.exception {
				t.Fatalf("call op %s project %s exception %v", call.OpName, call.ProjectID, call.Exception)
			}
			model := field(t, call.Inputs, "model")
			if field(t, call.Inputs, "prompt") != "a lighthouse at dusk" || field(t, call.Inputs, "n") != 2.0 || model == nil {
				t.Errorf("traced inputs %s", call.Inputs)
			}
			if !tc.exception {
				if field(t, call.Summary, "usage", model.(string), "input_tokens") != 12.0 || field(t, body, "response", "usage", "prompt_tokens") != 12.0 ||
					field(t, body, "response", "model") != model {
					t.Errorf("summary %s, response usage %v", call.Summary, field(t, body, "response", "usage"))
				}
			}
		})
	}
}

func TestImageCreateNotConfigured(t *testing.T) {
	h := newHarness(t)
	resp := h.do(http.MethodPost, "/image/create", imageBody("acme/play", "echo-model", nil), nil)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNotImplemented || !strings.Contains(string(body), "images: true") {
		t.Fatalf("%d %s; want 501 naming the setting", resp.StatusCode, body)
	}
}
