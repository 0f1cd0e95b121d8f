package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"gds/api/admin"
)

// The deployment examples in deploy/ are checked as far as this machine
// can: every gds command line they run, with the environment they give it,
// is parsed by gds serve's own flag parsing and has the role it claims
// (the indexer publishes, replicas follow); the operator port beyond
// loopback has its token; the Kubernetes objects reference each other
// consistently (probes, ports, labels, ConfigMap and Secret keys);
// systemd-analyze verify accepts the units when it is installed. Not
// tried: systemd running them, a Kubernetes API server, a cloud bucket
// (docs/fleet.md).

const deployDir = "../../deploy"

func TestFleetDeploySystemd(t *testing.T) {
	env := readEnvFile(t, filepath.Join(deployDir, "systemd", "gds.env.example"))
	for unit, role := range map[string]string{"gds-indexer.service": "indexer", "gds-replica.service": "replica"} {
		t.Run(unit, func(t *testing.T) {
			path := filepath.Join(deployDir, "systemd", unit)
			exec := unitExecStart(t, path)
			args := make([]string, len(exec))
			for i, a := range exec {
				args[i] = os.Expand(a, func(k string) string {
					v, ok := env[k]
					if !ok {
						t.Errorf("%s: ExecStart names $%s, which gds.env.example does not set", unit, k)
					}
					return v
				})
			}
			if args[0] != "/usr/local/bin/gds" || args[1] != "serve" {
				t.Fatalf("ExecStart %q: want /usr/local/bin/gds serve", args)
			}
			checkServe(t, role, args[2:], func(k string) string { return env[k] })
		})
	}

	verify, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze not installed: units not verified by systemd")
		return
	}
	// verify checks ExecStart's binary exists: point the copies at this
	// package's build of gds.
	dir := t.TempDir()
	var units []string
	for _, unit := range []string{"gds-indexer.service", "gds-replica.service"} {
		raw, err := os.ReadFile(filepath.Join(deployDir, "systemd", unit))
		if err != nil {
			t.Fatal(err)
		}
		units = append(units, filepath.Join(dir, unit))
		raw = bytes.ReplaceAll(raw, []byte("/usr/local/bin/gds"), []byte(faultBinary(t)))
		if err := os.WriteFile(units[len(units)-1], raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(verify, append([]string{"verify"}, units...)...).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// unitExecStart returns the words of a unit's ExecStart (continuation
// lines joined, double quotes grouping).
func unitExecStart(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.ReplaceAll(string(raw), "\\\n", " ")
	for _, line := range strings.Split(joined, "\n") {
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			var words []string
			for _, m := range regexp.MustCompile(`"([^"]*)"|(\S+)`).FindAllStringSubmatch(v, -1) {
				words = append(words, m[1]+m[2])
			}
			return words
		}
	}
	t.Fatalf("%s has no ExecStart", path)
	return nil
}

// readEnvFile reads KEY=VALUE lines as systemd's EnvironmentFile does.
func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: %q is not KEY=VALUE", path, line)
		}
		env[k] = v
	}
	return env
}

// checkServe parses a gds serve command line as gds does and checks it
// has the role: an indexer builds from a snapshot and publishes, a replica
// follows and builds nothing.
func checkServe(t *testing.T, role string, args []string, getenv func(string) string) {
	t.Helper()
	var stderr bytes.Buffer
	c, err := parseServeConfig(&Env{Getenv: getenv, Stdout: io.Discard, Stderr: &stderr}, args)
	if err != nil {
		t.Fatalf("gds serve %q: %v\n%s", args, err, stderr.String())
	}
	switch role {
	case "indexer":
		if c.Snapshot == "" || c.Fleet.Publish == "" || c.Fleet.Follow != "" {
			t.Errorf("indexer: snapshot %q, publish %q, follow %q", c.Snapshot, c.Fleet.Publish, c.Fleet.Follow)
		}
	case "replica":
		if c.Fleet.Follow == "" || c.Fleet.Publish != "" || c.Snapshot != "" {
			t.Errorf("replica: follow %q, publish %q, snapshot %q", c.Fleet.Follow, c.Fleet.Publish, c.Snapshot)
		}
	}
	if err := admin.CheckExposure(c.AdminAddr, c.AdminToken); err != nil {
		t.Error(err)
	}
}

// k8sObject is the part of a Kubernetes object the checks read.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		Replicas *int             `yaml:"replicas"`
		Selector k8sSelector      `yaml:"selector"`
		Ports    []k8sServicePort `yaml:"ports"`
		Template k8sPodTemplate   `yaml:"template"`
	} `yaml:"spec"`
}

type k8sSelector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
	Extra       map[string]string `yaml:",inline"` // a Service's selector is the labels themselves
}

type k8sServicePort struct {
	Port       int    `yaml:"port"`
	TargetPort string `yaml:"targetPort"`
}

type k8sPodTemplate struct {
	Metadata struct {
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Spec struct {
		ServiceAccountName string `yaml:"serviceAccountName"`
		SecurityContext    struct {
			RunAsNonRoot bool `yaml:"runAsNonRoot"`
			RunAsUser    int  `yaml:"runAsUser"`
			RunAsGroup   int  `yaml:"runAsGroup"`
			FSGroup      int  `yaml:"fsGroup"`
		} `yaml:"securityContext"`
		Containers []k8sContainer `yaml:"containers"`
		Volumes    []struct {
			Name string `yaml:"name"`
		} `yaml:"volumes"`
	} `yaml:"spec"`
}

type k8sContainer struct {
	Image string   `yaml:"image"`
	Args  []string `yaml:"args"`
	Env   []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			ConfigMapKeyRef *k8sKeyRef `yaml:"configMapKeyRef"`
			SecretKeyRef    *k8sKeyRef `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	ReadinessProbe *k8sProbe `yaml:"readinessProbe"`
	LivenessProbe  *k8sProbe `yaml:"livenessProbe"`
	StartupProbe   *k8sProbe `yaml:"startupProbe"`
	VolumeMounts   []struct {
		Name string `yaml:"name"`
	} `yaml:"volumeMounts"`
}

type k8sKeyRef struct {
	Name string `yaml:"name"`
	Key  string `yaml:"key"`
}

type k8sProbe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

func TestFleetDeployKubernetes(t *testing.T) {
	// The user the image runs as (make image), which the pods must name.
	containerfile, err := os.ReadFile(filepath.Join(deployDir, "image", "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	imageUser := regexp.MustCompile(`(?m)^USER .*$`).FindString(string(containerfile))
	f, err := os.Open(filepath.Join(deployDir, "kubernetes", "gds-fleet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	objs := map[string]*k8sObject{}
	dec := yaml.NewDecoder(f)
	for {
		var o k8sObject
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if o.Kind == "" || o.Metadata.Name == "" {
			t.Fatalf("an object without kind or name: %+v", o)
		}
		objs[o.Kind] = &o
	}
	for _, kind := range []string{"ServiceAccount", "ConfigMap", "StatefulSet", "Deployment", "Service"} {
		if objs[kind] == nil {
			t.Fatalf("no %s in the manifest", kind)
		}
	}
	if r := objs["StatefulSet"].Spec.Replicas; r == nil || *r != 1 {
		t.Errorf("the indexer StatefulSet has replicas %v: one publisher per bucket", r)
	}
	config := objs["ConfigMap"].Data
	for kind, role := range map[string]string{"StatefulSet": "indexer", "Deployment": "replica"} {
		o := objs[kind]
		tpl := o.Spec.Template
		if !subset(o.Spec.Selector.MatchLabels, tpl.Metadata.Labels) || len(o.Spec.Selector.MatchLabels) == 0 {
			t.Errorf("%s: selector %v does not select its pods %v", kind, o.Spec.Selector.MatchLabels, tpl.Metadata.Labels)
		}
		if tpl.Spec.ServiceAccountName != objs["ServiceAccount"].Metadata.Name {
			t.Errorf("%s: service account %q", kind, tpl.Spec.ServiceAccountName)
		}
		if len(tpl.Spec.Containers) != 1 {
			t.Fatalf("%s: %d containers", kind, len(tpl.Spec.Containers))
		}
		c := tpl.Spec.Containers[0]
		if sc := tpl.Spec.SecurityContext; !sc.RunAsNonRoot || fmt.Sprintf("USER %d:%d", sc.RunAsUser, sc.RunAsGroup) != imageUser ||
			sc.FSGroup != sc.RunAsGroup {
			t.Errorf("%s: securityContext %+v, want non-root as the image's %q, fsGroup its group (the volume)", kind, sc, imageUser)
		}
		if !strings.HasPrefix(c.Image, "registry.example.net/gds:v") {
			t.Errorf("%s: image %q, want a version tag of gds (make image)", kind, c.Image)
		}
		env := map[string]string{}
		for _, e := range c.Env {
			switch {
			case e.ValueFrom == nil:
				env[e.Name] = e.Value
			case e.ValueFrom.ConfigMapKeyRef != nil:
				ref := e.ValueFrom.ConfigMapKeyRef
				v, ok := config[ref.Key]
				if ref.Name != objs["ConfigMap"].Metadata.Name || !ok {
					t.Errorf("%s: %s from ConfigMap %s key %s, which the manifest lacks", kind, e.Name, ref.Name, ref.Key)
				}
				env[e.Name] = v
			case e.ValueFrom.SecretKeyRef != nil:
				env[e.Name] = "secret-" + e.ValueFrom.SecretKeyRef.Key // created by kubectl, as the header says
			}
		}
		if len(c.Args) == 0 || c.Args[0] != "serve" {
			t.Fatalf("%s: args %q", kind, c.Args)
		}
		checkServe(t, role, c.Args[1:], func(k string) string { return env[k] })
		ports := map[string]bool{}
		for _, p := range c.Ports {
			ports[p.Name] = true
		}
		for name, p := range map[string]*k8sProbe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe, "startup": c.StartupProbe} {
			if p == nil {
				continue
			}
			if p.HTTPGet == nil || !ports[p.HTTPGet.Port] || (p.HTTPGet.Path != "/readyz" && p.HTTPGet.Path != "/healthz") {
				t.Errorf("%s: %s probe %+v: want GET /readyz or /healthz on a declared port", kind, name, p.HTTPGet)
			}
		}
		if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" {
			t.Errorf("%s: readiness is not GET /readyz", kind)
		}
		vols := map[string]bool{}
		for _, v := range tpl.Spec.Volumes {
			vols[v.Name] = true
		}
		for _, m := range c.VolumeMounts {
			if kind == "Deployment" && !vols[m.Name] {
				t.Errorf("%s mounts volume %q it does not declare", kind, m.Name)
			}
		}
	}
	svc := objs["Service"]
	pods := objs["Deployment"].Spec.Template
	if !subset(svc.Spec.Selector.Extra, pods.Metadata.Labels) || len(svc.Spec.Selector.Extra) == 0 {
		t.Errorf("Service selects %v, the replicas are %v", svc.Spec.Selector.Extra, pods.Metadata.Labels)
	}
	for _, p := range svc.Spec.Ports {
		found := false
		for _, cp := range pods.Spec.Containers[0].Ports {
			found = found || cp.Name == p.TargetPort
		}
		if !found {
			t.Errorf("Service port %d targets %q, which the replicas do not declare", p.Port, p.TargetPort)
		}
	}
}

func subset(a, b map[string]string) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
