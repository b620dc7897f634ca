package config

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// gateProviders are the providers a credential can be declared for.
var gateProviders = []string{"anthropic", "openai"}

// parseGate reads the "gate" section: {"credentials": {"<provider>":
// "<reference>"}} (issue 18 scope 3, R-101) and {"intermediaries":
// {"<provider>": "<proxy origin>"}} (scope 5; the gate validates the
// origin). Each value must be a
// secret reference (env:NAME or file:/abs/path; internal/secret checks
// the exact syntax at the consumer); unknown keys and providers are
// refused. Any problem makes [File.GateCredentials] fail: the gate then
// resolves nothing.
func (f *File) parseGate(top map[string]json.RawMessage) error {
	raw, ok := top["gate"]
	if !ok {
		return nil
	}
	creds, err := parseGateSection(raw)
	if err == nil {
		f.gateHops, err = parseGateIntermediaries(raw)
	}
	if err != nil {
		f.gateErr = err
		return err
	}
	f.gateCredentials = creds
	return nil
}

// parseGateIntermediaries reads gate.intermediaries: provider → the
// origin of the forward proxy its requests go through.
func parseGateIntermediaries(raw json.RawMessage) (map[string]string, error) {
	var m map[string]json.RawMessage
	strictUnmarshal(raw, &m) // parseGateSection checked the shape
	raw, ok := m["intermediaries"]
	if !ok {
		return nil, nil
	}
	var hops map[string]string
	if strictUnmarshal(raw, &hops) != nil || hops == nil {
		return nil, keyErr("gate.intermediaries", "must be an object of provider to proxy origin strings")
	}
	for _, p := range slices.Sorted(maps.Keys(hops)) {
		if !slices.Contains(gateProviders, p) {
			return nil, keyErr("gate.intermediaries."+p, "unknown provider (known: anthropic, openai)")
		}
	}
	return hops, nil
}

// GateIntermediaries returns gate.intermediaries: provider name → the
// origin of the forward proxy (an HTTPS proxy or egress relay) the gate
// sends that provider's requests through; empty when absent. It fails
// like [File.GateCredentials]. The map is a copy.
func (f File) GateIntermediaries() (map[string]string, error) {
	if f.gateErr != nil {
		return nil, f.gateErr
	}
	return maps.Clone(f.gateHops), nil
}

func parseGateSection(raw json.RawMessage) (map[string]string, error) {
	var m map[string]json.RawMessage
	if strictUnmarshal(raw, &m) != nil || m == nil {
		return nil, keyErr("gate", "must be an object")
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != "credentials" && k != "intermediaries" {
			return nil, keyErr("gate."+k, "unknown key (known: credentials, intermediaries)")
		}
	}
	raw, ok := m["credentials"]
	if !ok {
		return nil, nil
	}
	var creds map[string]string
	if strictUnmarshal(raw, &creds) != nil || creds == nil {
		return nil, keyErr("gate.credentials", "must be an object of provider to reference strings")
	}
	for _, p := range slices.Sorted(maps.Keys(creds)) {
		key := "gate.credentials." + p
		switch v := creds[p]; {
		case !slices.Contains(gateProviders, p):
			return nil, keyErr(key, "unknown provider (known: anthropic, openai)")
		case !strings.HasPrefix(v, "env:") && !strings.HasPrefix(v, "file:"):
			return nil, keyErr(key, "must be a reference env:NAME or file:/abs/path, never the credential itself")
		}
	}
	return creds, nil
}

// GateCredentials returns gate.credentials: provider name → secret
// reference string, the only credentials the provider gate may resolve,
// each only for its provider. It is empty when the section is
// absent; it returns an error naming the key when the section, or the
// file, is unusable (the gate then refuses to grant or forward). The map
// is a copy.
func (f File) GateCredentials() (map[string]string, error) {
	if f.gateErr != nil {
		return nil, f.gateErr
	}
	return maps.Clone(f.gateCredentials), nil
}
