// Package doctor reports measured facts about this installation: each
// backend's CLI path, version, login state (metadata probes only: no
// prompt is ever sent), the result of a metadata-only profile
// verification where the backend supports one, and how backend process
// trees are contained on this host. Nothing here is a hard-coded claim
// (contract.md §5 fixed: report measured facts instead).
package doctor

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/upstream"
	"github.com/coagent8/coagent8/internal/version"
)

// Report is doctor's structured result.
type Report struct {
	SchemaVersion     int            `json:"schemaVersion"`
	Version           string         `json:"version"`
	Platform          string         `json:"platform"`
	Status            string         `json:"status"` // operational | partially_configured | degraded_no_active_backends
	InstalledBackends []string       `json:"installed_backends"`
	ReadyBackends     []string       `json:"ready_backends"`
	EffectiveDefault  *string        `json:"effectiveDefault"`
	Backends          []Backend      `json:"backends"`
	StateDir          string         `json:"stateDir"`
	Sections          map[string]any `json:"sections,omitempty"`
	// Containment says per backend which containment its read-only
	// turns get on this host and why; absent when not supplied.
	Containment     []Containment `json:"containment,omitempty"`
	Recommendations []string      `json:"recommendations,omitempty"`
	// Warnings name test seams set in this process's environment that
	// weaken a guarantee (today [upstream.UnsafeVar]); absent when
	// none is set.
	Warnings []string `json:"warnings,omitempty"`
}

// Backend is one backend's section.
type Backend struct {
	adapter.Probe
	// ReadOnlyVerified reports whether a metadata-only run verified the
	// read-only profile from the CLI's own report just now.
	ReadOnlyVerified bool                `json:"readOnlyVerified"`
	Verification     string              `json:"verification,omitempty"`
	ResolvedModel    string              `json:"resolvedModel,omitempty"`
	VerifyError      *adapter.ProbeError `json:"verifyError,omitempty"`
	// APIKeyWithheld names provider key variables that are set but not
	// passed to this backend's CLI because API-key billing is off for it
	// (COAGENT8_API_KEY_BILLING); APIKeyNote says so in words. Names only,
	// never values (issue 19 item 10).
	APIKeyWithheld []string `json:"apiKeyWithheld,omitempty"`
	APIKeyNote     string   `json:"apiKeyNote,omitempty"`
}

// Options configure a doctor run.
type Options struct {
	Env      config.Env
	Backends []adapter.Backend
	// Default is the user's configured default backend ("" = none).
	Default string
	// Sections are extra named sections (governance limits, sandbox
	// qualification, ...) supplied by their owners, reported as they are.
	Sections map[string]any
	// Refusal is the configuration's refusal of every turn
	// (config.File.GovernanceErr: a POLICY_DENIED *fault.Error), nil when
	// the configuration is in force. Its message leads the
	// recommendations.
	Refusal error
	// Containment, if set, returns the containment section (the
	// governor's decision per backend).
	Containment func(context.Context) []Containment
}

// Run probes every backend concurrently and returns the redacted report.
func Run(ctx context.Context, o Options) Report {
	r := Report{SchemaVersion: 1, Version: version.String(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		Sections: o.Sections}
	r.Backends = make([]Backend, len(o.Backends))
	var wg sync.WaitGroup
	for i, b := range o.Backends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Backends[i] = probe(ctx, b)
			r.Backends[i].APIKeyWithheld = o.Env.StrippedKeys(b.Name())
			r.Backends[i].APIKeyNote = o.Env.StrippedKeysHint(b.Name())
		}()
	}
	if o.Containment != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Containment = o.Containment(ctx)
		}()
	}
	wg.Wait()
	summarise(&r, o.Default)
	r.Recommendations = append(r.Recommendations, containmentAdvice(r.Containment)...)
	if msg := refusal(o.Refusal); msg != "" {
		// Fixing the backends first would not help: every turn is refused
		// until the configuration is fixed, so that comes first.
		r.Recommendations = append([]string{msg + " Fix it, then run doctor again."}, r.Recommendations...)
	}
	r.Warnings = warnings(o.Env)
	red := redact.NewDiagnostic(o.Env.Home())
	r.StateDir = red.String(o.Env.StateDir())
	return scrub(r, red)
}

// refusal is the configuration refusal as a sentence ("" for nil): a
// fault's public message; another error is named only as a refusal, since
// its text is not known to be safe to show.
func refusal(err error) string {
	if err == nil {
		return ""
	}
	var fe *fault.Error
	msg := ""
	if errors.As(err, &fe) {
		msg = strings.TrimSpace(fe.Message)
	}
	if msg == "" {
		return "The configuration refuses every turn (see sections.governance)."
	}
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}

func probe(ctx context.Context, b adapter.Backend) Backend {
	out := Backend{Probe: b.Probe(ctx)}
	out.Searched = dedupe(out.Searched)
	out.Error = withPathHint(out.Backend, tidyNotFound(out.Error))
	v, ok := b.(adapter.Resolver)
	if !ok || !out.Supported {
		return out
	}
	dir, err := os.MkdirTemp("", "coagent8-doctor-")
	if err != nil {
		return out
	}
	defer os.RemoveAll(dir)
	res, err := v.Resolve(ctx, dir, "")
	if err != nil {
		out.VerifyError = probeError(err)
		return out
	}
	out.ReadOnlyVerified, out.Verification, out.ResolvedModel = true, res.Verified, res.Model
	return out
}

func summarise(r *Report, def string) {
	r.InstalledBackends, r.ReadyBackends = []string{}, []string{} // [] in JSON, never null
	for _, b := range r.Backends {
		if b.Installed {
			r.InstalledBackends = append(r.InstalledBackends, b.Backend)
		}
		if ready(b) {
			r.ReadyBackends = append(r.ReadyBackends, b.Backend)
		}
	}
	sort.Strings(r.InstalledBackends)
	sort.Strings(r.ReadyBackends)
	switch {
	case len(r.ReadyBackends) == 0:
		r.Status = "degraded_no_active_backends"
		r.Recommendations = append(r.Recommendations, advice(r.Backends)...)
	case len(r.ReadyBackends) < len(r.Backends):
		r.Status = "partially_configured"
	default:
		r.Status = "operational"
	}
	if def != "" {
		r.EffectiveDefault = &def
	} else if len(r.ReadyBackends) == 1 {
		r.EffectiveDefault = &r.ReadyBackends[0]
	}
	if len(r.ReadyBackends) > 1 && def == "" {
		r.Recommendations = append(r.Recommendations, "Several backends are ready: set defaultBackend in the coagent8 configuration or pass backend on each call.")
	}
}

// warnings reports the unsafe test seams set in env. The value itself is
// not echoed beyond its parsed origin: it names a local process only.
func warnings(env config.Env) []string {
	v := env.Get(upstream.UnsafeVar)
	if v == "" {
		return nil
	}
	u, err := upstream.ParseUnsafe(v)
	if err != nil {
		return []string{upstream.UnsafeVar + " is set but invalid, so delegate jobs refuse to start: " + err.Error()}
	}
	return []string{upstream.UnsafeVar + " is set (a test seam): delegate jobs send the real " + u.Provider +
		" credential in the clear to the local process at " + u.Origin + " instead of the provider. Unset it outside tests."}
}
