// Package graphql serves POST /graphql: a small GraphQL engine (a parser
// for executable documents, validation against a schema of object types,
// execution with fragments, aliases, variables and @skip/@include) and
// the W&B API subset the Weave SDKs query when they start — the viewer and
// its default entity, the user name, project lookup and upsert — scoped to
// the request's API key.
//
// It knows auth and nothing else of weft: it must never import storage,
// receivers, the query API or the wiring.
package graphql
