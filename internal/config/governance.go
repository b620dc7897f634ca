package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"math/big"
	"regexp"
	"slices"
	"sync"

	"github.com/coagent8/coagent8/internal/policy"
)

// parseGovernance validates the governance section: only the keys
// models, askAbovePrice and priceMultiplier; only the lists allow, ask and
// deny of valid model ids; limits as JSON numbers, askAbovePrice ≥ 0,
// priceMultiplier > 0. Nothing is defaulted past an error.
func (f *File) parseGovernance(top map[string]json.RawMessage) error {
	raw, ok := top["governance"]
	if !ok {
		return nil
	}
	rules, err := governanceRules(raw)
	if err != nil {
		var ke *KeyError
		key, problem := "governance", err.Error()
		if errors.As(err, &ke) {
			key, problem = ke.Key, ke.Problem
		}
		f.Governance = policy.Rules{}
		f.governanceErr = governanceFault(key, problem, err)
		return err
	}
	f.Governance = rules
	return nil
}

func governanceRules(raw json.RawMessage) (policy.Rules, error) {
	var g map[string]json.RawMessage
	if strictUnmarshal(raw, &g) != nil || g == nil {
		return policy.Rules{}, keyErr("governance", "must be an object")
	}
	var c policy.RulesConfig
	for _, k := range slices.Sorted(maps.Keys(g)) {
		v := g[k]
		var err error
		switch k {
		case "models":
			err = parseLists(v, &c)
		case "askAbovePrice":
			c.AskAbovePrice, err = parseNumber("governance.askAbovePrice", v)
		case "priceMultiplier":
			c.PriceMultiplier, err = parseNumber("governance.priceMultiplier", v)
		default:
			err = keyErr("governance."+k, "unknown key")
		}
		if err != nil {
			return policy.Rules{}, err
		}
	}
	r, err := policy.NewRules(c)
	var pe *policy.KeyError
	if errors.As(err, &pe) {
		return policy.Rules{}, keyErr(pe.Key, pe.Problem)
	}
	return r, err
}

func parseLists(raw json.RawMessage, c *policy.RulesConfig) error {
	var m map[string]json.RawMessage
	if strictUnmarshal(raw, &m) != nil || m == nil {
		return keyErr("governance.models", "must be an object with allow, ask and deny lists")
	}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		v := m[name]
		var dst *[]string
		switch name {
		case "allow":
			dst = &c.Allow
		case "ask":
			dst = &c.Ask
		case "deny":
			dst = &c.Deny
		default:
			return keyErr("governance.models."+name, "unknown list name (use allow, ask or deny)")
		}
		if strictUnmarshal(v, dst) != nil || *dst == nil {
			return keyErr("governance.models."+name, "must be a list of model id strings")
		}
	}
	return nil
}

// Patterns compile on first use (sync.OnceValue), not at package init,
// which every coagent8 process start pays, the sandbox helper included
// (issue 8 performance).
// numberRE admits plain JSON numbers with small exponents: big.Rat would
// otherwise expand 1e999999999.
var numberRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^-?[0-9]{1,15}(\.[0-9]{1,15})?([eE][-+]?[0-9]{1,2})?$`)
})

func parseNumber(key string, raw json.RawMessage) (*big.Rat, error) {
	// json.Number also accepts a quoted number; a string is not a number here.
	var n json.Number
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] == '"' ||
		strictUnmarshal(raw, &n) != nil || !numberRE().MatchString(n.String()) {
		return nil, keyErr(key, "must be a JSON number")
	}
	r, ok := new(big.Rat).SetString(n.String())
	if !ok {
		return nil, keyErr(key, "must be a number")
	}
	return r, nil
}
