package inference

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestModels(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name    string
		path    string
		headers map[string]string
		status  int
		want    string
	}{
		{"list", "/v1/models", nil, 200, `{"data":[` +
			`{"id":"echo-model","object":"model","created":0,"owned_by":"system","root":"echo-model"},` +
			`{"id":"meta-llama/Llama-3.1-8B-Instruct","object":"model","created":0,"owned_by":"system","root":"meta-llama/Llama-3.1-8B-Instruct"},`},
		{"one model, id with a slash", "/v1/models/meta-llama/Llama-3.1-8B-Instruct", nil, 200,
			`{"id":"meta-llama/Llama-3.1-8B-Instruct","object":"model","created":0,"owned_by":"system","root":"meta-llama/Llama-3.1-8B-Instruct"}`},
		{"retired model", "/v1/models/old", nil, 404, `"code":"model_not_found"`},
		{"no key", "/v1/models", map[string]string{"Authorization": ""}, 401, `"code":"invalid_api_key"`},
		{"project the key may not use", "/v1/models", map[string]string{"Service-Project": "rival/x"}, 401, `"code":"invalid_api_key"`},
		{"viewer may list", "/v1/models", map[string]string{"Authorization": "Bearer " + h.viewerKey, "Service-Project": "acme/p"}, 200, `"object":"list"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := h.do(http.MethodGet, tc.path, nil, tc.headers)
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
				t.Fatalf("%d %s\nwant %d containing %s", resp.StatusCode, body, tc.status, tc.want)
			}
		})
	}
	resp := h.do(http.MethodGet, "/v1/models", nil, nil)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if strings.Contains(string(body), `"old"`) || field(t, body, "object") != "list" {
		t.Fatalf("list %s: want object list without retired models", body)
	}
	if data, _ := field(t, body, "data").([]any); len(data) != 13 {
		t.Fatalf("%d models listed, want the 13 that are not retired", len(data))
	}
}
