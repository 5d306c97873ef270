package logrules

import (
	"go/ast"
	"go/token"
	"strconv"
	"strings"
)

// MinWords is the fewest words a WARN or ERROR message may have.
const MinWords = 8

// Separator parts what happened from what happens next or what to do.
const Separator = "; "

// Site is one slog call at WARN or ERROR.
type Site struct {
	Pos     token.Position
	Level   string // "WARN" or "ERROR"
	Message string // constant parts joined; a non-constant operand reads "…"
	Const   bool   // the message has at least one constant part
}

// Problem says what is wrong with a site's message, or "" when nothing is.
func (s Site) Problem() string {
	if !s.Const {
		return "the message is not a constant string"
	}
	before, after, ok := strings.Cut(s.Message, Separator)
	switch {
	case !ok:
		return `no "; " between what happened and what happens next or what to do`
	case len(strings.Fields(before)) < 2:
		return `too little before "; " to say what happened`
	case len(strings.Fields(after)) < 3:
		return `too little after "; " to say what happens next or what to do`
	case len(strings.Fields(s.Message)) < MinWords:
		return "fewer than " + strconv.Itoa(MinWords) + " words"
	}
	return ""
}

// Sites lists the WARN and ERROR slog calls in f.
func Sites(fset *token.FileSet, f *ast.File) []Site {
	var out []Site
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		level, msg := "", -1
		switch sel.Sel.Name {
		case "Warn", "Error":
			if loggerName(sel.X) {
				level, msg = strings.ToUpper(sel.Sel.Name), 0
			}
		case "WarnContext", "ErrorContext":
			if loggerName(sel.X) {
				level, msg = strings.ToUpper(strings.TrimSuffix(sel.Sel.Name, "Context")), 1
			}
		case "Log":
			for _, a := range call.Args {
				if l := slogLevel(a); l != "" {
					level, msg = l, 2
				}
			}
		}
		if level == "" || msg >= len(call.Args) {
			return true
		}
		text, isConst := message(call.Args[msg])
		out = append(out, Site{Pos: fset.Position(call.Pos()), Level: level, Message: text, Const: isConst})
		return true
	})
	return out
}

// loggerName reports whether x names a logger: log, logger, s.logger,
// t.o.Logger and the like.
func loggerName(x ast.Expr) bool {
	var name string
	switch x := x.(type) {
	case *ast.Ident:
		name = x.Name
	case *ast.SelectorExpr:
		name = x.Sel.Name
	default:
		return false
	}
	name = strings.ToLower(name)
	return strings.HasSuffix(name, "log") || strings.HasSuffix(name, "logger")
}

// slogLevel is "WARN" for slog.LevelWarn, "ERROR" for slog.LevelError.
func slogLevel(x ast.Expr) string {
	sel, ok := x.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "slog" {
		return ""
	}
	switch sel.Sel.Name {
	case "LevelWarn":
		return "WARN"
	case "LevelError":
		return "ERROR"
	}
	return ""
}

// message joins the constant parts of a string expression; other
// operands of + read "…". isConst is whether any part is constant.
func message(x ast.Expr) (text string, isConst bool) {
	switch x := x.(type) {
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			if s, err := strconv.Unquote(x.Value); err == nil {
				return s, true
			}
		}
	case *ast.ParenExpr:
		return message(x.X)
	case *ast.BinaryExpr:
		if x.Op == token.ADD {
			l, lc := message(x.X)
			r, rc := message(x.Y)
			return l + r, lc || rc
		}
	}
	return "…", false
}
