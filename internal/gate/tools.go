package gate

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
)

// Hosted tools. A request body can ask the provider to run a tool itself:
// Anthropic's web_search and web_fetch, or the MCP connector
// (mcp_servers); OpenAI's web_search and remote mcp. The provider then
// sends what the model writes — the agent's workspace content included —
// to parties no egress decision named: a search engine, any URL, any MCP
// server. The egress decision binds the gate → provider custody route
// only (issue 18 scopes 1 and 5), so the gate admits only tools the client
// runs itself, by an allowlist of tool types per provider, and refuses
// every other type and any mcp_servers key (request.hosted_tool). Codex
// offers the hosted web_search by default; its delegate profile turns it
// off (delegation.codexArgs).

// clientTools are, per provider, the tool types the client executes:
// exact names, or a prefix ending in "_" for Anthropic's versioned client
// tools, the prefix and a date (bash_20250124, text_editor_20250728, ...). A tool without a type
// is a custom (client) tool at both providers' APIs.
var clientTools = map[Provider][]string{
	Anthropic: {"", "custom", "bash_", "text_editor_", "computer_", "memory_"},
	OpenAI:    {"", "function", "custom", "local_shell", "shell", "apply_patch", "namespace"}, // a namespace's own tools are checked too; shell in its local mode only (toolType)
}

// hostedTool returns the first tool type of b that provider p would run
// itself ("mcp_servers" for Anthropic's MCP connector, "prompt" for an
// OpenAI stored prompt), or "" when every tool is the client's.
//
// An OpenAI "prompt" names a prompt object stored in the project, which
// holds model, instructions and tools (OpenAI's Assistants migration
// guide), hosted ones included, that the body does not show: the gate
// cannot read what it would offer, so the key is refused (red team).
func (b body) hostedTool(p Provider) string {
	if b.MCPServers {
		return "mcp_servers"
	}
	if b.Prompt && p == OpenAI {
		return "prompt"
	}
	for _, t := range b.ToolTypes {
		if !clientTool(p, t) {
			return t
		}
	}
	return ""
}

func clientTool(p Provider, t string) bool {
	for _, c := range clientTools[p] {
		if prefix, ok := strings.CutSuffix(c, "_"); ok {
			if v, ok := strings.CutPrefix(t, prefix+"_"); ok && dated(v) {
				return true
			}
		} else if t == c {
			return true
		}
	}
	return false
}

// dated reports whether v is a tool version, a date of 8 digits
// (bash_20250124): Anthropic's versioned client tools are named so, and
// a looser suffix could one day name a hosted tool (bash_code_execution
// is a code-execution sub-tool's name).
func dated(v string) bool {
	if len(v) != 8 {
		return false
	}
	for i := range len(v) {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// toolTypes returns the exact "type" of every tool in raw, a JSON array
// of objects ("" for a tool without one), each followed by the types of
// the tools it groups (an OpenAI "namespace" holds function tools in its
// own "tools"). A tool that repeats a key, or spells "type" or "tools" in
// another case, is refused: the provider reads the exact key, and the
// gate must read what it reads. raw is valid JSON (parseBody checked).
func toolTypes(raw []byte) ([]string, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var types []string
	ok, err := elements(raw, func(tool []byte) error {
		typ, nested, err := toolType(tool)
		types = append(append(types, typ), nested...)
		return err
	})
	if !ok {
		return nil, errors.New(`request body's "tools" is not an array`)
	}
	return types, err
}

// toolType reads one tool object: its type and the types of the tools it
// groups. A tool with an "environment" other than "local" is reported as
// its type and that environment's ("shell.container_auto"): OpenAI's shell
// tool is the client's only in its local mode, and runs in the provider's
// own container, whose network policy can allow any domain, with
// container_auto or container_reference (red team).
func toolType(tool []byte) (typ string, nested []string, err error) {
	env, hasEnv := "", false
	err = members(tool, func(key string, raw []byte) error {
		switch {
		case key == "type":
			if err := json.Unmarshal(raw, &typ); err != nil {
				return errors.New(`a tool's "type" is not a string`)
			}
		case key == "tools":
			var err error
			nested, err = toolTypes(raw)
			return err
		case key == "environment":
			var err error
			env, hasEnv, err = environmentType(raw)
			return err
		}
		if n := spelledOtherwise(key, "type", "tools", "environment"); n != "" {
			return errors.New("a tool spells " + n + " ambiguously")
		}
		return nil
	})
	if hasEnv && env != "local" {
		typ += "." + env // not a client tool type: refused as hosted
	}
	return typ, nested, err
}

// environmentType returns the exact "type" of a tool's environment
// object raw, and whether there is one (null is none: the local mode).
// A repeated or case-variant "type" is refused, as in toolType.
func environmentType(raw []byte) (string, bool, error) {
	if string(raw) == "null" {
		return "", false, nil
	}
	var typ string
	err := members(raw, func(key string, v []byte) error {
		switch {
		case key == "type":
			if err := json.Unmarshal(v, &typ); err != nil {
				return errors.New(`a tool environment's "type" is not a string`)
			}
		case spelledOtherwise(key, "type") != "":
			return errors.New("a tool environment spells type ambiguously")
		}
		return nil
	})
	if err != nil {
		return "", false, errors.New(`a tool's "environment" is not an object with one "type"`)
	}
	return typ, true, nil
}

// hostedToolDetail is the refusal's detail for hosted tool t: what was
// refused and, for Codex's default web search, the setting that drops it.
func hostedToolDetail(p Provider, t string) string {
	if p == OpenAI && t == "prompt" {
		return "a stored prompt would add tools and instructions the gate cannot read, beyond the gate: send them in the body"
	}
	d := "the provider would run the tool " + fault.QuoteInput(t) + " itself, beyond the gate: only tools the client runs are admitted"
	if p == OpenAI && strings.HasPrefix(t, "web_search") {
		d += ` (Codex: run it with -c web_search="disabled")`
	}
	return d
}
