// Package price is coagent8's model price catalog: OpenRouter's public model
// list (GET https://openrouter.ai/api/v1/models), parsed exactly, matched
// to the model ids the backends use, and cached with its date
// (governance-and-consent.md §3–§5; ).
//
// # Sources
//
// In order of preference: the cache file written by `coagent8 prices
// refresh` ([Refresh], [Catalog.Save]); else the embedded snapshot
// ([Embedded]), a small hand-compiled, dated copy of the list covering the
// Anthropic, OpenAI and Google models relevant to Claude Code, Codex and
// agy, in OpenRouter's format. Entries that carry a provider's published
// list price instead of a copy of OpenRouter's (the current models of the
// pinned CLIs, which no offline copy of the list priced) name their page
// in "_source"; models with no price found are left out and listed in the
// snapshot's metadata, never guessed. The snapshot is never presented as
// live. A cache that is not valid
// is ignored and reported ([Load]); a failed refresh never replaces the last
// good catalog.
//
// # Units and exactness
//
// OpenRouter's pricing.completion is a decimal string in USD per token. It
// is parsed with math/big (no float rounding) and multiplied by 10^6 to give
// USD per million output tokens. "-1" (variable), negative, empty or
// non-numeric prices are treated as unknown, never as zero.
//
// # Matching
//
// An id is an exact match when author/id (author from the backend: claude →
// anthropic, codex → openai, agy by the model's family) equals a catalog id
// or canonical_slug after lowercasing. Any normalisation — dots vs dashes,
// a dated suffix, a routing variant such as :nitro — makes the match
// approximate; [Catalog.Quote] records which.
//
// # Non-goals
//
// Prices decide only whether to ask the user; they are not billing, cost
// accounting or a statement about a model's safety. LiteLLM's list
// is not read.
package price
