package importrules

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestImportRules checks the module's real import graph (non-test code)
// against Rules and names every offending chain.
func TestImportRules(t *testing.T) {
	module, graph := loadGraph(t)
	for _, v := range Check(module, graph, Rules) {
		t.Errorf("forbidden import %s", v)
	}
}

// loadGraph lists the module's packages and everything they import.
func loadGraph(t *testing.T) (string, []Package) {
	t.Helper()
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports,Module", "./...")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var module string
	var graph []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			Package
			Module *struct {
				Path string
				Main bool
			}
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if p.Module != nil && p.Module.Main {
			module = p.Module.Path
		}
		graph = append(graph, p.Package)
	}
	if module == "" {
		t.Fatal("go list named no main module")
	}
	return module, graph
}

func TestCheck(t *testing.T) {
	const m = "example.com/m"
	graph := []Package{
		{ImportPath: m + "/storage", Imports: []string{m + "/refs", "fmt"}},
		{ImportPath: m + "/refs", Imports: []string{m + "/receiver/x"}},
		{ImportPath: m + "/receiver/x", Imports: []string{"github.com/db/driver"}},
		{ImportPath: m + "/app", Imports: []string{m + "/storage/duckdb"}},
		{ImportPath: m + "/storage/duckdb", Imports: []string{"github.com/db/driver"}},
		{ImportPath: "github.com/db/driver"},
		{ImportPath: "fmt"},
	}
	cases := []struct {
		name string
		rule Rule
		want []string
	}{
		{"transitive edge, shortest chain", Rule{From: []string{"storage"}, Forbid: []string{"receiver/..."}},
			[]string{"storage -> refs -> receiver/x"}},
		{"subtree pattern covers its root", Rule{From: []string{"storage/..."}, Forbid: []string{"receiver"}}, nil},
		{"except spares a package", Rule{From: []string{"..."}, Except: []string{"app/...", "storage/duckdb/..."}, Forbid: []string{"storage/duckdb/..."}}, nil},
		{"everything else is caught", Rule{From: []string{"..."}, Except: []string{"storage/duckdb/..."}, Forbid: []string{"storage/duckdb/..."}},
			[]string{"app -> storage/duckdb"}},
		{"absolute pattern for another module", Rule{From: []string{"storage"}, Forbid: []string{"github.com/db/..."}},
			[]string{"storage -> refs -> receiver/x -> github.com/db/driver"}},
		{"... never matches the standard library", Rule{From: []string{"storage"}, Forbid: []string{"..."}},
			[]string{"storage -> refs", "storage -> refs -> receiver/x"}},
		{"a rule on a missing package matches nothing", Rule{From: []string{"processor/..."}, Forbid: []string{"..."}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, v := range Check(m, graph, []Rule{tc.rule}) {
				got = append(got, strings.Join(v.Chain, " -> "))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("violations %q; want %q", got, tc.want)
			}
		})
	}
}
