package gen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// The renderers print what the model decided: they import no schema model
// and read no schema node of a type or field (decide.go answers for them).
func TestRenderersReadOnlyTheModel(t *testing.T) {
	fset := token.NewFileSet()
	for _, name := range []string{"render.go", "wire.go", "docs.go"} {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "github.com/prickle-dev/prickle/internal/jsonschema" {
				t.Errorf("%s imports the schema model", name)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "node" {
				t.Errorf("%s: reads a schema node (.node)", fset.Position(sel.Pos()))
			}
			return true
		})
	}
}
