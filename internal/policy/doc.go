// Package policy decides whether a model may run: allow, ask the user, or
// deny. It implements the model cost governance of the project security
// profile (seed 000 §2; requirements) as one pure
// function, [Decide].
//
// # Order
//
// Per turn: resolve the concrete model (the backend's default when the
// caller names none) → the user's lists, deny > ask > allow → price rules.
// An unlisted model runs unasked only if its output price is known from an
// exact catalog match and is strictly below both governance.askAbovePrice
// and governance.priceMultiplier × the price of its backend's default model.
// Everything else is asked; only an unpriced or approximately priced model
// may be remembered (added to governance.models.allow).
//
// # Non-goals
//
// Prices are approximate public API prices used only to decide whether to
// ask; nothing here is billing or a statement about a model's
// safety. Asking the user is internal/consent's job; reading the config and
// the price catalog belongs to internal/config and internal/price.
//
// # Security model
//
// Default deny: the zero [Effect] is [Deny], an unresolved or malformed
// model id is denied, and every branch sets a specific Reason. The package
// does no I/O (no network, database or filesystem) so the decision cannot
// depend on anything but its inputs; a test enforces the import set.
package policy
