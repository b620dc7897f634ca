package codex

import "encoding/json"

// Wire types: the subset of the app-server v2 protocol coagent8 reads or
// sends. Field names are those of `codex app-server generate-json-schema`
// for 0.169.0 (notes/backends.md §1.1), never guesses.

type clientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type initializeParams struct {
	ClientInfo clientInfo `json:"clientInfo"`
}

type initializeResult struct {
	UserAgent string `json:"userAgent"`
	CodexHome string `json:"codexHome"`
}

// threadParams is ThreadStartParams / ThreadResumeParams (ThreadID set).
// Sandbox and ApprovalPolicy are always the read-only values.
type threadParams struct {
	ThreadID       string         `json:"threadId,omitempty"`
	Cwd            string         `json:"cwd"`
	Sandbox        string         `json:"sandbox"`
	ApprovalPolicy string         `json:"approvalPolicy"`
	Ephemeral      *bool          `json:"ephemeral,omitempty"`
	Model          string         `json:"model,omitempty"`
	Config         map[string]any `json:"config"`
	ExcludeTurns   bool           `json:"excludeTurns,omitempty"`
}

// threadResult is ThreadStartResponse / ThreadResumeResponse.
// ApprovalPolicy stays raw: it is a string enum or a {"granular":…}
// object, and anything but the string "never" is refused.
type threadResult struct {
	ApprovalPolicy json.RawMessage `json:"approvalPolicy"`
	Sandbox        *sandboxPolicy  `json:"sandbox"`
	Model          string          `json:"model"`
	ModelProvider  string          `json:"modelProvider"`
	Cwd            string          `json:"cwd"`
	Thread         struct {
		ID        string `json:"id"`
		Ephemeral bool   `json:"ephemeral"`
	} `json:"thread"`
}

// sandboxPolicy is SandboxPolicy (legacy field, still the one the thread
// result carries in 0.169.0). NetworkAccess is a bool for readOnly and
// workspaceWrite, a string for externalSandbox: kept raw.
type sandboxPolicy struct {
	Type          string          `json:"type"`
	NetworkAccess json.RawMessage `json:"networkAccess"`
}

type mcpStatusParams struct {
	ThreadID string  `json:"threadId"`
	Cursor   *string `json:"cursor,omitempty"`
	Detail   string  `json:"detail,omitempty"`
}

type mcpStatusResult struct {
	Data []struct {
		Name          string  `json:"name"`
		RuntimeStatus *string `json:"runtimeStatus"`
	} `json:"data"`
	NextCursor *string `json:"nextCursor"`
}

type configReadParams struct {
	Cwd           string `json:"cwd,omitempty"`
	IncludeLayers bool   `json:"includeLayers"`
}

type configReadResult struct {
	Config struct {
		Model         *string                    `json:"model"`
		ModelProvider *string                    `json:"model_provider"`
		MCPServers    map[string]json.RawMessage `json:"mcp_servers"`
	} `json:"config"`
}

type modelListResult struct {
	Data []struct {
		ID        string `json:"id"`
		Model     string `json:"model"`
		IsDefault bool   `json:"isDefault"`
	} `json:"data"`
	NextCursor *string `json:"nextCursor"`
}

type accountResult struct {
	Account *struct {
		Type string `json:"type"`
	} `json:"account"`
	RequiresOpenaiAuth bool `json:"requiresOpenaiAuth"`
}

type userInput struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// turnStartParams never carries sandboxPolicy or approvalPolicy: a turn
// may only inherit the verified thread profile (backends.md §1.1).
type turnStartParams struct {
	ThreadID     string         `json:"threadId"`
	Input        []userInput    `json:"input"`
	Model        string         `json:"model,omitempty"`
	Effort       string         `json:"effort,omitempty"`
	OutputSchema map[string]any `json:"outputSchema,omitempty"`
}

type turnStartResult struct {
	Turn struct {
		ID string `json:"id"`
	} `json:"turn"`
}

type turnInterruptParams struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
}

// turnError is TurnError; CodexErrorInfo is a string enum or a one-key
// object ({"httpConnectionFailed":{"httpStatusCode":429}}).
type turnError struct {
	Message           string          `json:"message"`
	CodexErrorInfo    json.RawMessage `json:"codexErrorInfo"`
	AdditionalDetails *string         `json:"additionalDetails"`
}

type turnCompleted struct {
	ThreadID string `json:"threadId"`
	Turn     struct {
		ID     string     `json:"id"`
		Status string     `json:"status"`
		Error  *turnError `json:"error"`
	} `json:"turn"`
}

type agentDelta struct {
	Delta  string `json:"delta"`
	ItemID string `json:"itemId"`
	TurnID string `json:"turnId"`
}

type itemNote struct {
	TurnID string `json:"turnId"`
	Item   struct {
		Type  string  `json:"type"`
		ID    string  `json:"id"`
		Text  string  `json:"text"`
		Phase *string `json:"phase"`
	} `json:"item"`
}

type errorNote struct {
	Error     turnError `json:"error"`
	WillRetry bool      `json:"willRetry"`
	TurnID    string    `json:"turnId"`
}

type rerouted struct {
	FromModel string `json:"fromModel"`
	ToModel   string `json:"toModel"`
	Reason    any    `json:"reason"`
}

type tokenUsageNote struct {
	TokenUsage struct {
		Total struct {
			InputTokens  int64 `json:"inputTokens"`
			OutputTokens int64 `json:"outputTokens"`
		} `json:"total"`
		Last struct {
			InputTokens  int64 `json:"inputTokens"`
			OutputTokens int64 `json:"outputTokens"`
		} `json:"last"`
	} `json:"tokenUsage"`
}
