package inference

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
)

// limitedHarness is a harness whose configuration sets limits.
func limitedHarness(t *testing.T, limits ...LimitRule) *harness {
	return newHarness(t, func(c *Config) { c.Limits = limits })
}

// TestRateLimitRequestsPerMinute: a project's requests per minute are
// admitted with the x-ratelimit headers counting down, the one over is
// refused 429 in the OpenAI shape with Retry-After and the headers, is
// not traced, and the project is served again in the next window. Both
// the /v1 and the trace API's completions count.
func TestRateLimitRequestsPerMinute(t *testing.T) {
	h := limitedHarness(t, LimitRule{Project: "acme/app", RequestsPerMinute: 3})
	project := map[string]string{"Service-Project": "acme/app"}
	for i := range 2 {
		status, header, out := h.chat(msg("echo-model", "hi", nil), project)
		if status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, status, out)
		}
		if got := header.Get("x-ratelimit-remaining-requests"); got != strconv.Itoa(2-i) {
			t.Fatalf("request %d: x-ratelimit-remaining-requests %q, want %d", i, got, 2-i)
		}
		if header.Get("x-ratelimit-limit-requests") != "3" || header.Get("x-ratelimit-reset-requests") == "" {
			t.Fatalf("request %d: limit %q reset %q", i, header.Get("x-ratelimit-limit-requests"), header.Get("x-ratelimit-reset-requests"))
		}
		if header.Get("x-ratelimit-limit-tokens") != "" {
			t.Fatal("tokens headers sent for a limit without tokens_per_minute")
		}
	}
	status, out := h.weave("/completions/create", map[string]any{"project_id": "acme/app", "inputs": msg("echo-model", "hi", nil)})
	if status != http.StatusOK {
		t.Fatalf("/completions/create within the limit: %d %s", status, out)
	}
	traced := len(h.calls.all())

	status, header, out := h.chat(msg("echo-model", "hi", nil), project)
	if status != http.StatusTooManyRequests {
		t.Fatalf("over the limit: %d %s", status, out)
	}
	if field(t, out, "error", "type") != "requests" || field(t, out, "error", "code") != "rate_limit_exceeded" ||
		!strings.Contains(field(t, out, "error", "message").(string), "Rate limit reached for project acme/app on requests per min (RPM): Limit 3, Used 3, Requested 1") {
		t.Fatalf("429 body: %s", out)
	}
	retry, err := strconv.Atoi(header.Get("Retry-After"))
	if err != nil || retry < 1 || retry > 60 {
		t.Fatalf("Retry-After %q, want the seconds until the window ends", header.Get("Retry-After"))
	}
	if header.Get("x-ratelimit-remaining-requests") != "0" || header.Get("x-should-retry") != "true" {
		t.Fatalf("429 headers: remaining %q should-retry %q", header.Get("x-ratelimit-remaining-requests"), header.Get("x-should-retry"))
	}
	status, out = h.weave("/completions/create", map[string]any{"project_id": "acme/app", "inputs": msg("echo-model", "hi", nil)})
	if status != http.StatusTooManyRequests || !strings.Contains(string(out), "Rate limit reached") {
		t.Fatalf("/completions/create over the limit: %d %s", status, out)
	}
	time.Sleep(50 * time.Millisecond)
	if n := len(h.calls.all()); n != traced {
		t.Fatalf("refused requests were traced: %d calls, want %d", n, traced)
	}
	if status, _, out := h.chat(msg("echo-model", "hi", nil), map[string]string{"Service-Project": "acme/other"}); status != http.StatusOK {
		t.Fatalf("another project was limited too: %d %s", status, out)
	}

	h.clock.toNextWindow()
	status, header, out = h.chat(msg("echo-model", "hi", nil), project)
	if status != http.StatusOK || header.Get("x-ratelimit-remaining-requests") != "2" {
		t.Fatalf("in the next window: %d remaining %q %s", status, header.Get("x-ratelimit-remaining-requests"), out)
	}
}

// TestRateLimitTokensPerMinute: the estimate (prompt plus max_tokens) is
// counted at admission and corrected with the recorded usage after the
// answer; a request larger than the limit is refused without retry
// advice.
func TestRateLimitTokensPerMinute(t *testing.T) {
	h := limitedHarness(t, LimitRule{Project: "acme/app", TokensPerMinute: 500})
	project := map[string]string{"Service-Project": "acme/app"}
	body := msg("echo-model", "hi", map[string]any{"max_tokens": 200})
	fields, _ := decodeObject(mustJSON(body))
	estimate := estimateTokens(fields)

	status, header, out := h.chat(body, project)
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, out)
	}
	if got := header.Get("x-ratelimit-remaining-tokens"); got != strconv.FormatInt(500-estimate, 10) {
		t.Fatalf("x-ratelimit-remaining-tokens %q, want %d (the estimate counted)", got, 500-estimate)
	}
	used := int64(field(t, out, "usage", "total_tokens").(float64))
	// The next request sees the first corrected to its usage.
	status, header, out = h.chat(body, project)
	if want := strconv.FormatInt(500-used-estimate, 10); status != http.StatusOK || header.Get("x-ratelimit-remaining-tokens") != want {
		t.Fatalf("second request: %d remaining %q, want %s (the first corrected to %d tokens): %s", status,
			header.Get("x-ratelimit-remaining-tokens"), want, used, out)
	}
	// 2*used tokens are counted now; this one's estimate fits the limit but not what is left.
	status, header, out = h.chat(msg("echo-model", "hi", map[string]any{"max_tokens": 490}), project)
	if status != http.StatusTooManyRequests || field(t, out, "error", "type") != "tokens" || header.Get("Retry-After") == "" ||
		header.Get("x-ratelimit-remaining-tokens") != strconv.FormatInt(500-2*used, 10) {
		t.Fatalf("over the tokens: %d %s", status, out)
	}
	status, header, out = h.chat(msg("echo-model", "hi", map[string]any{"max_tokens": 1000}), project)
	if status != http.StatusTooManyRequests || !strings.Contains(string(out), "Request too large for project acme/app on tokens per min (TPM): Limit 500") ||
		header.Get("x-should-retry") != "false" || header.Get("Retry-After") != "" {
		t.Fatalf("larger than the limit: %d should-retry %q %s", status, header.Get("x-should-retry"), out)
	}
}

// TestRateLimitPerKey: a limit for every key counts each key alone, and
// a key's own limit overrides it.
func TestRateLimitPerKey(t *testing.T) {
	h := limitedHarness(t, LimitRule{Key: "*", RequestsPerMinute: 1})
	other := h.newKey(h.keys, "acme", auth.RoleMember)
	if status, _, out := h.chat(msg("echo-model", "hi", nil), nil); status != http.StatusOK {
		t.Fatalf("%d %s", status, out)
	}
	status, _, out := h.chat(msg("echo-model", "hi", nil), map[string]string{"Service-Project": "acme/elsewhere"})
	if status != http.StatusTooManyRequests || !strings.Contains(string(out), "Rate limit reached for API key ") {
		t.Fatalf("the key's second request, in another project: %d %s", status, out)
	}
	if status, _, out := h.chat(msg("echo-model", "hi", nil), map[string]string{"Authorization": "Bearer " + other}); status != http.StatusOK {
		t.Fatalf("another key: %d %s", status, out)
	}
}

// weave posts a trace API request with the member key.
func (h *harness) weave(path string, body any) (int, []byte) {
	h.t.Helper()
	resp := h.do(http.MethodPost, path, body, nil)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// TestRateLimitStreams: a stream's headers carry the limits, and its
// tokens are corrected with the usage captured from the stream, even
// when the client did not ask for it.
func TestRateLimitStreams(t *testing.T) {
	h := limitedHarness(t, LimitRule{Project: "acme/app", RequestsPerMinute: 10, TokensPerMinute: 1000})
	project := map[string]string{"Service-Project": "acme/app"}
	body := msg("echo-model", "count the words", map[string]any{"stream": true, "max_tokens": 300})
	fields, _ := decodeObject(mustJSON(body))
	estimate := estimateTokens(fields)
	resp := h.do(http.MethodPost, "/v1/chat/completions", body, project)
	data := sseData(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(data) < 2 {
		t.Fatalf("stream: %d %v", resp.StatusCode, data)
	}
	if got := resp.Header.Get("x-ratelimit-remaining-tokens"); got != strconv.FormatInt(1000-estimate, 10) ||
		resp.Header.Get("x-ratelimit-remaining-requests") != "9" {
		t.Fatalf("stream headers: tokens %q requests %q, want %d and 9", got, resp.Header.Get("x-ratelimit-remaining-requests"), 1000-estimate)
	}
	// "count the words": 3 prompt words, "echo: count the words" 4 answer words.
	const used = 3 + 4
	waitFor(t, func() bool { return h.gw.rates.counter(false, "acme/app").lockedUsed().tokens == used },
		"the stream's tokens corrected to its usage")
	_, header, _ := h.chat(msg("echo-model", "hi", nil), project)
	if want := 1000 - used - estimateTokens(mustFields(msg("echo-model", "hi", nil))); header.Get("x-ratelimit-remaining-tokens") != strconv.FormatInt(want, 10) {
		t.Fatalf("after the stream: %q tokens remaining, want %d", header.Get("x-ratelimit-remaining-tokens"), want)
	}
}

// lockedUsed is used, for tests that read a counter in use.
func (c *windowCounter) lockedUsed() usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used()
}

func mustFields(body any) map[string]json.RawMessage {
	fields, _ := decodeObject(mustJSON(body))
	return fields
}

// TestRateLimitImages: image requests count against the project's
// requests per minute like chat requests, and their usage against its
// tokens.
func TestRateLimitImages(t *testing.T) {
	up := newImageUpstream(t)
	h := newHarness(t, imageModels(up.URL), func(c *Config) {
		c.Limits = []LimitRule{{Project: "acme/play", RequestsPerMinute: 1, TokensPerMinute: 1 << 20}}
	})
	status, out := h.weave("/image/create", imageBody("acme/play", "painter", nil))
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, out)
	}
	waitFor(t, func() bool { return h.gw.rates.counter(false, "acme/play").lockedUsed().tokens == 4172 },
		"the image's usage counted")
	status, out = h.weave("/image/create", imageBody("acme/play", "painter", nil))
	if status != http.StatusTooManyRequests || !strings.Contains(string(out), "Rate limit reached for project acme/play") {
		t.Fatalf("second image in the minute: %d %s", status, out)
	}
}
