package automations

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/weftdev/weft/automations/delivery"
	"github.com/weftdev/weft/automations/egress"
	"github.com/weftdev/weft/automations/secretbox"
	"github.com/weftdev/weft/storage"
)

// Deps are what the service is built from.
type Deps struct {
	Store storage.AutomationsBackend
	// Objects is the plain object store: linking records its own events.
	Objects storage.ObjectStore
	Events  EventSink
	Box     *secretbox.Box
	Guard   *egress.Guard
	// Sender sends webhook tests.
	Sender          *delivery.Sender
	MaxPayloadBytes int
	Now             func() time.Time
	// Wake tells the delivery worker a delivery is due (after a
	// redelivery); nil when no worker runs in this process.
	Wake func()
	// Measure measures alert conditions for /automations/alerts/evaluate.
	Measure Measurer
	// PublicURL starts the calls_url of evaluations ("" gives a path).
	PublicURL string
}

// Service manages secrets, webhooks and automations. Callers authorise
// first: it checks what is saved, not who saves it.
type Service struct {
	d Deps
}

// NewService builds the service.
func NewService(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Wake == nil {
		d.Wake = func() {}
	}
	return &Service{d: d}
}

// now is the service's clock at the precision both stores keep.
func (s *Service) now() time.Time { return s.d.Now().UTC().Truncate(time.Microsecond) }

// PutSecret creates a secret, or rotates it: the new value replaces the
// old for every delivery from now on. The value is sealed before it is
// stored and is never returned.
func (s *Service) PutSecret(ctx context.Context, entity, name, value string) (storage.Secret, error) {
	if err := checkSecretName(name); err != nil {
		return storage.Secret{}, err
	}
	switch {
	case value == "":
		return storage.Secret{}, invalid("value", "must not be empty")
	case len(value) > MaxSecretBytes:
		return storage.Secret{}, invalid("value", "must be at most %d bytes", MaxSecretBytes)
	case !utf8.ValidString(value):
		return storage.Secret{}, invalid("value", "must be UTF-8 text")
	case strings.IndexFunc(value, headerUnsafe) >= 0:
		return storage.Secret{}, invalid("value", "must not contain line breaks, NUL or other control characters "+
			"(only tab): secrets are sent in HTTP headers, where they would fail every delivery; "+
			"remove them, e.g. a trailing newline from a file")
	}
	sealed, err := s.d.Box.Seal([]byte(value), delivery.SecretContext(entity, name))
	if err != nil {
		return storage.Secret{}, err
	}
	now := s.now()
	if err := s.d.Store.PutSecret(ctx, storage.Secret{Entity: entity, Name: name, Sealed: sealed, CreatedAt: now, UpdatedAt: now}); err != nil {
		return storage.Secret{}, err
	}
	sec, err := s.d.Store.GetSecret(ctx, entity, name)
	sec.Sealed = nil
	return sec, err
}

// headerUnsafe reports a character no HTTP header value may carry: the
// ASCII controls (CR, LF and NUL among them) but tab, and DEL.
func headerUnsafe(r rune) bool { return (r < 0x20 && r != '\t') || r == 0x7f }

// ListSecrets lists names and dates.
func (s *Service) ListSecrets(ctx context.Context, entity string) ([]storage.Secret, error) {
	return s.d.Store.ListSecrets(ctx, entity)
}

// DeleteSecret removes a secret no webhook uses.
func (s *Service) DeleteSecret(ctx context.Context, entity, name string) error {
	return s.d.Store.DeleteSecret(ctx, entity, name)
}

// WebhookInput is a webhook to create.
type WebhookInput struct {
	Entity, Name, URL, AccessTokenSecret, Secret string
}

// CreateWebhook checks and stores a webhook with a new id.
func (s *Service) CreateWebhook(ctx context.Context, in WebhookInput) (storage.Webhook, error) {
	now := s.now()
	w := storage.Webhook{Entity: in.Entity, ID: "wh_" + newID(), Name: in.Name, URL: in.URL,
		AccessTokenSecret: in.AccessTokenSecret, SigningSecret: in.Secret, CreatedAt: now, UpdatedAt: now}
	if err := s.checkWebhook(w); err != nil {
		return storage.Webhook{}, err
	}
	return w, s.d.Store.CreateWebhook(ctx, w)
}

// checkWebhook applies the webhook rules; the store checks that the
// secrets exist, atomically with the write.
func (s *Service) checkWebhook(w storage.Webhook) error {
	if err := checkName("name", w.Name); err != nil {
		return err
	}
	if len(w.URL) > MaxURLLen {
		return invalid("url", "must be at most %d bytes", MaxURLLen)
	}
	if _, err := s.d.Guard.CheckURL(w.URL); err != nil {
		return invalid("url", "%v", err)
	}
	for field, name := range map[string]string{"access_token_secret": w.AccessTokenSecret, "secret": w.SigningSecret} {
		if name != "" && !secretName.MatchString(name) {
			return invalid(field, "%q is not a secret name; name one from /secrets/list", name)
		}
	}
	if w.AccessTokenSecret != "" && w.AccessTokenSecret == w.SigningSecret {
		return invalid("secret", "a webhook has one access token and one other secret; name two different secrets")
	}
	return nil
}

// newID is a random id for webhooks and automations.
func newID() string { return strings.ReplaceAll(uuid.NewString(), "-", "") }
