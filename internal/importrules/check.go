package importrules

import (
	"slices"
	"strings"
)

// Package is one node of the import graph.
type Package struct {
	ImportPath string
	Imports    []string
}

// Violation is a forbidden dependency: Chain runs from the package that
// breaks the rule to the forbidden one, import by import.
type Violation struct {
	Chain []string
	Why   string
}

func (v Violation) String() string {
	return strings.Join(v.Chain, " -> ") + ": " + v.Why
}

// Check applies rules to every package of module in graph (which holds the
// module's packages and everything they import).
func Check(module string, graph []Package, rules []Rule) []Violation {
	imports := make(map[string][]string, len(graph))
	for _, p := range graph {
		imports[p.ImportPath] = p.Imports
	}
	var out []Violation
	for _, p := range graph {
		rel, ok := relative(module, p.ImportPath)
		if !ok {
			continue
		}
		for _, r := range rules {
			if matchesAny(r.From, rel, false) && !matchesAny(r.Except, rel, false) {
				out = append(out, breaches(module, p.ImportPath, imports, r)...)
			}
		}
	}
	return out
}

// breaches walks everything from depends on, breadth first, and reports
// each package a rule forbids with the shortest chain that reaches it.
func breaches(module, from string, imports map[string][]string, r Rule) []Violation {
	parent := map[string]string{from: ""}
	queue := []string{from}
	var out []Violation
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, dep := range imports[p] {
			if _, seen := parent[dep]; seen {
				continue
			}
			parent[dep] = p
			queue = append(queue, dep)
			if forbidden(module, r.Forbid, dep) {
				out = append(out, Violation{Chain: chain(module, parent, dep), Why: r.Why})
			}
		}
	}
	return out
}

func forbidden(module string, patterns []string, path string) bool {
	if rel, ok := relative(module, path); ok {
		return matchesAny(patterns, rel, false)
	}
	return matchesAny(patterns, path, true)
}

// chain lists the imports from the walk's start to p, module-relative.
func chain(module string, parent map[string]string, p string) []string {
	var out []string
	for ; p != ""; p = parent[p] {
		if rel, ok := relative(module, p); ok {
			out = append(out, rel)
		} else {
			out = append(out, p)
		}
	}
	slices.Reverse(out)
	return out
}

// relative strips the module path; ok is false outside the module.
func relative(module, path string) (string, bool) {
	if path == module {
		return ".", true
	}
	rest, ok := strings.CutPrefix(path, module+"/")
	return rest, ok
}

// matchesAny reports whether path matches one of patterns: module-relative
// patterns for a module path, absolute ones (first element has a dot) for
// any other.
func matchesAny(patterns []string, path string, absolute bool) bool {
	return slices.ContainsFunc(patterns, func(p string) bool {
		first, _, _ := strings.Cut(p, "/")
		isAbs := p != "..." && strings.Contains(first, ".")
		return isAbs == absolute && matches(p, path)
	})
}

// matches reports whether path matches pattern: "x" itself, "x/..." for x
// and below, "..." for any module package.
func matches(pattern, path string) bool {
	if pattern == "..." {
		return true
	}
	if prefix, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == prefix || strings.HasPrefix(path, prefix+"/")
	}
	return path == pattern
}
