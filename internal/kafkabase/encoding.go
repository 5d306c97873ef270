package kafkabase

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weftdev/weft/storage"
)

// Version is the envelope version this release writes. Decode reads every
// version listed in ADR 0006 as supported; today that is only 1.
const Version = 1

// Errors of Decode. Both mean the record can never be processed and
// belongs in the dead-letter topic.
var (
	// ErrMalformed: the record is not a valid envelope.
	ErrMalformed = errors.New("malformed record")
	// ErrUnknownVersion: the envelope's version is not one this release reads.
	ErrUnknownVersion = errors.New("unknown record version")
)

// Op names in the envelope's "op" field.
const (
	opStart    = "start"
	opEnd      = "end"
	opComplete = "complete"
	opUpdate   = "update"
	opDelete   = "delete"
)

// envelope is the record value: the version, what kind of op it is, and
// exactly the one body that kind carries.
type envelope struct {
	V      int         `json:"v"`
	Op     string      `json:"op"`
	Call   *wireCall   `json:"call,omitempty"`
	Update *wireUpdate `json:"update,omitempty"`
	Delete *wireDelete `json:"delete,omitempty"`
}

// Key returns the record key of op: its project id, so one project's ops
// land on one partition and stay in order.
func Key(op storage.CallOp) string { return op.ProjectID() }

// Encode returns the record value of op. An op that sets no body or more
// than one, or carries invalid JSON, fails with storage.ErrInvalidArgument.
func Encode(op storage.CallOp) ([]byte, error) {
	env, err := toEnvelope(op)
	if err != nil {
		return nil, err
	}
	// The decoder's checks, applied before the write: an op it would set
	// aside as poison is refused at ingest with a 400 instead.
	if _, err := fromEnvelope(env); err != nil {
		return nil, fmt.Errorf("%w: %w", storage.ErrInvalidArgument, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// User JSON travels unchanged apart from insignificant whitespace;
	// HTML escaping would rewrite <, > and & inside it.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(env); err != nil {
		return nil, fmt.Errorf("%w: encode call op: %w", storage.ErrInvalidArgument, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

func toEnvelope(op storage.CallOp) (envelope, error) {
	set := 0
	for _, b := range []bool{op.Part != nil, op.Update != nil, op.Delete != nil} {
		if b {
			set++
		}
	}
	if set != 1 {
		return envelope{}, fmt.Errorf("%w: call op must set exactly one of part, update, delete (%d set)", storage.ErrInvalidArgument, set)
	}
	env := envelope{V: Version}
	switch {
	case op.Part != nil:
		name, ok := partOpName(op.Part.Kind)
		if !ok {
			return envelope{}, fmt.Errorf("%w: call part kind %d", storage.ErrInvalidArgument, op.Part.Kind)
		}
		env.Op, env.Call = name, fromCall(&op.Part.Call)
	case op.Update != nil:
		env.Op, env.Update = opUpdate, fromUpdate(op.Update)
	default:
		env.Op, env.Delete = opDelete, fromDelete(op.Delete)
	}
	return env, nil
}

func partOpName(k storage.PartKind) (string, bool) {
	switch k {
	case storage.PartStart:
		return opStart, true
	case storage.PartEnd:
		return opEnd, true
	case storage.PartComplete:
		return opComplete, true
	}
	return "", false
}

// Decode parses a record value. Unknown fields are ignored (a newer
// release may add optional ones within a version); everything else that
// is not a valid envelope of a supported version is an error wrapping
// ErrMalformed or ErrUnknownVersion.
func Decode(value []byte) (storage.CallOp, error) {
	var env envelope
	if err := json.Unmarshal(value, &env); err != nil {
		// A newer version may change a body's shape; name the version
		// rather than the shape when the version alone is readable.
		if v, ok := peekVersion(value); ok && v != Version {
			return storage.CallOp{}, unknownVersion(v)
		}
		return storage.CallOp{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	switch {
	case env.V == 0:
		return storage.CallOp{}, fmt.Errorf("%w: no version field \"v\"", ErrMalformed)
	case env.V != Version:
		return storage.CallOp{}, unknownVersion(env.V)
	}
	op, err := fromEnvelope(env)
	if err != nil {
		return storage.CallOp{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return op, nil
}

func peekVersion(value []byte) (int, bool) {
	var head struct {
		V int `json:"v"`
	}
	if err := json.Unmarshal(value, &head); err != nil || head.V == 0 {
		return 0, false
	}
	return head.V, true
}

func unknownVersion(v int) error {
	return fmt.Errorf("%w: %d (this release reads %d)", ErrUnknownVersion, v, Version)
}

func fromEnvelope(env envelope) (storage.CallOp, error) {
	bodies := 0
	for _, b := range []bool{env.Call != nil, env.Update != nil, env.Delete != nil} {
		if b {
			bodies++
		}
	}
	if bodies != 1 {
		return storage.CallOp{}, fmt.Errorf("op %q must carry exactly one body, found %d", env.Op, bodies)
	}
	switch env.Op {
	case opStart, opEnd, opComplete:
		return partOp(env)
	case opUpdate:
		if env.Update == nil || env.Update.ProjectID == "" || env.Update.ID == "" {
			return storage.CallOp{}, errors.New("update needs update.project_id and update.id")
		}
		return storage.CallOp{Update: env.Update.toStorage()}, nil
	case opDelete:
		if env.Delete == nil || env.Delete.ProjectID == "" {
			return storage.CallOp{}, errors.New("delete needs delete.project_id")
		}
		return storage.CallOp{Delete: env.Delete.toStorage()}, nil
	}
	return storage.CallOp{}, fmt.Errorf("unknown op %q", env.Op)
}

func partOp(env envelope) (storage.CallOp, error) {
	c := env.Call
	if c == nil || c.ProjectID == "" || c.ID == "" {
		return storage.CallOp{}, fmt.Errorf("op %q needs call.project_id and call.id", env.Op)
	}
	kind := storage.PartComplete
	switch env.Op {
	case opStart:
		kind = storage.PartStart
	case opEnd:
		kind = storage.PartEnd
	}
	return storage.CallOp{Part: &storage.CallPart{Kind: kind, Call: c.toStorage()}}, nil
}
