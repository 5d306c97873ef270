package e2e

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// TestInferenceRateLimitWithOpenAIGoSDK: the official Go client reads the
// x-ratelimit headers of answers within the limit, and sees the request
// over it as a 429 *openai.Error with the OpenAI code and type and
// Retry-After (retries off: the client retries 429 by default).
func TestInferenceRateLimitWithOpenAIGoSDK(t *testing.T) {
	g := startGateway(t)
	ctx := context.Background()
	c := g.client(0, option.WithHeader("Service-Project", "acme/ratelimited"))
	for i := range 2 {
		var resp *http.Response
		if _, err := c.Chat.Completions.New(ctx, userMessage(llamaID, "hi"), option.WithResponseInto(&resp)); err != nil {
			t.Fatalf("request %d within the limit: %v", i, err)
		}
		h := resp.Header
		if h.Get("x-ratelimit-limit-requests") != "2" || h.Get("x-ratelimit-remaining-requests") != strconv.Itoa(1-i) ||
			h.Get("x-ratelimit-limit-tokens") != "100000" || h.Get("x-ratelimit-remaining-tokens") == "" ||
			!strings.HasSuffix(h.Get("x-ratelimit-reset-requests"), "s") {
			t.Fatalf("request %d: x-ratelimit headers %v", i, h)
		}
	}
	_, err := c.Chat.Completions.New(ctx, userMessage(llamaID, "hi"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("over the limit: %v, want an *openai.Error", err)
	}
	if apiErr.StatusCode != http.StatusTooManyRequests || apiErr.Code != "rate_limit_exceeded" || apiErr.Type != "requests" ||
		!strings.Contains(apiErr.Message, "Rate limit reached for project acme/ratelimited on requests per min (RPM): Limit 2") {
		t.Fatalf("over the limit: %d code %q type %q: %s", apiErr.StatusCode, apiErr.Code, apiErr.Type, apiErr.Message)
	}
	h := apiErr.Response.Header
	if retry, err := strconv.Atoi(h.Get("Retry-After")); err != nil || retry < 1 || retry > 60 || h.Get("x-ratelimit-remaining-requests") != "0" {
		t.Fatalf("over the limit: Retry-After %q remaining %q", h.Get("Retry-After"), h.Get("x-ratelimit-remaining-requests"))
	}
	// Another project of the same key is not limited.
	if _, err := g.client(0).Chat.Completions.New(ctx, userMessage(llamaID, "hi")); err != nil {
		t.Fatalf("another project: %v", err)
	}
}
