// Package kafkaqueue is the scale-out form of the ingest queue: call ops
// travel through a Kafka topic between the ingest role and the process role.
//
// It owns the record encoding (a versioned JSON envelope, one call op per
// record, keyed by project id; see docs/adr/0006-kafka-record-encoding.md),
// the Producer that receivers submit to (a consumer.Calls that answers
// only after Kafka acknowledged with acks=all), the Processor that consumes
// the topic in a consumer group and writes batches to storage (committing
// offsets only after the write succeeded), the dead-letter topic for records
// that can never be written, and topic creation.
//
// Delivery is at least once: a crash or a rebalance redelivers records whose
// offsets were not yet committed, and storage writes are idempotent (parts
// merge per side, last write wins), so a redelivery never duplicates a call.
//
// It must never import receivers, the query API, app or a storage backend;
// it depends only on the storage contract and the pipeline interfaces.
package kafkaqueue
