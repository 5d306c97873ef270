package auth

import (
	"encoding/base64"
	"net/http"
	"strings"
)

// KeyFromHeader extracts an API key from request headers, in the three
// forms clients send: "Authorization: Bearer K", "Authorization: Basic
// base64(api:K)" (any user name is accepted) and "wandb-api-key: K".
// The second result is false when none is present or it is malformed.
func KeyFromHeader(h http.Header) (string, bool) {
	if k := strings.TrimSpace(h.Get("Wandb-Api-Key")); k != "" {
		return k, true
	}
	authz := strings.TrimSpace(h.Get("Authorization"))
	scheme, rest, ok := strings.Cut(authz, " ")
	if !ok {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	switch strings.ToLower(scheme) {
	case "bearer":
		return rest, rest != ""
	case "basic":
		raw, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			return "", false
		}
		_, key, ok := strings.Cut(string(raw), ":")
		return key, ok && key != ""
	}
	return "", false
}
