package cli

import (
	"errors"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/secret"
)

// gateCredentials returns config.json's gate.credentials: the one
// reference the gate may resolve per provider (issue 18 scope 3, R-101).
// An absent section declares nothing (every grant is then refused). A
// configuration holding a literal credential anywhere, an unusable gate
// section or a malformed reference is an INVALID_INPUT *fault.Error
// naming the key path; the gate then neither grants nor serves.
func (a *app) gateCredentials() (map[gate.Provider]secret.Ref, error) {
	f, _ := config.LoadFile(a.env.ConfigPath())
	raw, err := f.GateCredentials()
	var ke *config.KeyError
	switch {
	case errors.As(err, &ke):
		return nil, credentialsErr(ke.Key, ke.Problem, err)
	case fault.From(err) != nil && fault.From(err).Reason == "config.literal_credential":
		return nil, err
	case err != nil:
		return nil, credentialsErr("gate.credentials", "the configuration file cannot be read, so no credential is declared", err)
	}
	out := map[gate.Provider]secret.Ref{}
	for name, s := range raw {
		key := "gate.credentials." + name
		p, err := gate.ParseProvider(name)
		if err != nil {
			return nil, credentialsErr(key, "unknown provider", err)
		}
		ref, err := secret.ParseRef(s)
		if err != nil {
			return nil, credentialsErr(key, "must be env:NAME or file:/abs/path (a clean absolute path)", err)
		}
		out[p] = ref
	}
	return out, nil
}

func credentialsErr(key, problem string, cause error) error {
	return fault.Wrap(fault.InvalidInput, "config.gate", "config.json key "+key+": "+problem, cause).With("key", key)
}

// gateIntermediaries returns config.json's gate.intermediaries: the
// forward proxy per provider the gate routes through (issue 18 scope 5;
// the gate validates each origin and binds it into every decision). A
// problem is an INVALID_INPUT *fault.Error naming the key path.
func (a *app) gateIntermediaries() (map[gate.Provider]string, error) {
	f, _ := config.LoadFile(a.env.ConfigPath())
	raw, err := f.GateIntermediaries()
	var ke *config.KeyError
	switch {
	case errors.As(err, &ke):
		return nil, credentialsErr(ke.Key, ke.Problem, err)
	case err != nil:
		return nil, err // GateCredentials, read first, named the cause
	}
	out := map[gate.Provider]string{}
	for name, origin := range raw {
		out[gate.Provider(name)] = origin
	}
	return out, nil
}
