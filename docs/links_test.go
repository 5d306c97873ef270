package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// mdLink is a Markdown link or image: its target, without a title.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headingSlugs are the anchors of a Markdown file's headings, as GitHub
// makes them: lower case, punctuation dropped, spaces to hyphens, a
// repeated one numbered.
func headingSlugs(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inCode := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimLeft(line, "#")
		if !strings.HasPrefix(h, " ") {
			continue
		}
		s := strings.ToLower(strings.TrimSpace(h))
		s = strings.ReplaceAll(s, "`", "")
		s = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`).ReplaceAllString(s, "")
		s = strings.ReplaceAll(s, " ", "-")
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// TestLinksResolve checks every relative link of the README and the
// documentation pages: the file exists, and a #anchor is a heading of it.
func TestLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../README.md")
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := stripCode(string(raw))
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := page
			if path != "" {
				file = filepath.Join(filepath.Dir(page), path)
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s links to %s, which does not exist", page, target)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(file, ".md") {
				continue
			}
			body, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if !headingSlugs(string(body))[anchor] {
				t.Errorf("%s links to %s: %s has no heading #%s", page, target, file, anchor)
			}
		}
	}
}

// stripCode drops fenced code blocks, whose brackets are not links.
func stripCode(text string) string {
	var b strings.Builder
	inCode := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		if !inCode {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestReadmeCommandsAreTheOnesRun: the README starts with the command
// that serves and the one that tests, and CI runs that test command.
func TestReadmeCommandsAreTheOnesRun(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	first := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(string(readme))
	if first == nil {
		t.Fatal("the README has no sh code block")
	}
	var cmds []string
	for _, line := range strings.Split(strings.TrimSpace(first[1]), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	if len(cmds) != 2 || cmds[0] != "go run ./cmd/weft serve" || cmds[1] != "./scripts/test.sh" {
		t.Fatalf("the README's first commands are %q; want serving and ./scripts/test.sh", cmds)
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ci), "exec ./scripts/test.sh") {
		t.Fatalf(".ci/run does not run the README's test command:\n%s", ci)
	}
	if _, err := os.Stat("../cmd/weft/main.go"); err != nil {
		t.Fatalf("the README serves with ./cmd/weft: %v", err)
	}
}
