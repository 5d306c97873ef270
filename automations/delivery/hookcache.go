package delivery

import (
	"context"
	"sync"
	"time"

	"github.com/weftdev/weft/automations/secretbox"
	"github.com/weftdev/weft/storage"
)

// hookTTL is how long a webhook and its opened credentials are reused: a
// burst of deliveries to one webhook reads them once, and a change (a
// rotated secret, a new URL, a disabled webhook) is seen within it.
const hookTTL = time.Second

// maxCachedHooks bounds the cache; beyond it, it starts over.
const maxCachedHooks = 1024

// hookCache keeps recently read webhooks with their credentials.
type hookCache struct {
	mu      sync.Mutex
	entries map[string]cachedHook
}

type cachedHook struct {
	hook          storage.Webhook
	token, secret string
	err           error
	read          time.Time
}

func hookKey(entity, id string) string { return entity + "\x00" + id }

// get returns the webhook and its credentials, from the cache when read
// within hookTTL of now. Errors are cached too, so a missing webhook is
// not read again for every delivery of a burst.
func (c *hookCache) get(ctx context.Context, store Store, box *secretbox.Box, entity, id string, now time.Time) cachedHook {
	key := hookKey(entity, id)
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && now.Sub(e.read) < hookTTL && now.Sub(e.read) >= 0 {
		return e
	}
	e = cachedHook{read: now}
	e.hook, e.err = store.GetWebhook(ctx, entity, id)
	if e.err == nil {
		e.token, e.secret, e.err = WebhookCredentials(ctx, store, box, e.hook)
	}
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= maxCachedHooks {
		c.entries = map[string]cachedHook{}
	}
	c.entries[key] = e
	c.mu.Unlock()
	return e
}

// setHealth records health this worker wrote, so the next attempts judge
// the webhook by it rather than by the copy read before.
func (c *hookCache) setHealth(entity, id string, h storage.WebhookHealth) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[hookKey(entity, id)]; ok {
		e.hook.WebhookHealth = h
		c.entries[hookKey(entity, id)] = e
	}
}
