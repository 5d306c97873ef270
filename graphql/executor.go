package graphql

import (
	"context"
)

// executor runs a validated operation.
type executor struct {
	s    *Schema
	doc  *Document
	vars map[string]any
	errs []*Error
}

// fieldGroup is the fields that answer under one response key: selecting
// a field twice (directly or through fragments) merges their selections.
type fieldGroup struct {
	key    string
	fields []*Field
}

// selectionSet resolves the fields of sels on a value of type t.
func (ex *executor) selectionSet(ctx context.Context, t *Type, parent any, sels []Selection, path []any) *orderedMap {
	out := newOrderedMap()
	for _, g := range ex.collect(sels, nil) {
		out.set(g.key, ex.resolve(ctx, t, parent, g, append(path[:len(path):len(path)], g.key)))
	}
	return out
}

// collect groups the fields of sels by response key, in order, expanding
// fragments and dropping what @skip or @include leave out.
func (ex *executor) collect(sels []Selection, groups []fieldGroup) []fieldGroup {
	for _, sel := range sels {
		if !ex.included(sel.Directives) {
			continue
		}
		switch {
		case sel.Field != nil:
			groups = addField(groups, sel.Field)
		case sel.Inline != nil:
			groups = ex.collect(sel.Inline.Selection, groups)
		default:
			groups = ex.collect(ex.doc.Fragments[sel.Spread].Selection, groups)
		}
	}
	return groups
}

func addField(groups []fieldGroup, f *Field) []fieldGroup {
	key := f.ResponseKey()
	for i := range groups {
		if groups[i].key == key {
			groups[i].fields = append(groups[i].fields, f)
			return groups
		}
	}
	return append(groups, fieldGroup{key: key, fields: []*Field{f}})
}

// included applies @skip(if:) and @include(if:).
func (ex *executor) included(ds []Directive) bool {
	for _, d := range ds {
		v, _ := valueOf(d.Arguments[0].Value, ex.vars)
		b, _ := v.(bool)
		if (d.Name == "skip") == b {
			return false
		}
	}
	return true
}

// resolve computes one response key: the field's resolver, then, for an
// object, its merged sub-selection. A resolver error makes the value null
// and is reported with the field's path.
func (ex *executor) resolve(ctx context.Context, t *Type, parent any, g fieldGroup, path []any) any {
	f := g.fields[0]
	if f.Name == "__typename" {
		return t.Name
	}
	def := t.Fields[f.Name]
	args, err := argValues(f.Arguments, ex.vars)
	var val any
	if err == nil {
		val, err = def.Resolve(ctx, parent, args)
	}
	if err != nil {
		e := errorf(f, "%s", err.Error())
		e.Path = path
		ex.errs = append(ex.errs, e)
		return nil
	}
	child := ex.s.Types[def.Type]
	if child == nil || val == nil {
		return val
	}
	var sels []Selection
	for _, f := range g.fields {
		sels = append(sels, f.Selection...)
	}
	return ex.selectionSet(ctx, child, val, sels, path)
}
