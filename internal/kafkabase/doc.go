// Package kafkabase is what the Kafka exporter (the ingest role's
// producer) and the Kafka receiver (the process role's consumer group)
// share: the `kafka:` settings, the record encoding (a versioned JSON
// envelope, one call op per record, keyed by project id; see
// docs/adr/0006-kafka-record-encoding.md), topic creation, and a
// rate-limited logger for the client's errors.
//
// It must never import receivers, processors, exporters, the query API,
// app or a storage backend; it depends only on the storage contract.
package kafkabase
