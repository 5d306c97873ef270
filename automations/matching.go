package automations

import (
	"regexp"

	"github.com/weftdev/weft/storage"
)

// matchEvent reports whether automation a fires for event e, and the
// alias it fired for: the event's alias for ADD_ARTIFACT_ALIAS, the
// first alias the regex matches for a link ("" when a link has no alias
// and needs none). An alias regex matches anywhere in the alias, as a
// MongoDB $regex filter does.
func matchEvent(a storage.Automation, e storage.ArtifactEvent) (string, bool) {
	if !a.Enabled || a.ProjectID != e.ProjectID || a.Event != e.Type {
		return "", false
	}
	switch a.Scope {
	case ScopeProject:
		if a.CollectionFilter != "" && a.CollectionFilter != e.Collection {
			return "", false
		}
	case ScopeCollection:
		if a.Collection != e.Collection {
			return "", false
		}
	}
	if a.AliasRegex == "" {
		return firstAlias(e.Aliases), true
	}
	re, err := regexp.Compile(a.AliasRegex)
	if err != nil {
		return "", false // validated at save; an unreadable one fires nothing
	}
	for _, alias := range e.Aliases {
		if re.MatchString(alias) {
			return alias, true
		}
	}
	return "", false
}

func firstAlias(aliases []string) string {
	if len(aliases) == 0 {
		return ""
	}
	return aliases[0]
}
