// Package forwardexporter is the agent role's exporter: a store-and-forward
// queue on local disk in front of a central Weft. ConsumeCalls appends a
// batch of call records, with the API key to forward them under, to a
// bounded on-disk buffer (internal/wal) and returns once the buffer has
// fsynced it, so an acknowledged record survives a crash of the agent. A
// forwarder reads the buffer back in order and sends it upstream (the
// central Weft's Weave API, or straight to Kafka), advancing only when the
// upstream has accepted a batch. Failures that may pass (connection errors,
// 5xx, 429 and 503 with Retry-After) are retried with backoff and jitter
// for as long as they last; a record the upstream refuses with a 4xx even
// alone can never succeed and is set aside in a rejected file, counted and
// logged, so it does not block the records behind it. A full buffer
// answers ErrOverloaded (429 to clients). After a restart the forwarder
// resumes at the last batch it knows was accepted; a batch sent again is
// harmless because the central store merges call parts by id.
//
// It must never import receivers, processors, app or a storage backend.
package forwardexporter
