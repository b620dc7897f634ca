package mcpserver

import (
	"context"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Profiles (contract.md §1): a profile changes only what tools/list
// advertises; every registered tool stays callable in either profile.
const (
	Canonical = "canonical"
	Compact   = "compact"
)

// The deprecated aliases (analyze, debug, implement) are in no profile:
// they stay callable, but hosts that search tools by name returned them
// ahead of review (issue 19 item 17).
var profiles = map[string][]string{
	Canonical: {"consult", "review", "delegate", "request_admission", "doctor", "session", "cancel", "issue"},
	Compact:   {"run", "doctor", "session", "cancel"},
}

// advertised lists the tools of a profile; anything but "compact" is
// canonical (the configuration loader reports a bad value).
func advertised(profile string) []string {
	if profile == Compact {
		return profiles[Compact]
	}
	return profiles[Canonical]
}

// listFilter is receiving middleware that drops the tools a profile does
// not advertise from tools/list results. The SDK only calls registered
// tools, so hiding (not unregistering) keeps them callable.
func listFilter(profile string) mcp.Middleware {
	show := advertised(profile)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			list, ok := res.(*mcp.ListToolsResult)
			if err != nil || method != "tools/list" || !ok {
				return res, err
			}
			out := *list
			out.Tools = make([]*mcp.Tool, 0, len(show))
			for _, t := range list.Tools {
				if slices.Contains(show, t.Name) {
					out.Tools = append(out.Tools, t)
				}
			}
			return &out, nil
		}
	}
}
