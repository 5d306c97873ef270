package catalog

import "testing"

func TestUpstreamsAreNumberedOncePerProviderAndModel(t *testing.T) {
	providers := []ProviderConfig{{Name: "a", BaseURL: "http://a/v1"}, {Name: "b", BaseURL: "http://b/v1"}}
	models := []ModelConfig{
		{ID: "one", Upstreams: []UpstreamConfig{{Provider: "a", Model: "x"}, {Provider: "b", Model: "x", Weight: 4}}},
		{ID: "two", Upstreams: []UpstreamConfig{{Provider: "a", Model: "x"}, {Provider: "a", Model: "y"}}},
		{ID: "clf", Upstreams: []UpstreamConfig{{Provider: "b"}}, Routing: Routing{Follow: &Follow{Collection: "e/p/c", Alias: "prod"}}},
		{ID: "gone", Upstreams: []UpstreamConfig{{Provider: "b"}}, Status: StatusRetired, Routing: Routing{Follow: &Follow{Collection: "e/p/c", Alias: "prod"}}},
	}
	if errs := Validate(providers, models); len(errs) > 0 {
		t.Fatal(errs)
	}
	c, err := New(providers, models, nil, WithLoRA([]UpstreamConfig{{Provider: "b"}}))
	if err != nil {
		t.Fatal(err)
	}
	one, _ := c.Lookup("one")
	two, _ := c.Lookup("two")
	if one.Upstreams[0].Index != two.Upstreams[0].Index {
		t.Error("a/x of two models has two numbers: their breaker would not be shared")
	}
	seen := map[int]bool{}
	for _, u := range c.Upstreams() {
		if seen[u.Index] {
			t.Errorf("number %d given twice", u.Index)
		}
		seen[u.Index] = true
		if got := c.Upstreams()[u.Index]; got.Provider != u.Provider || got.Model != u.Model {
			t.Errorf("Upstreams()[%d] = %s/%s, want %s/%s", u.Index, got.Provider.Name, got.Model, u.Provider.Name, u.Model)
		}
	}
	// one: a/x, b/x; two: a/y; clf and gone: b/clf, b/gone; LoRA: b/"".
	if n := len(c.Upstreams()); n != 6 {
		t.Errorf("%d distinct upstreams, want 6", n)
	}
	if one.Upstreams[1].Weight != 4 || one.Upstreams[0].Weight != 1 {
		t.Errorf("weights %d, %d; want 1 (unset) and 4", one.Upstreams[0].Weight, one.Upstreams[1].Weight)
	}
	ad, _ := c.Adapter("wandb-artifact:///e/p/m:step1", "e/p/m:step1", "one")
	if lora := c.Upstreams()[ad.Upstreams[0].Index]; lora.Provider.Name != "b" || lora.Model != "" {
		t.Errorf("an adapter is numbered as %s/%q, want its LoRA server's number", lora.Provider.Name, lora.Model)
	}
	if f := c.Following(); len(f) != 1 || f[0].ID != "clf" {
		t.Errorf("Following() = %v, want only the active clf", f)
	}
}
