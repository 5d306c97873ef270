// Package kafkaexporter is the ingest role's exporter: it writes call
// records to the Kafka topic (keyed by project, so one project's records
// stay in order) and answers only after Kafka acknowledged them with
// acks=all, bounding what waits for Kafka in records and bytes.
//
// It must never import receivers, processors or storage backends.
package kafkaexporter
