package storage

import (
	"context"
	"encoding/json"
	"time"
)

// Artifact event types an automation can watch.
const (
	EventLinkArtifact     = "LINK_ARTIFACT"
	EventAddArtifactAlias = "ADD_ARTIFACT_ALIAS"
)

// Delivery states: pending waits for its next attempt (or is in flight
// under a lease), delivered got a 2xx, failed was given up on.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// Secret is an entity's named secret. Sealed is the value encrypted by
// the caller; storage never sees the plain value. Listing leaves Sealed
// nil.
type Secret struct {
	Entity    string
	Name      string
	Sealed    []byte
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Webhook is an entity's webhook target. AccessTokenSecret and
// SigningSecret name secrets of the same entity ("" for none).
type Webhook struct {
	Entity            string
	ID                string
	Name              string
	URL               string
	AccessTokenSecret string
	SigningSecret     string
	CreatedAt         time.Time
	UpdatedAt         time.Time
	WebhookHealth
}

// WebhookHealth is what deliveries learn about a webhook: since when it
// has failed without a success in between, and whether it was disabled
// (by a 410, by failing too long, or by its owner) and why.
type WebhookHealth struct {
	FailingSince   *time.Time
	DisabledAt     *time.Time
	DisabledReason string
}

// Automation watches one event type in a project and sends a webhook.
// Scope is "project", "registry" or "collection"; Collection is the
// collection of a collection scope, CollectionFilter the optional
// collection of a project scope.
type Automation struct {
	ProjectID        string
	ID               string
	Name             string
	Description      string
	Scope            string
	Collection       string
	CollectionFilter string
	Event            string
	AliasRegex       string
	WebhookID        string
	Payload          string
	Enabled          bool
	// Condition is a CALL_ALERT automation's condition (JSON); "" for
	// artifact events.
	Condition string
	CreatedBy string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ArtifactEvent is a link or alias change of an object version, as it
// was when the change was made. Aliases holds the alias added (one) or
// the aliases a link set. Metadata is the version value's top-level
// object ({} when the value is no object).
type ArtifactEvent struct {
	ID           string
	Type         string
	ProjectID    string
	Collection   string
	VersionIndex int64
	Digest       string
	Aliases      []string
	Source       string // a link's source version ref; "" otherwise
	Author       string
	Metadata     json.RawMessage
	At           time.Time
}

// Delivery is one event sent to one automation's webhook: its id is the
// webhook-id every attempt carries. Body is the rendered payload sealed by
// the caller (it may hold secret values); Preview is the same payload with
// secret values masked, for the history.
type Delivery struct {
	ID            string
	ProjectID     string
	AutomationID  string
	Entity        string
	WebhookID     string
	EventID       string
	EventType     string
	Body          []byte
	Preview       string
	State         string
	Attempts      int
	NextAttemptAt time.Time
	// RetryFrom starts the retry window (creation, or a redelivery).
	RetryFrom  time.Time
	LeaseOwner string
	LeaseUntil *time.Time
	DeliveryResult
	CreatedAt time.Time
	UpdatedAt time.Time
}

// DeliveryResult is the last attempt's outcome: the receiver's status
// (0 when none answered), a failure reason, the start of its answer and
// the time it took.
type DeliveryResult struct {
	LastAttemptAt *time.Time
	LastStatus    int
	LastError     string
	LastResponse  string
	LastLatencyMS int64
}

// SecretStore keeps entity secrets. Every method is scoped to one entity.
type SecretStore interface {
	// PutSecret creates the secret or replaces its value (rotation),
	// keeping its CreatedAt.
	PutSecret(ctx context.Context, s Secret) error
	// GetSecret returns the secret with its sealed value; ErrNotFound.
	GetSecret(ctx context.Context, entity, name string) (Secret, error)
	// ListSecrets returns names and dates, sorted by name.
	ListSecrets(ctx context.Context, entity string) ([]Secret, error)
	// DeleteSecret removes the secret: ErrNotFound when absent,
	// ErrConflict while a webhook of the entity uses it.
	DeleteSecret(ctx context.Context, entity, name string) error
}

// WebhookStore keeps entity webhooks. Every method is scoped to one
// entity. Create and update refuse (ErrInvalidArgument) secrets the
// entity does not have, and (ErrConflict) a name another webhook has.
type WebhookStore interface {
	CreateWebhook(ctx context.Context, w Webhook) error
	// UpdateWebhook replaces every field but CreatedAt; ErrNotFound.
	UpdateWebhook(ctx context.Context, w Webhook) error
	GetWebhook(ctx context.Context, entity, id string) (Webhook, error)
	// ListWebhooks returns the entity's webhooks sorted by name.
	ListWebhooks(ctx context.Context, entity string) ([]Webhook, error)
	// DeleteWebhook: ErrNotFound, or ErrConflict while automations use it.
	DeleteWebhook(ctx context.Context, entity, id string) error
	// SetWebhookHealth records delivery health; ErrNotFound.
	SetWebhookHealth(ctx context.Context, entity, id string, h WebhookHealth) error
}

// AutomationStore keeps a project's automations. Create and update
// refuse (ErrInvalidArgument) a webhook the project's entity does not
// have and (ErrConflict) a name another automation of the project has.
type AutomationStore interface {
	CreateAutomation(ctx context.Context, a Automation) error
	// UpdateAutomation replaces every field but CreatedBy and CreatedAt.
	UpdateAutomation(ctx context.Context, a Automation) error
	GetAutomation(ctx context.Context, projectID, id string) (Automation, error)
	// ListAutomations returns the project's automations sorted by name.
	ListAutomations(ctx context.Context, projectID string) ([]Automation, error)
	// DeleteAutomation removes it and its deliveries; ErrNotFound.
	DeleteAutomation(ctx context.Context, projectID, id string) error
}

// EventOutbox holds artifact events between the change that caused them
// and their dispatch into deliveries, when no Kafka topic carries them.
type EventOutbox interface {
	// RecordEvents stores events durably before returning.
	RecordEvents(ctx context.Context, events []ArtifactEvent) error
	// PendingEvents returns up to limit undispatched events, oldest first.
	PendingEvents(ctx context.Context, limit int) ([]ArtifactEvent, error)
	// DispatchEvents adds the deliveries (ids already stored are left as
	// they are) and removes the events, atomically where the backend can.
	DispatchEvents(ctx context.Context, eventIDs []string, deliveries []Delivery) error
}

// DeliveryStore keeps deliveries and hands due ones to workers under a
// lease, so a worker that dies mid-attempt leaves the delivery to
// another once the lease ends (at-least-once).
type DeliveryStore interface {
	// AddDeliveries stores new deliveries; ids already stored are left
	// as they are, so adding the same event's deliveries twice is harmless.
	AddDeliveries(ctx context.Context, ds []Delivery) error
	// ClaimDeliveries leases up to limit pending deliveries due at now
	// whose lease is free or expired to owner until now+lease, earliest
	// due first.
	ClaimDeliveries(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]Delivery, error)
	// SaveDeliveries stores each delivery's state, attempts, result and
	// lease (the caller clears or sets it), in one write; deliveries no
	// longer stored (their automation was deleted) are skipped.
	SaveDeliveries(ctx context.Context, ds []Delivery) error
	GetDelivery(ctx context.Context, projectID, id string) (Delivery, error)
	// ListDeliveries returns an automation's deliveries, newest first,
	// at most limit.
	ListDeliveries(ctx context.Context, projectID, automationID string, limit int) ([]Delivery, error)
	// CountDeliveries counts deliveries in state across every project.
	CountDeliveries(ctx context.Context, state string) (int64, error)
}

// AutomationsBackend is everything webhook automations keep in storage.
type AutomationsBackend interface {
	SecretStore
	WebhookStore
	AutomationStore
	EventOutbox
	DeliveryStore
	AlertStore
}
