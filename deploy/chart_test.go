package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/weftdev/weft/app"
)

const chartDir = "helm/weft"

// helmBinary returns helm: WEFT_HELM (scripts/test.sh sets it), else the
// one scripts/install-helm.sh builds and caches. CI must set it.
func helmBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("WEFT_HELM"); p != "" {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatal("WEFT_HELM is unset: scripts/test.sh exports it from scripts/install-helm.sh")
	}
	out, err := exec.Command("../scripts/install-helm.sh").Output()
	if err != nil {
		t.Fatalf("scripts/install-helm.sh: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// object is one rendered Kubernetes object, as generic YAML.
type object map[string]any

func (o object) kind() string { return str(o, "kind") }
func (o object) name() string { return str(o, "metadata", "name") }

// render runs helm template with the values files and --set pairs and
// parses every document, refusing duplicate keys.
func render(t *testing.T, helm string, files []string, sets []string) ([]object, error) {
	t.Helper()
	args := []string{"template", "rel", chartDir}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(helm, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("helm %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	var objs []object
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var o object
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			t.Fatalf("rendered YAML does not parse: %v\n%s", err, out)
		}
		if o != nil {
			objs = append(objs, o)
		}
	}
}

// TestChartRendersEveryCombination renders the chart for both modes, with
// and without the ServiceMonitor and the agent example, with the default
// and a chosen image tag, and checks each object a platform team would
// review: required fields, nothing as root, probes on /health, one image
// tag for every workload, and the mode's own objects.
func TestChartRendersEveryCombination(t *testing.T) {
	helm := helmBinary(t)
	modes := []struct {
		name  string
		files []string
	}{
		{"single", nil},
		{"scaleout", []string{chartDir + "/values-scaleout.yaml"}},
	}
	for _, mode := range modes {
		for _, monitor := range []bool{false, true} {
			for _, agent := range []bool{false, true} {
				for _, tag := range []string{"", "1.2.3"} {
					sets := []string{fmt.Sprintf("metrics.serviceMonitor.enabled=%t", monitor), fmt.Sprintf("agentExample.enabled=%t", agent)}
					wantTag := app.Version
					if tag != "" {
						sets = append(sets, "image.tag="+tag)
						wantTag = tag
					}
					t.Run(fmt.Sprintf("%s/monitor=%t/agent=%t/tag=%q", mode.name, monitor, agent, tag), func(t *testing.T) {
						objs, err := render(t, helm, mode.files, sets)
						if err != nil {
							t.Fatal(err)
						}
						checkObjects(t, objs, "weft:"+wantTag)
						checkMode(t, objs, mode.name)
						if got := count(objs, "ServiceMonitor"); got != map[bool]int{false: 0, true: 1}[monitor] {
							t.Errorf("%d ServiceMonitors with serviceMonitor.enabled=%t", got, monitor)
						}
						if monitor {
							checkServiceMonitor(t, objs)
						}
						if got := count(objs, "Deployment") - map[string]int{"single": 0, "scaleout": 3}[mode.name]; got != map[bool]int{false: 0, true: 1}[agent] {
							t.Errorf("%d agent example Deployments with agentExample.enabled=%t", got, agent)
						}
					})
				}
			}
		}
	}
}

// TestChartRefusesIncompleteScaleOut checks that scale-out without Kafka,
// the ClickHouse DSN's Secret or the secrets key fails the render with a
// message that names the value to set, instead of pods that crash.
func TestChartRefusesIncompleteScaleOut(t *testing.T) {
	helm := helmBinary(t)
	full := chartDir + "/values-scaleout.yaml"
	tests := []struct {
		unset string
		want  string
	}{
		{"scaleout.kafkaBrokers=", "scaleout.kafkaBrokers"},
		{"scaleout.clickhouseDSNSecret.name=", "scaleout.clickhouseDSNSecret.name"},
		{"secrets.existingSecret=", "secrets.existingSecret"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, err := render(t, helm, []string{full}, []string{tt.unset})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("render with %s: %v, want an error naming %s", tt.unset, err, tt.want)
			}
		})
	}
}

// TestChartVersionIsWeftVersion keeps the chart's appVersion, the default
// image tag, equal to the release the binary reports.
func TestChartVersionIsWeftVersion(t *testing.T) {
	b, err := os.ReadFile(chartDir + "/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		AppVersion string `yaml:"appVersion"`
	}
	if err := yaml.Unmarshal(b, &chart); err != nil {
		t.Fatal(err)
	}
	if chart.AppVersion != app.Version {
		t.Fatalf("Chart.yaml appVersion %q, app.Version %q", chart.AppVersion, app.Version)
	}
}

// checkObjects checks what every rendering must hold.
func checkObjects(t *testing.T, objs []object, wantImage string) {
	t.Helper()
	if len(objs) == 0 {
		t.Fatal("nothing rendered")
	}
	for _, o := range objs {
		if str(o, "apiVersion") == "" || o.kind() == "" || o.name() == "" {
			t.Errorf("object without apiVersion, kind or name: %v", o)
			continue
		}
		pod := podSpec(o)
		if pod == nil {
			continue
		}
		where := o.kind() + "/" + o.name()
		if b, _ := get(pod, "securityContext", "runAsNonRoot").(bool); !b {
			t.Errorf("%s: pod securityContext.runAsNonRoot is not true", where)
		}
		if uid, ok := get(pod, "securityContext", "runAsUser").(int); !ok || uid == 0 {
			t.Errorf("%s: pod runs as user %v", where, get(pod, "securityContext", "runAsUser"))
		}
		for _, c := range list(pod, "containers") {
			cname := where + "/" + str(c, "name")
			if str(c, "image") == "" {
				t.Errorf("%s: no image", cname)
			}
			if b, ok := get(c, "securityContext", "allowPrivilegeEscalation").(bool); !ok || b {
				t.Errorf("%s: allowPrivilegeEscalation is not false", cname)
			}
			if b, _ := get(c, "securityContext", "readOnlyRootFilesystem").(bool); !b {
				t.Errorf("%s: the root filesystem is writable", cname)
			}
			if get(c, "resources", "requests", "memory") == nil || get(c, "resources", "requests", "cpu") == nil {
				t.Errorf("%s: no CPU and memory requests", cname)
			}
			if get(c, "resources", "limits", "memory") == nil {
				t.Errorf("%s: no memory limit", cname)
			}
			if !strings.HasPrefix(str(c, "image"), "weft:") {
				continue // the example's application
			}
			if str(c, "image") != wantImage {
				t.Errorf("%s: image %s, want %s like every workload", cname, str(c, "image"), wantImage)
			}
			args := list(c, "args")
			if len(args) > 0 && args[0] == "serve" {
				if str(c, "livenessProbe", "httpGet", "path") != "/health" || str(c, "startupProbe", "httpGet", "path") != "/health" {
					t.Errorf("%s: liveness and startup probes are not on /health", cname)
				}
				if str(c, "readinessProbe", "httpGet", "path") != "/ready" {
					t.Errorf("%s: readiness probe is not on /ready", cname)
				}
			}
		}
	}
}

// checkMode checks the objects that make each mode what it is.
func checkMode(t *testing.T, objs []object, mode string) {
	t.Helper()
	switch mode {
	case "single":
		if count(objs, "StatefulSet") != 1 || count(objs, "Job") != 0 {
			t.Fatalf("single: %d StatefulSets and %d Jobs, want 1 and 0", count(objs, "StatefulSet"), count(objs, "Job"))
		}
		sts := find(objs, "StatefulSet", "")
		if r, _ := get(sts, "spec", "replicas").(int); r != 1 {
			t.Errorf("single: %d replicas: the embedded store belongs to one process", r)
		}
		if str(list(sts, "spec", "volumeClaimTemplates")[0], "metadata", "name") != "data" {
			t.Error("single: no data volume claim")
		}
		c := list(podSpec(sts), "containers")[0]
		if mount := list(c, "volumeMounts")[0]; str(mount, "name") != "data" || str(mount, "mountPath") != "/var/lib/weft" {
			t.Errorf("single: data volume mounted as %v", mount)
		}
	case "scaleout":
		if count(objs, "StatefulSet") != 0 {
			t.Error("scaleout renders the embedded StatefulSet")
		}
		for _, role := range []string{"ingest", "process", "query"} {
			d := find(objs, "Deployment", "rel-weft-"+role)
			if d == nil {
				t.Fatalf("scaleout: no %s Deployment", role)
			}
			c := list(podSpec(d), "containers")[0]
			if args := list(c, "args"); len(args) < 3 || args[1] != "--roles" || args[2] != role {
				t.Errorf("%s: args %v", role, args)
			}
			checkScaleOutEnv(t, role, c)
		}
		job := find(objs, "Job", "rel-weft-migrate")
		if job == nil {
			t.Fatal("scaleout: no migrations Job")
		}
		if hook := str(job, "metadata", "annotations", "helm.sh/hook"); hook != "pre-install,pre-upgrade" {
			t.Errorf("migrations Job hook %q", hook)
		}
		c := list(podSpec(job), "containers")[0]
		if list(c, "args")[0] != "migrate" {
			t.Errorf("migrations Job runs %v", list(c, "args"))
		}
		checkScaleOutEnv(t, "migrate", c)
	}
}

// checkScaleOutEnv checks that the brokers are a value and the DSN and the
// secrets key come from Secrets, never from plain values.
func checkScaleOutEnv(t *testing.T, role string, c any) {
	t.Helper()
	env := map[string]any{}
	for _, e := range list(c, "env") {
		env[str(e, "name")] = e
	}
	if str(env["WEFT_KAFKA_BROKERS"], "value") == "" {
		t.Errorf("%s: no WEFT_KAFKA_BROKERS", role)
	}
	for _, secret := range []string{"WEFT_CLICKHOUSE_DSN", "WEFT_SECRETS_KEY"} {
		if str(env[secret], "valueFrom", "secretKeyRef", "name") == "" || get(env[secret], "value") != nil {
			t.Errorf("%s: %s is not taken from a Secret: %v", role, secret, env[secret])
		}
	}
}

func checkServiceMonitor(t *testing.T, objs []object) {
	t.Helper()
	sm := find(objs, "ServiceMonitor", "")
	ep := list(sm, "spec", "endpoints")[0]
	if str(ep, "path") != "/metrics" || str(ep, "port") != "http" {
		t.Errorf("ServiceMonitor endpoint %v", ep)
	}
	// The alert rules select job="weft": the job comes from this label.
	if label := str(sm, "spec", "jobLabel"); label != "app.kubernetes.io/name" {
		t.Errorf("ServiceMonitor jobLabel %q: the job would be each Service's name, not weft", label)
	}
	// Every Service it selects must name the port it scrapes.
	for _, o := range objs {
		if o.kind() != "Service" {
			continue
		}
		if job := str(o, "metadata", "labels", "app.kubernetes.io/name"); job != "weft" {
			t.Errorf("Service %s would be scraped as job %q, want weft", o.name(), job)
		}
		named := false
		for _, p := range list(o, "spec", "ports") {
			named = named || str(p, "name") == "http"
		}
		if !named {
			t.Errorf("Service %s has no http port to scrape", o.name())
		}
	}
}

// podSpec is the pod template's spec of a workload, nil for other kinds.
func podSpec(o object) any {
	switch o.kind() {
	case "StatefulSet", "Deployment", "Job":
		return get(o, "spec", "template", "spec")
	}
	return nil
}

func count(objs []object, kind string) int {
	n := 0
	for _, o := range objs {
		if o.kind() == kind {
			n++
		}
	}
	return n
}

// find returns the first object of kind (and name, unless empty).
func find(objs []object, kind, name string) object {
	for _, o := range objs {
		if o.kind() == kind && (name == "" || o.name() == name) {
			return o
		}
	}
	return nil
}

// get walks maps by keys; nil when a step is missing.
func get(v any, keys ...string) any {
	for _, k := range keys {
		var m map[string]any
		switch x := v.(type) {
		case object:
			m = x
		case map[string]any:
			m = x
		default:
			return nil
		}
		v = m[k]
	}
	return v
}

func str(v any, keys ...string) string {
	s, _ := get(v, keys...).(string)
	return s
}

func list(v any, keys ...string) []any {
	l, _ := get(v, keys...).([]any)
	return l
}

// TestChartLints runs helm lint --strict on the defaults and the
// scale-out values.
func TestChartLints(t *testing.T) {
	helm := helmBinary(t)
	for _, values := range []string{chartDir + "/values.yaml", chartDir + "/values-scaleout.yaml"} {
		out, err := exec.Command(helm, "lint", "--strict", chartDir, "-f", values).CombinedOutput()
		if err != nil {
			t.Errorf("helm lint --strict -f %s: %v\n%s", values, err, out)
		}
	}
}
