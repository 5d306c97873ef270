// Package kafkareceiver is the process role's receiver: one member of a
// consumer group that reads call records from the Kafka topic and hands
// them in batches to the next consumer (the batch processor in front of
// the storage exporter), committing offsets only after that consumer made
// them durable. Records that can never be written go to the dead-letter
// topic with their reason, are counted and logged, and the partition moves
// on.
//
// Delivery is at least once: a crash or a rebalance redelivers records
// whose offsets were not yet committed, and storage writes are idempotent
// (parts merge per side, last write wins), so a redelivery never
// duplicates a call.
//
// It must never import exporters, processors, the query API, app or a
// storage backend (its tests use them to run the real path).
package kafkareceiver
