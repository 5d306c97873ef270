package forwardexporter

import "context"

type keyCtx struct{}

// WithKey returns ctx carrying the API key that records consumed under it
// are forwarded with. The receivers' middleware sets it from the request.
func WithKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, keyCtx{}, key)
}

// KeyFrom returns the API key WithKey stored, or "".
func KeyFrom(ctx context.Context) string {
	k, _ := ctx.Value(keyCtx{}).(string)
	return k
}
