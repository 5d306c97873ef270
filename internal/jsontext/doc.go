// Package jsontext checks and repairs JSON text on its way in: a fast
// validator for deciding whether a string is embeddable JSON, the
// rewriting of lone surrogate escapes (valid JSON that encodes no Unicode
// text and that DuckDB's JSON functions refuse) and the location of
// invalid UTF-8 in a request body, so the answer can name the field.
//
// It must never import other Weft packages: receivers, wire and the
// query API all build on it.
package jsontext
