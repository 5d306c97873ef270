package catalog

import "fmt"

// Option adds to a catalog what New's arguments do not hold.
type Option func(c *Catalog, providers map[string]*Provider) error

// WithLoRA makes the upstreams that serve LoRA adapters by name (an
// OpenAI-compatible server such as vLLM with --enable-lora): a chat
// request naming a trained checkpoint goes to them, tried in order, with
// the adapter's name as the model.
func WithLoRA(upstreams []UpstreamConfig) Option {
	return func(c *Catalog, providers map[string]*Provider) error {
		for j, u := range upstreams {
			p, ok := providers[u.Provider]
			if !ok {
				return fmt.Errorf("inference.lora.upstreams[%d].provider: %q is not a name in inference.providers", j, u.Provider)
			}
			c.lora = append(c.lora, Upstream{Provider: p, Model: u.Model, Weight: max(u.Weight, 1)})
		}
		return nil
	}
}

// Adapter is the catalog entry of a LoRA adapter, served as name by the
// LoRA upstreams and priced like its base model (when the catalog lists
// it); id is what the client sent. false: no LoRA upstream is
// configured.
func (c *Catalog) Adapter(id, name, baseModel string) (*Model, bool) {
	if len(c.lora) == 0 {
		return nil, false
	}
	m := &Model{ID: id, Status: StatusActive, OwnedBy: "system"}
	if base, ok := c.models[baseModel]; ok {
		m.Prices = base.Prices
	}
	for _, u := range c.lora {
		m.Upstreams = append(m.Upstreams, Upstream{Provider: u.Provider, Model: name, Weight: u.Weight, Index: u.Index})
	}
	return m, true
}
