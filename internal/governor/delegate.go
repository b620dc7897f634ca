package governor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/delegation"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/policy"
	"github.com/coagent8/coagent8/internal/secret"
	"github.com/coagent8/coagent8/internal/turn"
)

// Bounds of a delegate task (issue 16 "Bad input").
const (
	// MaxTaskBytes bounds the task text given to the delegated agent.
	MaxTaskBytes = 64 << 10
	// DefaultMaxRequests is the request budget when the caller names none.
	DefaultMaxRequests = 200
	// maxJobRequests bounds any request budget.
	maxJobRequests = 10_000
	// jobTokens bounds the tokens of a job besides its USD budget (the
	// gate wants every budget positive; the USD budget is the real one).
	jobTokens = 50_000_000
	// jobOutputCeiling is the output the gate reserves for a request that
	// names no limit (Claude Code names one; the gate's 128,000 default
	// would make any budget under 2 USD unable to cover one request).
	jobOutputCeiling = 32_000
)

// The token budgets of a job's and of a read turn's grant must each cover
// one request naming no output limit (its output ceiling), or gate.Grant
// refuses the grant (gate.budget_below_reservation) and every delegate or
// contained consult fails: converting a negative constant to uint64 does
// not compile, so lowering a budget below the ceiling fails the build.
const (
	_ = uint64(jobTokens - jobOutputCeiling)
	_ = uint64(turnTokens - jobOutputCeiling)
)

// Reasons of the delegate path's refusals.
const (
	ReasonTaskEmpty = "delegate.task_empty"
	ReasonTaskSize  = "delegate.task_size"
	// ReasonEffort refuses a reasoning effort for a job: the pinned CLIs
	// run jobs at the model's default effort, and an effort accepted but
	// not applied would be a setting the caller believes in and pays for
	// (contract.md: advertised effort defaults were never applied).
	ReasonEffort        = "delegate.effort_unsupported"
	ReasonBudgetMissing = "delegate.budget_zero"
	ReasonBudgetInvalid = "delegate.budget_invalid"
	ReasonBudgetCeiling = "delegate.budget_above_ceiling"
	ReasonBackend       = "delegate.backend_unsupported"
	ReasonBase          = "delegate.base"
	ReasonDirty         = "delegate.workspace_dirty"
	ReasonUnpriced      = "delegate.unpriced"
	ReasonConfig        = "delegate.config_invalid"
	ReasonUnavailable   = "delegate.unavailable"
	// ReasonBudgetExhausted ends a job whose agent stopped after the gate
	// refused a request for the job's budget.
	ReasonBudgetExhausted = "delegate.budget_exhausted"
	// ReasonBudgetBelowRequest ends a job whose agent stopped after the
	// gate refused a request that alone reserves more than the job's
	// whole budget (budget.request_spend or budget.request_tokens): a
	// larger budget is the remedy.
	ReasonBudgetBelowRequest = "delegate.budget_below_request"
	// ReasonTimeLimit ends a job whose agent was still running when the
	// budget's max minutes had passed (the sandbox ended its tree).
	ReasonTimeLimit       = "delegate.time_limit"
	ReasonConsentRequired = "consent.unsupported_client"
	// ReasonNoCredential refuses a job whose provider has no
	// gate.credentials entry: the gate could not forward one request.
	ReasonNoCredential = "delegate.no_credential"
	// ReasonCredentialUnresolved refuses a job whose provider's declared
	// credential cannot be read (an unset variable, a missing or empty
	// file): every request of the job would be refused secret.binding_failed
	// while the agent retried until its time limit.
	ReasonCredentialUnresolved = "delegate.credential_unresolved"
)

// DelegateTask is one delegate job as a surface translated it (MCP tool
// delegate, `coagent8 delegate`). Every field is the caller's request;
// consent comes only from Consent.
type DelegateTask struct {
	// Task is what the agent is asked to do (non-empty, at most
	// [MaxTaskBytes] of UTF-8).
	Task string
	// Backend is "", "auto" or "claude"; "codex" and "agy" are refused
	// UNSUPPORTED (see [Governor.Delegate]).
	Backend string
	// Workspace is the absolute top level of the user's Git work tree.
	Workspace string
	// Model is as for consult: "" is the backend's default, still
	// governed. Effort must be "": a job runs at the model's default
	// effort (INVALID_INPUT delegate.effort_unsupported otherwise).
	Model, Effort string
	// Base is the state the candidate starts from: "" or "HEAD" (the
	// workspace's HEAD, whose tracked files must be unchanged), any
	// revision naming HEAD's commit (its id, a branch at HEAD), or
	// [BaseUncommitted], the working tree as it is (tracked changes and
	// untracked, not ignored, files), or another commit (its id, a
	// branch, a tag, HEAD~2): the candidate then starts from that commit's
	// content and the patch is relative to it; admission three-way merges
	// it into the checkout. A commit base needs the tracked files
	// unchanged (INVALID_INPUT delegate.workspace_dirty); a commit other
	// than HEAD needs the workspace's .git to be a directory
	// (delegate.base_not_head for a linked worktree or submodule
	// checkout) and no submodule difference from HEAD
	// (delegate.base_submodule; see [Governor.delegateBase]).
	Base string
	// Budget is what the caller asks for; MaxUSD is required, zero
	// MaxMinutes takes the user's ceiling, zero MaxRequests
	// [DefaultMaxRequests].
	Budget job.Budget
	// Wait returns only when the job has ended.
	Wait bool
	// Consent asks the user about the job; nil refuses every job that
	// the configuration does not allow without asking.
	Consent JobConsent
}

// JobQuestion is what the user is asked before a delegate job starts.
type JobQuestion struct {
	// Decision is the governance decision for the concrete model (price
	// included); Effect is Allow or Ask.
	Decision policy.Decision
	// Workspace is the canonical workspace; Budget the approved ceiling.
	Workspace string
	Budget    job.Budget
	// Task is what the calling agent asks the delegated agent to do, as
	// it wrote it: the question shows its start as data.
	Task string
}

// maxQuestionTask is how many runes of the task the job question shows.
const maxQuestionTask = 300

// Message is the text of the question: backend, concrete model and
// price, the budget ceiling, the workspace, and what the agent may do.
func (q JobQuestion) Message() string {
	d := q.Decision
	price := "no price known"
	if d.Price != nil {
		price = d.Price.FloatString(2) + " USD per million output tokens"
	}
	return fmt.Sprintf("coagent8 asks before starting a delegate job. Backend: %s. Model: %s. Price: %s. "+
		"Budget ceiling: %.2f USD, %d requests, %d minutes. Workspace: %s. "+
		"The agent will edit a copy of the workspace and run commands in a sandbox whose only network is the model provider (through coagent8's gate); "+
		"your checkout is not changed until you admit the result with `coagent8 admit JOB` in a terminal.%s",
		d.Backend, d.Model, price, q.Budget.MaxUSD, q.Budget.MaxRequests, q.Budget.MaxMinutes,
		oneLine(q.Workspace), // the agent's workspace_path: see AdmissionQuestion.WorkspaceText
		q.taskText())
}

// taskText is the task as the question shows it, last (the calling
// agent's words must not push coagent8's own lines down), labelled as the
// agent's, on one line with its controls escaped and at most
// maxQuestionTask runes; "" without a task.
func (q JobQuestion) taskText() string {
	t := strings.TrimSpace(q.Task)
	if t == "" {
		return ""
	}
	if r := []rune(t); len(r) > maxQuestionTask {
		t = string(r[:maxQuestionTask-1]) + "…"
	}
	return " The task, in the calling agent's words (data, not coagent8's): «" + guillemets.Replace(oneLine(t)) + "»"
}

// guillemets escapes the quote marks the task is shown between, so the
// agent's text cannot seem to end the quote and go on as coagent8's.
var guillemets = strings.NewReplacer("«", `\u00ab`, "»", `\u00bb`)

// JobConsent asks the user whether a delegate job may start. MCP asks by
// elicitation; the terminal cannot ask and refuses.
type JobConsent interface {
	// AskJob returns nil only when the user approved q (approve: true);
	// otherwise a POLICY_DENIED *fault.Error with a consent.* reason,
	// which the governor records as the refusal's security event.
	AskJob(ctx context.Context, q JobQuestion) error
}

// DelegateDeps is what delegate jobs run on; [Options.Delegation] builds
// it on the first approved job, so a refusal never opens a sandbox.
type DelegateDeps struct {
	Jobs   *job.Store
	Gate   DelegateGate
	Runner *delegation.Runner
	// Runtime returns the pinned CLI of backend ("claude").
	Runtime func(ctx context.Context, backend string) (delegation.Runtime, error)
	// Secret is the reference of the real Anthropic credential the
	// grant names (the zero Ref takes the gate's declared one).
	Secret secret.Ref
	// WorkDir is an absolute directory for the jobs' receipts (state
	// dir/jobs).
	WorkDir string
	// CandidateDir is an absolute directory, outside the state directory
	// (the sandbox refuses roots that overlap it), that holds each job's
	// candidate layer while it is built.
	CandidateDir string
}

// DelegateGate is the in-process provider gate (*gate.Gate).
type DelegateGate interface {
	delegation.Gate
	Grant(ctx context.Context, s gate.Spec) (gate.Grant, secret.Value, error)
}

var _ DelegateGate = (*gate.Gate)(nil)

// Delegate validates t, governs it (routing, the concrete model, its
// price, policy allow/ask/deny), asks the job question (skipped only for
// a model governance allows and delegate.allowWithoutAsking names),
// creates the job row and a grant for exactly that provider, model and
// budget, and starts the agent in the background. It returns the job at
// once (running), or once it ended when t.Wait.
//
// Errors, before anything is started or sent: INVALID_INPUT (task,
// workspace, budget, base; delegate.* and workspace.* reasons),
// AUTH_REQUIRED delegate.no_credential (no gate credential for the
// backend's provider) or delegate.credential_unresolved (the declared one
// cannot be read), both refused before the user is asked,
// POLICY_DENIED (governance, delegate.budget_above_ceiling,
// delegate.unpriced, consent.*), UNSUPPORTED delegate.backend_unsupported
// (agy); then the dependencies' own (SANDBOX_UNAVAILABLE, …).
func (g *Governor) Delegate(ctx context.Context, t DelegateTask) (JobView, error) {
	if err := validTask(t.Task); err != nil {
		return JobView{}, err
	}
	if t.Effort != "" {
		return JobView{}, fault.New(fault.InvalidInput, ReasonEffort,
			"reasoning_effort is not applied to delegate jobs in this version (the agent runs at the model's default effort): omit it")
	}
	cfg, _ := g.loadConfig()
	if err := cfg.GovernanceErr(); err != nil {
		return JobView{}, g.refuse(err, t.Backend, t.Model, "")
	}
	if err := cfg.DelegateErr(); err != nil {
		return JobView{}, g.refuse(fault.Wrap(fault.PolicyDenied, ReasonConfig,
			"delegate jobs are refused until the delegate section of the coagent8 configuration is fixed: "+err.Error(), err), t.Backend, t.Model, "delegate")
	}
	budget, err := ceiling(t.Budget, cfg.Delegate)
	if err != nil {
		return JobView{}, g.refuse(err, t.Backend, t.Model, "delegate")
	}
	backend, err := delegateBackend(t.Backend)
	if err != nil {
		return JobView{}, err
	}
	if err := routed(cfg, backend); err != nil {
		return JobView{}, g.refuse(err, backend, t.Model, "routing.allowedBackends")
	}
	ws, base, err := g.delegateWorkspace(ctx, t.Workspace, t.Base)
	if err != nil {
		return JobView{}, err
	}
	// Governance decides first: a model the user denies is refused as
	// such, not for a credential the user would then set up in vain
	// (newcomer report). The credential is checked before the question.
	d, err := g.delegateDecision(ctx, cfg, backend, ws, t)
	if err != nil {
		return JobView{}, err
	}
	if err := gateCredential(cfg, g.env, backend); err != nil {
		return JobView{}, g.refuse(err, backend, t.Model, "gate.credentials")
	}
	q := JobQuestion{Decision: d, Workspace: ws, Budget: budget, Task: t.Task}
	if err := g.jobConsent(ctx, cfg, q, t.Consent); err != nil {
		return JobView{}, err
	}
	return g.startJob(ctx, t, q, base)
}

func validTask(task string) error {
	switch {
	case strings.TrimSpace(task) == "":
		return fault.New(fault.InvalidInput, ReasonTaskEmpty, "task is required: say what the delegated agent should do.")
	case len(task) > MaxTaskBytes:
		return fault.New(fault.InputLimit, ReasonTaskSize, fmt.Sprintf("The task is %d bytes, above the limit of %d bytes.", len(task), MaxTaskBytes))
	case !utf8.ValidString(task) || strings.ContainsRune(task, 0):
		return fault.New(fault.InvalidInput, ReasonTaskEmpty, "task must be UTF-8 text without NUL bytes.")
	}
	return nil
}

// budgetInvalid is the INVALID_INPUT [ReasonBudgetInvalid] refusal of a
// negative or NaN budget field, naming the field (detail "field").
func budgetInvalid(field, msg string) error {
	return fault.New(fault.InvalidInput, ReasonBudgetInvalid, field+" "+msg+".").With("field", field)
}

// ceiling fills the budget's defaults and refuses one above the user's
// ceilings (a caller can ask for less, never more).
func ceiling(b job.Budget, c config.Delegate) (job.Budget, error) {
	// A negative or NaN field is named with its value: the old message
	// ("budget fields must be positive numbers (max_requests at most
	// 10000)") named no field and, for max_usd -1, pointed at max_requests.
	switch {
	case b.MaxUSD < 0 || b.MaxUSD != b.MaxUSD:
		return b, budgetInvalid("budget.max_usd", fmt.Sprintf("must be a number of US dollars above 0 (got %g)", b.MaxUSD))
	case b.MaxRequests < 0:
		return b, budgetInvalid("budget.max_requests", fmt.Sprintf("must be a whole number from 0 to %d (got %d)", config.MaxBudgetRequests, b.MaxRequests))
	case b.MaxMinutes < 0:
		return b, budgetInvalid("budget.max_minutes", fmt.Sprintf("must be a whole number from 0 to %d (got %d)", config.MaxBudgetMinutes, b.MaxMinutes))
	case b.MaxUSD == 0:
		return b, fault.New(fault.InvalidInput, ReasonBudgetMissing, "a spend budget above 0 USD is required (budget.max_usd in the delegate tool, --max-usd on the terminal): a job runs only within one.")
	}
	// The same input ranges as the terminal's flags (budget.out_of_range),
	// checked before the user's ceilings so that 1e308 or +Inf is named as
	// bad input, not as a budget the user could raise a ceiling for.
	for _, err := range []error{config.CheckBudgetUSD("budget.max_usd", b.MaxUSD),
		config.CheckBudgetCount("budget.max_requests", int64(b.MaxRequests), 0, config.MaxBudgetRequests),
		config.CheckBudgetCount("budget.max_minutes", int64(b.MaxMinutes), 0, config.MaxBudgetMinutes)} {
		if err != nil {
			return b, err
		}
	}
	if b.MaxMinutes == 0 {
		b.MaxMinutes = c.MaxMinutes
	}
	if b.MaxRequests == 0 {
		b.MaxRequests = DefaultMaxRequests
	}
	if b.MaxUSD > c.MaxUSD || b.MaxMinutes > c.MaxMinutes {
		return b, aboveCeiling(b, c)
	}
	return b, nil
}

// gateCredential refuses a job for backend whose gate provider has no
// credential in gate.credentials (AUTH_REQUIRED [ReasonNoCredential]), and
// one whose gate section is unusable. It runs before the job question:
// asking the user to approve a job that cannot send a single request
// wasted their approval and then failed at the grant.
func gateCredential(cfg config.File, env config.Env, backend string) error {
	creds, err := cfg.GateCredentials()
	var fe *fault.Error
	switch {
	case errors.As(err, &fe): // a literal credential in the file
		return fe
	case err != nil:
		return fault.Wrap(fault.InvalidInput, "config.gate", "delegate jobs are refused until the gate section of the coagent8 configuration is fixed: "+err.Error(), err)
	}
	// The gate parses every reference when it opens, after the question:
	// one it will refuse ("env:", "file:rel", any provider's) is refused
	// here. ParseRef never quotes its input.
	owner, refs := map[string]string{}, map[string]secret.Ref{}
	for _, name := range slices.Sorted(maps.Keys(creds)) {
		key := "gate.credentials." + name
		ref, err := secret.ParseRef(creds[name])
		if err != nil {
			return fault.Wrap(fault.InvalidInput, "config.gate", "delegate jobs are refused until the gate section of the coagent8 configuration is fixed: "+
				key+" must be env:NAME or file:/abs/path (a clean absolute path)", err).With("key", key)
		}
		if other, ok := owner[creds[name]]; ok { // the gate refuses one reference for two providers
			return fault.New(fault.InvalidInput, "config.gate", "delegate jobs are refused until the gate section of the coagent8 configuration is fixed: "+
				"gate.credentials."+other+" and "+key+" declare the same reference; a credential belongs to one provider").With("key", key)
		}
		owner[creds[name]], refs[name] = name, ref
	}
	p := delegation.Runtime{Backend: backend}.Provider()
	if creds[string(p)] != "" {
		return resolvable(env, refs[string(p)], backend, string(p))
	}
	return fault.New(fault.AuthRequired, ReasonNoCredential, fmt.Sprintf(
		"a %s delegate job sends its model requests to %s through coagent8's gate, which has no credential for it: "+
			"set gate.credentials.%s in the coagent8 configuration to env:NAME or file:/abs/path",
		backend, p, p)).With("provider", string(p))
}

// resolvable refuses a job whose provider's declared reference ref
// cannot be read now: AUTH_REQUIRED [ReasonCredentialUnresolved]
// naming the reference, never a value. The job's gate is this process's,
// over the same environment, and resolves the reference the same way on
// every request; the value read here is dropped at once.
func resolvable(env config.Env, ref secret.Ref, backend, provider string) error {
	_, err := secret.Resolver{Env: env}.Resolve(ref)
	if err == nil {
		return nil
	}
	key := "gate.credentials." + provider
	return fault.Wrap(fault.AuthRequired, ReasonCredentialUnresolved, fmt.Sprintf(
		"a %s delegate job sends its model requests to %s with the credential %s declares, %s, which %s",
		backend, provider, key, ref, unreadable(key, err)), err).With("key", key)
}

// delegateBackend routes the job. Claude Code and Codex have a verified
// candidate profile and job path in package delegation; agy has none.
func delegateBackend(b string) (string, error) {
	switch strings.ToLower(b) {
	case "", "auto", "claude":
		return "claude", nil
	case "codex":
		return "codex", nil
	case "agy", "gemini":
		return "", fault.New(fault.Unsupported, ReasonBackend, "delegate runs Claude Code and Codex only in this version: "+
			"the delegated-agent runner has a verified candidate profile and job path for Claude Code "+delegation.ClaudeVersion+
			" and Codex "+delegation.CodexVersion+", none yet for "+b+"; use backend claude or codex").With("backend", b)
	}
	return "", fault.New(fault.InvalidInput, "backend.unknown", "unknown backend: use claude, codex or auto (= claude)")
}

// delegateDecision resolves the concrete model and applies governance; a
// deny is refused, and so is a model with no price (a USD budget could
// not be enforced at the gate).
func (g *Governor) delegateDecision(ctx context.Context, cfg config.File, backend, ws string, t DelegateTask) (policy.Decision, error) {
	concrete, def, err := g.models.resolve(ctx, g.runner.Backend(backend), ws, t.Model)
	if err != nil {
		return policy.Decision{}, err
	}
	d := policy.Decide(cfg.Governance, g.catalog, policy.Input{Backend: backend, Requested: concrete, Default: def, Effort: t.Effort})
	if d.Price == nil && g.catalog != nil && g.catalog.Len() > 0 {
		// An allow or deny rule decides before any price lookup; a job
		// needs the price anyway, for its USD budget and its question.
		if q := g.catalog.Quote(d.Backend, d.Model); q.Match != policy.MatchNone {
			d.Price, d.PriceMatch = q.PerMillion, q.Match
		}
	}
	switch {
	case d.Effect == policy.Deny:
		return d, g.refuse(d.Err(), d.Backend, d.Model, d.Rule)
	case d.Effect != policy.Allow && d.Effect != policy.Ask:
		return d, g.refuse(fault.New(fault.PolicyDenied, "governor.invalid_effect", "the governance decision was not understood"), d.Backend, d.Model, d.Rule)
	case d.Price == nil || d.Price.Sign() <= 0:
		return d, g.refuse(fault.New(fault.PolicyDenied, ReasonUnpriced, "model "+d.Model+
			" has no known price, so a USD budget cannot be enforced for a delegate job; name a priced model"), d.Backend, d.Model, "")
	}
	return d, nil
}

// jobConsent asks the job question unless the user's configuration
// allows this model without asking (governance allow and
// delegate.allowWithoutAsking, within the ceilings already checked).
func (g *Governor) jobConsent(ctx context.Context, cfg config.File, q JobQuestion, c JobConsent) error {
	d := q.Decision
	if d.Effect == policy.Allow && slices.Contains(cfg.Delegate.AllowWithoutAsking, d.Model) {
		return nil
	}
	if c == nil {
		return g.refuse(fault.New(fault.PolicyDenied, ReasonConsentRequired, "a delegate job needs the user's approval and this surface cannot ask; "+
			"approve it in an MCP host that shows the form, or "+unaskedSteps(d, cfg.Delegate.AllowWithoutAsking)), d.Backend, d.Model, "")
	}
	if err := c.AskJob(ctx, q); err != nil {
		if errors.Is(err, ErrPending) {
			return err // asked by input request: not refused (yet)
		}
		return g.refuse(err, d.Backend, d.Model, d.Rule) // the one security event of the refusal
	}
	return nil
}

// gatePrice is the grant's price: the catalog knows output prices only,
// so every token class is charged at the output rate, an upper bound that
// never under-charges the budget.
func gatePrice(p *big.Rat) *gate.Price {
	f, _ := p.Float64()
	return &gate.Price{InputPerMTok: f, OutputPerMTok: f, CacheWritePerMTok: f, CacheReadPerMTok: f}
}

// delegateWorkspace canonicalises the workspace (it must be the top
// level of a Git work tree: the candidate is a Git patch against a base)
// and resolves the base ([Governor.delegateBase]).
func (g *Governor) delegateWorkspace(ctx context.Context, path, base string) (string, baseRef, error) {
	ws, err := turn.Workspace(path)
	if err != nil {
		return "", baseRef{}, err
	}
	b, err := g.delegateBase(ctx, ws, base)
	return ws, b, err
}

// unaskedSteps names every step still missing for d's model to run a
// delegate job without asking: both a governance allow rule and
// delegate.allowWithoutAsking are needed, and naming only one sent users
// round in circles.
func unaskedSteps(d policy.Decision, allowWithoutAsking []string) string {
	var steps []string
	if d.Effect != policy.Allow {
		cmd := "coagent8 governance allow " + d.Model
		if !listed(d) {
			cmd += " --unlisted" // see withRemedy
		}
		steps = append(steps, "run `"+cmd+"`")
	}
	if !slices.Contains(allowWithoutAsking, d.Model) {
		steps = append(steps, "add "+d.Model+" to delegate.allowWithoutAsking in the coagent8 configuration")
	}
	return strings.Join(steps, " and ")
}

// aboveCeiling is the refusal of a budget above the user's ceilings; it
// names only the ceilings the budget exceeds.
func aboveCeiling(b job.Budget, c config.Delegate) error {
	var asked, limits []string
	if b.MaxUSD > c.MaxUSD {
		asked = append(asked, fmt.Sprintf("%.2f USD", b.MaxUSD))
		limits = append(limits, fmt.Sprintf("delegate.maxUSD %.2f", c.MaxUSD))
	}
	if b.MaxMinutes > c.MaxMinutes {
		asked = append(asked, fmt.Sprintf("%d minutes", b.MaxMinutes))
		limits = append(limits, fmt.Sprintf("delegate.maxMinutes %d", c.MaxMinutes))
	}
	ceilings, them := "ceiling", "it"
	if len(limits) > 1 {
		ceilings, them = "ceilings", "them"
	}
	return fault.New(fault.PolicyDenied, ReasonBudgetCeiling, fmt.Sprintf(
		"the budget of %s is above your %s %s in the coagent8 configuration; ask for less, or raise %s there",
		strings.Join(asked, " and "), ceilings, strings.Join(limits, " and "), them)).
		With("max_usd", fmt.Sprint(c.MaxUSD)).With("max_minutes", fmt.Sprint(c.MaxMinutes))
}
