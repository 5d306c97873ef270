package kafkareceiver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/receiver/otelmap"
	"github.com/weftdev/weft/storage"
)

// OTLPConfig is the process role's OTLP topic: spans as the OpenTelemetry
// Collector's Kafka exporter writes them with `encoding: otlp_proto` (one
// OTLP protobuf TracesData per record). Its YAML keys live under
// `kafka_otlp:` in weft.yaml; brokers, timeouts and batching come from
// `kafka:`.
type OTLPConfig struct {
	// Topic to consume; empty (the default) turns the OTLP consumer off.
	// The Collector's Kafka exporter writes to otlp_spans by default.
	Topic string `yaml:"topic"`
	// DeadLetterTopic receives records that can never be written.
	// Default <topic>.dlq.
	DeadLetterTopic string `yaml:"dead_letter_topic"`
	// Group is the consumer group of this topic. Default
	// weft-processor-otlp.
	Group string `yaml:"group"`
	// Projects maps a resource's service.name to the project
	// ("entity/project") of its spans, for resources without the
	// attributes wandb.entity and wandb.project.
	Projects map[string]string `yaml:"projects"`
	// DefaultProject is the project of spans that neither their resource,
	// the record's project_id header nor Projects place. Empty: such
	// spans are dead-lettered.
	DefaultProject string `yaml:"default_project"`
}

// DefaultOTLPConfig returns the documented defaults: off.
func DefaultOTLPConfig() OTLPConfig {
	return OTLPConfig{Group: "weft-processor-otlp"}
}

// Enabled reports whether a topic is configured.
func (c OTLPConfig) Enabled() bool { return c.Topic != "" }

// Validate reports the first setting that cannot work, naming its key.
func (c OTLPConfig) Validate() error {
	if !c.Enabled() {
		return nil
	}
	if c.Group == "" {
		return errors.New("kafka_otlp.group: must not be empty")
	}
	if c.DeadLetterTopic == c.Topic {
		return errors.New("kafka_otlp.dead_letter_topic: must differ from kafka_otlp.topic")
	}
	for service, project := range c.Projects {
		if _, _, err := auth.SplitProjectID(project); err != nil {
			return fmt.Errorf("kafka_otlp.projects[%q]: %w", service, err)
		}
	}
	if c.DefaultProject != "" {
		if _, _, err := auth.SplitProjectID(c.DefaultProject); err != nil {
			return fmt.Errorf("kafka_otlp.default_project: %w", err)
		}
	}
	return nil
}

// Kafka returns base with this topic, its dead-letter topic and group in
// place of the call topic's.
func (c OTLPConfig) Kafka(base kafkabase.Config) kafkabase.Config {
	base.Topic = c.Topic
	base.DeadLetterTopic = c.DeadLetterTopic
	if base.DeadLetterTopic == "" {
		base.DeadLetterTopic = c.Topic + ".dlq"
	}
	base.Consumer.Group = c.Group
	return base
}

// NewOTLPReceiver builds a consumer of the OTLP topic: each record's spans
// are mapped to calls as the OTLP receiver maps them and handed to next,
// with the call topic's rules for commits, retries and dead letters.
func NewOTLPReceiver(set telemetry.Settings, base kafkabase.Config, cfg OTLPConfig, mapper *otelmap.Mapper, next consumer.Calls) (*Receiver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p, err := NewReceiver(set, cfg.Kafka(base), next)
	if err != nil {
		return nil, err
	}
	d := otlpDecoder{cfg: cfg, mapper: mapper}
	p.decode = d.decode
	return p, nil
}

// ProjectHeader is the record header that names the project of a record's
// spans (a Collector sets it with the Kafka exporter's
// include_metadata_keys: [project_id]).
const ProjectHeader = "project_id"

type otlpDecoder struct {
	cfg    OTLPConfig
	mapper *otelmap.Mapper
}

// decode maps one OTLP record. A record that is not OTLP protobuf, or of
// which no span maps, fails; one with some unmapped spans returns the
// calls of the others and the reason for the rest.
func (d otlpDecoder) decode(m kafka.Message) ([]storage.CallOp, string, error) {
	td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(m.Value)
	if err != nil {
		return nil, "", fmt.Errorf("not an OTLP protobuf trace record (encoding otlp_proto): %w", err)
	}
	if bad := d.placeProjects(td, headerValue(m, ProjectHeader)); bad != nil {
		return nil, "", bad
	}
	res := d.mapper.Map(td, otelmap.Input{})
	ops := make([]storage.CallOp, len(res.Parts))
	for i := range res.Parts {
		ops[i].Part = &res.Parts[i]
	}
	switch {
	case len(res.Rejected) == 0:
		return ops, "", nil
	case len(ops) == 0:
		return nil, "", fmt.Errorf("no span of the record could be mapped: %s", otelmap.RejectionMessage(res.Rejected))
	}
	return ops, fmt.Sprintf("%d of %d spans could not be mapped (the rest were written): %s",
		len(res.Rejected), td.SpanCount(), otelmap.RejectionMessage(res.Rejected)), nil
}

// placeProjects gives each resource without wandb.entity and
// wandb.project the project of the record header, of its service.name in
// the configured map, or the default, and checks every project's form.
func (d otlpDecoder) placeProjects(td ptrace.Traces, header string) error {
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		res := rss.At(i).Resource()
		project := otelmap.ProjectOf(res)
		if project == "" {
			service, _ := res.Attributes().Get("service.name")
			project = d.projectFor(service.Str(), header)
		}
		if project == "" {
			continue // the mapper rejects its spans for lack of a project
		}
		entity, name, err := auth.SplitProjectID(project)
		if err != nil {
			return err
		}
		res.Attributes().PutStr("wandb.entity", entity)
		res.Attributes().PutStr("wandb.project", name)
	}
	return nil
}

func (d otlpDecoder) projectFor(service, header string) string {
	if header = strings.TrimSpace(header); header != "" {
		return header
	}
	if p, ok := d.cfg.Projects[service]; ok && service != "" {
		return p
	}
	return d.cfg.DefaultProject
}

func headerValue(m kafka.Message, key string) string {
	for _, h := range m.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}
