// Package automations is webhook automations: an entity's secrets
// (sealed, write-only), its webhooks, and a project's automations that
// watch artifact events (LINK_ARTIFACT, ADD_ARTIFACT_ALIAS) in a project
// or registry, or (CALL_ALERT) a condition over a project's calls
// evaluated every interval by one process of a deployment, and send a
// rendered, signed payload to a webhook. It owns
// the rules of what may be saved, the events that object writes emit
// (Objects wraps the object store), linking versions into registries,
// and dispatching events into deliveries; package delivery sends them.
//
// It must never import the HTTP API built on it, receivers, the query
// API or a storage backend.
package automations
