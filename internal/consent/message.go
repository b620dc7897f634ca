package consent

import (
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/policy"
)

// params builds the elicitation for d: a flat form with a required boolean
// approve (no default: an omitted field is not consent) and, only for the
// rememberable class, an optional boolean remember.
func params(d policy.Decision) *mcp.ElicitParams {
	props := map[string]any{
		"approve": map[string]any{
			"type":        "boolean",
			"title":       "Run " + d.Model + " for this turn",
			"description": "Choose true to let coagent8 run this model for this one turn.",
		},
	}
	if d.Remember {
		props["remember"] = map[string]any{
			"type":        "boolean",
			"title":       "Remember this approval",
			"description": "Add " + d.Model + " to governance.models.allow in your coagent8 configuration, so it runs without asking.",
		}
	}
	schema := map[string]any{"type": "object", "properties": props, "required": []string{"approve"}}
	return &mcp.ElicitParams{Mode: "form", Message: Message(d), RequestedSchema: schema}
}

// Message returns the text the user sees (governance-and-consent.md §8):
// backend, concrete model, price or "no price known", match kind, why it
// is asked, and that the answer covers one turn.
func Message(d policy.Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "coagent8 asks before running a model. Backend: %s. Model: %s", d.Backend, d.Model)
	if d.IsDefault {
		b.WriteString(" (the backend's default)")
	}
	if d.Effort != "" {
		fmt.Fprintf(&b, ", reasoning effort %s", d.Effort)
	}
	fmt.Fprintf(&b, ". Price: %s. Why you are asked: %s. ", priceText(d), why(d))
	b.WriteString("Your answer covers this one turn only.")
	if d.Remember {
		b.WriteString(" Tick \"remember\" to add the model to governance.models.allow so it runs without asking.")
	}
	return b.String()
}

func priceText(d policy.Decision) string {
	if d.Price == nil || d.PriceMatch == policy.MatchNone {
		return "no price known"
	}
	return fmt.Sprintf("%s USD per million output tokens (approximate public API price, OpenRouter %s; %s match)",
		d.Price.FloatString(2), d.PriceID, d.PriceMatch)
}

func why(d policy.Decision) string {
	switch d.Reason {
	case policy.ReasonAskRule:
		return "it is on your governance.models.ask list, which asks on every turn"
	case policy.ReasonNoPriceData:
		return "no price data is available"
	case policy.ReasonUnpriced:
		return "no price is known for it"
	case policy.ReasonApproximate:
		return "its price is known only approximately"
	case policy.ReasonAboveLimit:
		return fmt.Sprintf("its price is at or above governance.askAbovePrice (%s USD)", ratText(d.AskAbove))
	case policy.ReasonAboveMultiplier:
		return fmt.Sprintf("its price is at or above governance.priceMultiplier (%s) times the price of the backend's default model", ratText(d.Multiplier))
	case policy.ReasonDefaultUnpriced:
		return "the backend's default model has no exact price, so governance.priceMultiplier cannot be checked"
	}
	return d.Reason
}

func ratText(r interface{ FloatString(int) string }) string {
	if r == nil {
		return "unset"
	}
	return strings.TrimRight(strings.TrimRight(r.FloatString(2), "0"), ".")
}

// denyMessage is the public message of a refusal.
func denyMessage(d policy.Decision, reason string) string {
	what := map[string]string{
		ReasonUnsupportedClient: "this MCP client cannot show an approval form (no elicitation support)",
		ReasonDeclined:          "the user declined",
		ReasonCancelled:         "the approval request was cancelled or dismissed in the host",
		ReasonNotApproved:       "the user did not approve",
		ReasonInvalidAnswer:     "the answer did not contain approve: true",
		ReasonTimeout:           "the approval request was not answered in time",
		ReasonFailed:            "the approval request failed",
		ReasonAborted:           "the call was cancelled while waiting for approval",
		ReasonInvalidState:      "the approval answer did not belong to this request",
	}[reason]
	if governor.NoWayAround(reason) {
		return fmt.Sprintf("model %s needs the user's approval and %s; nothing ran", d.Model, what)
	}
	return fmt.Sprintf("model %s needs the user's approval and %s; approve it in an interactive MCP host, "+
		"or add it to governance.models.allow in the coagent8 configuration", d.Model, what)
}
