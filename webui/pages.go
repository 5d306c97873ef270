package webui

import (
	"slices"
	"strings"
)

// Pages are the UI's project pages: /{entity}/{project}/{page}[/...].
var Pages = []string{"calls", "charts", "threads", "objects", "datasets", "automations", "alerts", "training", "models", "playground", "queues", "evaluations", "monitors"}

// apiPrefixes start API paths with GET routes of three or more segments
// (/v1/preview/models, /v1/models/{id...}, /debug/pprof/...): no entity
// of these names has UI pages, so no page can shadow such a route.
var apiPrefixes = []string{"v1", "v2", "debug"}

// IsPage reports whether path is one of the UI's addresses: the root, the
// sign-in page, or a project page. Everything else stays the API's, so
// the UI never shadows an API route or its 404s and 405s.
func IsPage(path string) bool {
	if path == "/" || path == "/signin" {
		return true
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(segs) < 3 || segs[0] == "" || segs[1] == "" || slices.Contains(apiPrefixes, segs[0]) {
		return false
	}
	for _, p := range Pages {
		if segs[2] == p {
			return len(segs) == 3 || (len(segs) == 4 && segs[3] != "") || (len(segs) == 5 && p == "objects" && segs[4] != "")
		}
	}
	return false
}
