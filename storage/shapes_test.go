package storage

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoJSONTags keeps HTTP shapes out of the contract: no struct of this
// package carries a JSON tag (package wire holds the JSON forms).
func TestNoJSONTags(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if fld, ok := n.(*ast.Field); ok && fld.Tag != nil && strings.Contains(fld.Tag.Value, "json:") {
				t.Errorf("%s: JSON tag %s; put the JSON form in package wire", fset.Position(fld.Pos()), fld.Tag.Value)
			}
			return true
		})
	}
}
