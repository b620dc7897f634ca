package codex

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/BurntSushi/toml"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact"
)

// maxConfigBytes bounds the user's config.toml read (a Codex config is a
// few KiB; anything far larger is not a config file).
const maxConfigBytes = 4 << 20

// userConfig is what coagent8 needs from the user's Codex config.toml,
// read with a real TOML parser (AUD-P1-11: the original used a regex, so a
// commented `# model = "o3"` or a nested `review_model` changed the model).
// The model is never taken from here: the CLI reports it (config/read,
// thread result).
type userConfig struct {
	// Path is the config.toml path ("" when CODEX_HOME has none).
	Path string
	// Servers are the MCP server names under [mcp_servers], sorted.
	Servers []string
	// EnvKey is the env_key of the top-level model_provider's
	// [model_providers.<id>] table, "" if none.
	EnvKey string
}

// tomlConfig is the decoded subset; unknown keys are ignored on purpose.
type tomlConfig struct {
	ModelProvider  string                    `toml:"model_provider"`
	MCPServers     map[string]toml.Primitive `toml:"mcp_servers"`
	ModelProviders map[string]struct {
		EnvKey string `toml:"env_key"`
	} `toml:"model_providers"`
}

// codexHome returns $CODEX_HOME, else ~/.codex (the CLI's own rule).
func codexHome(env config.Env) string {
	if v := env.Get("CODEX_HOME"); v != "" {
		return filepath.Clean(v)
	}
	return filepath.Join(env.Home(), ".codex")
}

// readUserConfig reads <home>/config.toml. A missing file means no
// servers; an unreadable home or file, or malformed TOML, refuses the
// turn (SANDBOX_UNAVAILABLE, reason codex.config): without the server
// list the profile cannot be proven. The file is only ever read.
func readUserConfig(env config.Env, home string) (userConfig, error) {
	if _, err := os.ReadDir(home); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return userConfig{}, configError(env, home, "CODEX_HOME is not readable", err)
	}
	path := filepath.Join(home, "config.toml")
	b, err := readBounded(path)
	if errors.Is(err, fs.ErrNotExist) {
		return userConfig{}, nil
	}
	if err != nil {
		return userConfig{}, configError(env, path, "cannot read", err)
	}
	return parseUserConfig(env, path, b)
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err == nil && len(b) > maxConfigBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxConfigBytes)
	}
	return b, err
}

// parseUserConfig decodes b (the contents of path).
func parseUserConfig(env config.Env, path string, b []byte) (userConfig, error) {
	var tc tomlConfig
	if _, err := toml.Decode(string(b), &tc); err != nil {
		return userConfig{}, configError(env, path, tomlWhere(err), err)
	}
	uc := userConfig{Path: path}
	for name := range tc.MCPServers {
		uc.Servers = append(uc.Servers, name)
	}
	sort.Strings(uc.Servers)
	if p, ok := tc.ModelProviders[tc.ModelProvider]; ok && tc.ModelProvider != "" {
		uc.EnvKey = p.EnvKey
	}
	return uc, nil
}

// tomlWhere renders the parse position ("malformed TOML at line 3, column
// 5: ...") from the parser's own error.
func tomlWhere(err error) string {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("malformed TOML at line %d, column %d: %s", pe.Position.Line, pe.Position.Col, pe.Message)
	}
	return "malformed TOML: " + err.Error()
}

// configError names the file (home shown as ~) and refuses the turn.
func configError(env config.Env, path, what string, err error) error {
	shown := redact.NewDiagnostic(env.Home()).String(path)
	return fault.Wrap(fault.SandboxUnavailable, "codex.config",
		fmt.Sprintf("Codex configuration %s: %s; the turn was refused (coagent8 never rewrites this file).", shown, what), err)
}
