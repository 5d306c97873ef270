package config

import (
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAutomationsSettings(t *testing.T) {
	file := writeFile(t, "data_dir: /d\nautomations:\n  allowed_networks: [127.0.0.0/8, \"::1\"]\n"+
		"  retry: {initial_interval: 1s, max_interval: 1h, max_elapsed: 72h}\n  request_timeout: 3s\n")
	cfg, err := Load([]string{"--config", file}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Automations
	if a.Retry != (AutomationsRetry{InitialInterval: time.Second, MaxInterval: time.Hour, MaxElapsed: 72 * time.Hour}) ||
		a.RequestTimeout != 3*time.Second || a.Workers != DefaultAutomations().Workers || a.AlertInterval != time.Minute {
		t.Fatalf("automations = %+v", a)
	}
	nets, err := a.Networks()
	if err != nil || len(nets) != 2 || nets[0] != netip.MustParsePrefix("127.0.0.0/8") || nets[1] != netip.MustParsePrefix("::1/128") {
		t.Fatalf("networks = %v, %v", nets, err)
	}
	if cfg.KeyFile() != filepath.Join("/d", "secrets.key") {
		t.Fatalf("key file %s", cfg.KeyFile())
	}
	for body, key := range map[string]string{
		"automations:\n  allowed_networks: [localhost]\n":                   "automations.allowed_networks",
		"automations:\n  retry: {initial_interval: 0s}\n":                   "automations.retry.initial_interval",
		"automations:\n  retry: {initial_interval: 2h, max_interval: 1h}\n": "automations.retry.max_interval",
		"automations:\n  retry: {initial_interval: 1s, max_elapsed: 1ms}\n": "automations.retry.max_elapsed",
		"automations:\n  request_timeout: 0s\n":                             "automations.request_timeout",
		"automations:\n  workers: 0\n":                                      "workers",
		"automations:\n  events_topic: \"\"\n":                              "automations.events_topic",
		"automations:\n  retries: 3\n":                                      "retries",
		"automations:\n  alert_interval: 500ms\n":                           "automations.alert_interval",
		"automations:\n  public_url: weft.example.com\n":                    "automations.public_url",
	} {
		if _, err := Load([]string{"--config", writeFile(t, body)}, env(nil)); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%q: error %v, want one naming %s", body, err, key)
		}
	}
}
