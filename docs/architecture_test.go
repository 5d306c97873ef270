package docs

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// mapExempt are packages the architecture page does not need to name:
// commands, test helpers and small utilities that hold no rule of the
// system.
var mapExempt = regexp.MustCompile(`^(cmd/|docs$|deploy$|e2e|internal/(atomicfile|backoff|browsertest|chdb|chfront|emoji|jsontext|kafkabase|kafkatest|memlimit|syncbuf|telemetry|tlsutil)$|inference/(upstreamtest|chatstream|sse|catalog)$|training/|automations/(api|kafkaevents|secretbox|signing|template)$|storage/(errkind|latencyhist)$)`)

// TestArchitecturePageNamesThePackages checks that every package the page
// names in backquotes exists, and that every package of the module that
// holds a part or a rule is on the page.
func TestArchitecturePageNamesThePackages(t *testing.T) {
	page, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}", "github.com/weftdev/weft/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		pkgs[strings.TrimPrefix(strings.TrimPrefix(p, "github.com/weftdev/weft"), "/")] = true
	}
	text := string(page)
	// A name in backquotes that looks like a package path (a word, or
	// words joined by slashes, optionally followed by .Symbol).
	named := regexp.MustCompile("`([a-z][a-z0-9]*(?:/[a-z][a-z0-9]*)*)(?:\\.[A-Za-z]+)?`")
	for _, m := range named.FindAllStringSubmatch(text, -1) {
		name := m[1]
		if !strings.Contains(name, "/") && !pkgs[name] {
			continue // a word in code style (a setting, a flag), not a path
		}
		if !pkgs[name] && !strings.HasPrefix(name, "app/") {
			t.Errorf("the page names package %q, which the module does not have", name)
		}
	}
	for p := range pkgs {
		if p == "" || mapExempt.MatchString(p) {
			continue
		}
		if !strings.Contains(text, "`"+p+"`") && !strings.Contains(text, "`"+p+".") && !strings.Contains(text, " "+p+" ") &&
			!strings.Contains(text, p+"/") {
			t.Errorf("package %s is not on the architecture page; add it where it belongs, or exempt it in mapExempt with a reason", p)
		}
	}
}
