package webui

import "strings"

// Pages are the UI's project pages: /{entity}/{project}/{page}[/...].
var Pages = []string{"calls", "charts", "threads", "objects", "datasets", "automations"}

// IsPage reports whether path is one of the UI's addresses: the root, the
// sign-in page, or a project page. Everything else stays the API's, so
// the UI never shadows an API route or its 404s and 405s.
func IsPage(path string) bool {
	if path == "/" || path == "/signin" {
		return true
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(segs) < 3 || segs[0] == "" || segs[1] == "" {
		return false
	}
	for _, p := range Pages {
		if segs[2] == p {
			return len(segs) == 3 || (len(segs) == 4 && segs[3] != "") || (len(segs) == 5 && p == "objects" && segs[4] != "")
		}
	}
	return false
}
