package inference

import (
	"errors"
	"net/http"
	"strings"

	"github.com/weftdev/weft/auth"
)

// The headers that name the project usage is charged to: the seed's, and
// the one openai clients send for their project option.
const (
	serviceProjectHeader = "Service-Project"
	openAIProjectHeader  = "OpenAI-Project"
	// defaultProject is used, under the key's entity, without a header.
	defaultProject = "inference"
)

// authenticate verifies the request's Weft key. Every /v1 route needs one.
func (g *Gateway) authenticate(r *http.Request) (auth.Principal, *apiError) {
	key, ok := auth.KeyFromHeader(r.Header)
	if !ok {
		return auth.Principal{}, authFailed("no API key; send 'Authorization: Bearer KEY' with a Weft API key")
	}
	p, err := g.keys.Verify(r.Context(), key)
	switch {
	case errors.Is(err, auth.ErrUnauthenticated):
		return p, authFailed("the API key is unknown or revoked")
	case err != nil:
		g.logger.Warn("inference: verifying an API key failed (the key store is unavailable); the request got 503 and the client retries; if it repeats, check the store", "err", err)
		return p, unavailable(g.cfg.RetryAfter, "API keys cannot be checked right now; retry later")
	}
	return p, nil
}

// project resolves the project a request is charged to and checks that
// the key may use it. A project the key may not use is refused with 401,
// as the reference service does.
func (g *Gateway) project(r *http.Request, p auth.Principal, need auth.Access) (string, *apiError) {
	header, project := serviceProjectHeader, strings.TrimSpace(r.Header.Get(serviceProjectHeader))
	if project == "" {
		header, project = openAIProjectHeader, strings.TrimSpace(r.Header.Get(openAIProjectHeader))
	}
	if project == "" {
		if p.Entity == auth.AllEntities {
			return "", invalidRequest("", "%s: this key belongs to no single team, so name the project: send '%s: team/project'",
				serviceProjectHeader, serviceProjectHeader)
		}
		header, project = "(default)", p.Entity+"/"+defaultProject
	}
	if _, _, err := auth.SplitProjectID(project); err != nil {
		return "", invalidRequest("", "%s: %q must have the form team/project", header, project)
	}
	err := p.Authorize(project, need)
	switch {
	case errors.Is(err, auth.ErrForbidden):
		return "", authFailed("this API key may not use project %s (%v)", project, err)
	case err != nil:
		return "", invalidRequest("", "%s: %v", header, err)
	}
	return project, nil
}
