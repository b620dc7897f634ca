// Package turn orchestrates one consultation turn: it validates the
// request (nested-turn marker, workspace, prompt size, model id), binds a
// session, runs the backend under its verified profile, and turns the
// backend's result or failure into an [Outcome] whose every text field has
// been redacted before it was bounded.
//
// Governance and consent run before [Runner.Run] (in the MCP tool handler,
// which owns the elicitation exchange); Run receives the approved model and
// makes the backend refuse any other.
package turn
