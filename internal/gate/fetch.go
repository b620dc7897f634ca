package gate

import (
	"encoding/json"
	"errors"
	"strings"
)

// Provider fetches. A content block can name its content by URL instead
// of carrying it: Anthropic image and document blocks with a "url"
// source, OpenAI input_image "image_url" and input_file "file_url". The
// provider then fetches that URL itself, from wherever the block sits (a
// message, a tool result, an OpenAI prompt variable or function output),
// and the URL is whatever the agent wrote: a party no egress decision
// named, workspace content in its path or query (red team 2026-12-03).
// Like a hosted tool it is refused (request.provider_fetch); inline
// content (base64, text, data: URLs) is admitted.
//
// Provider state. A body can also name content the provider stores and
// adds to the request itself: an uploaded file (OpenAI file_id, an
// Anthropic "file" source or container_upload block), an OpenAI
// item_reference (its "type" is optional: [fetchScan.inputItem]), a
// reasoning item by id, previous_response_id or conversation. That content
// is billed as input the body does not hold, so the reservation (every
// body byte an input token) does not bound it and a grant's budget could
// be exceeded; and it was never decided by the egress decision. Refused
// request.provider_state.
//
// The whole body is read, every member and every copy of a repeated key,
// so no placement, escape or duplicate hides a URL the provider reads.
// Keys are matched exactly, as the providers read them.

// maxFetchDepth bounds the nesting the scan follows (encoding/json's own
// limit): a deeper body is refused, never half read.
const maxFetchDepth = 10000

// providerFetch returns what in body b provider p would fetch from a URL
// itself ("source" for an Anthropic url source, "image_url" or
// "file_url" for OpenAI), or "" when all content is inline. b is valid
// JSON (parseBody checked it); the walk is one pass over it on the
// body's cursor, every string skipped unread unless it is a value the
// providers fetch by (a Decoder token walk cost about 1 ms per 100 KB).
func providerFetch(p Provider, b []byte) (string, error) {
	s := fetchScan{p: p, c: cursor{b: b}}
	s.c.ws()
	return s.value("", "", 0)
}

type fetchScan struct {
	p Provider
	c cursor
}

// inputItem reports whether the value of key in parent at depth is an
// element of an OpenAI body's top-level "input" array: the top-level
// object is depth 0, its members depth 1, their elements depth 2, and
// only array elements have the key "".
//
// Such an item with an "id" can name an item the provider stored (store
// defaults to true): an item reference needs no "type" (the API's
// ItemReference has it optional, so {"id":"msg_..."} is one), and a
// reasoning item given by id without its encrypted_content is read back
// from storage. Either bills input the body does not carry
// (request.provider_state, [itemState.stored]). An id on an item that
// carries its content stays admitted: Codex 0.169.0 gives every message
// it sends a client-made "msg_<uuid>" id.
func (s *fetchScan) inputItem(key, parent string, depth int) bool {
	return s.p == OpenAI && depth == 2 && key == "" && parent == "input"
}

var errFetchScan = errors.New("request body could not be read for URL sources")

// value reads the value at the cursor — the member key of the object
// whose member parent is, or an element ("") of parent's array — and
// reports the first URL fetch in it.
func (s *fetchScan) value(key, parent string, depth int) (string, error) {
	c := &s.c
	if depth > maxFetchDepth || c.i >= len(c.b) {
		return "", errFetchScan
	}
	switch c.b[c.i] {
	case '{', '[':
		return s.container(key, depth, s.inputItem(key, parent, depth))
	case '"':
		raw, ok := c.str()
		if !ok {
			return "", errFetchScan
		}
		if !s.fetched(key, parent) {
			return "", nil
		}
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", errFetchScan
		}
		return s.check(key, parent, v), nil
	}
	if _, ok := c.value(); !ok { // a number, true, false or null
		return "", errFetchScan
	}
	return "", nil
}

// container reads the object or array at the cursor, the value of key;
// item is whether it is an OpenAI input item ([fetchScan.inputItem]).
func (s *fetchScan) container(key string, depth int, item bool) (string, error) {
	c := &s.c
	obj := c.b[c.i] == '{'
	end := byte(']')
	if obj {
		end = '}'
	}
	c.i++
	var st itemState
	for n := 0; ; n++ {
		more, ok := c.next(n, end)
		if !ok {
			return "", errFetchScan
		}
		if !more {
			if item && obj {
				return st.stored(), nil
			}
			return "", nil
		}
		k := ""
		if obj {
			var err error
			if k, err = c.name(); err != nil {
				return "", errFetchScan
			}
		}
		if item && obj {
			if err := st.member(k, c); err != nil {
				return "", err
			}
		}
		if obj && opaque(s.p, k) {
			if _, ok := c.value(); !ok {
				return "", errFetchScan
			}
			continue
		}
		if what, err := s.value(k, key, depth+1); what != "" || err != nil {
			return what, err
		}
	}
}

// itemState is what the members of an OpenAI input item say about
// whether it stands for an item the provider stored
// ([fetchScan.inputItem]). Every copy of a repeated member counts:
// providers differ on which one wins.
type itemState struct {
	id        bool // a non-null "id"
	typed     bool // a "type" that is a string
	untyped   bool // a "type" that is not (null)
	reasoning bool // a "type" of "reasoning"
	encrypted bool // a non-null "encrypted_content"
}

// member notes the member k whose value is at c, leaving c where it is.
func (st *itemState) member(k string, c *cursor) error {
	switch k {
	case "id":
		st.id = st.id || !c.at('n')
	case "encrypted_content":
		st.encrypted = st.encrypted || !c.at('n')
	case "type":
		if !c.at('"') {
			st.untyped = true
			return nil
		}
		peek := cursor{b: c.b, i: c.i}
		raw, ok := peek.str()
		var v string
		if !ok || json.Unmarshal(raw, &v) != nil {
			return errFetchScan
		}
		st.typed = true
		st.reasoning = st.reasoning || v == "reasoning"
	}
	return nil
}

// stored is the finding for the item: an id with no string "type" is an
// item reference (the API's ItemReference has "type" optional), an id on
// a reasoning item without its encrypted_content is the stored reasoning
// read back; "" otherwise.
func (st itemState) stored() string {
	switch {
	case !st.id:
	case st.untyped || !st.typed:
		return "item_reference"
	case st.reasoning && !st.encrypted:
		return "reasoning item id"
	}
	return ""
}

// fetched reports whether a string that is the value of key (in parent)
// is one a provider fetches by, or one naming content the provider holds
// ([stateWhats]), so it has to be read.
func (s *fetchScan) fetched(key, parent string) bool {
	switch s.p {
	case Anthropic:
		return key == "type"
	case OpenAI:
		return fetchKey(key) || fetchKey(parent) && key == "url" || key == "type" || key == "file_id"
	}
	return false
}

// check is what v, the value of key in parent, makes the provider fetch
// or add from its own storage.
func (s *fetchScan) check(key, parent, v string) string {
	switch s.p {
	case Anthropic:
		return anthropicReach(key, parent, v)
	case OpenAI:
		return openAIReach(key, parent, v)
	}
	return ""
}

// anthropicReach: a "url" source is fetched; a "file" source and a
// container_upload block name a file uploaded to the provider.
func anthropicReach(key, parent, v string) string {
	switch {
	case key != "type":
	case parent == "source" && v == "url":
		return "source"
	case parent == "source" && v == "file":
		return "file source"
	case v == "container_upload":
		return "container_upload"
	}
	return ""
}

// openAIReach: a string image_url/file_url, or the url of an image_url
// object (the Chat Completions form), is fetched unless it is a data:
// URL; an item_reference item and any file_id name what the provider
// stores.
func openAIReach(key, parent, v string) string {
	inline := strings.HasPrefix(v, "data:")
	switch {
	case key == "type":
		if v == "item_reference" {
			return "item_reference"
		}
	case key == "file_id":
		return "file_id"
	case fetchKey(key) && !inline:
		return key
	case fetchKey(parent) && key == "url" && !inline:
		return parent
	}
	return ""
}

// stateWhats are the findings of the scan that name content the provider
// holds rather than a URL it fetches (request.provider_state).
var stateWhats = map[string]bool{"file source": true, "container_upload": true, "item_reference": true, "file_id": true, "reasoning item id": true}

// opaque reports whether the value of member k is arguments the model
// wrote, which provider p passes to the client's tool and never reads as
// content: an Anthropic tool_use block's "input" (OpenAI's arguments are
// strings). A tool taking {"source":{"type":"url"}} was refused as if the
// provider would fetch it (red team 2026-12-06).
func opaque(p Provider, k string) bool { return p == Anthropic && k == "input" }

func fetchKey(k string) bool { return k == "image_url" || k == "file_url" }

// reachesBeyond refuses a body, read as req, that would make provider p
// reach a party the egress decision does not name — a hosted tool
// (request.hosted_tool) or content by URL (request.provider_fetch) — or
// add content the body does not carry from the provider's own storage
// (request.provider_state); a body the scan cannot read is refused
// request.body (fail closed). bind applies it to the client's body and
// sized to a filtered one.
func reachesBeyond(p Provider, req body, b []byte) (reason, detail string) {
	if t := req.hostedTool(p); t != "" {
		return ReasonHostedTool, hostedToolDetail(p, t)
	}
	if p == OpenAI && req.State != "" {
		return ReasonProviderState, providerStateDetail(req.State)
	}
	switch what, err := providerFetch(p, b); {
	case err != nil:
		return ReasonBody, err.Error()
	case stateWhats[what]:
		return ReasonProviderState, providerStateDetail(what)
	case what != "":
		return ReasonProviderFetch, providerFetchDetail(what)
	}
	return "", ""
}

// providerFetchDetail is the refusal's detail for what: the URL itself
// is not echoed (it may carry the content it exfiltrates).
func providerFetchDetail(what string) string {
	return "the provider would fetch a content block's " + what + " from a URL itself, beyond the gate: only inline content (base64, data: URLs) is admitted"
}

// providerStateDetail is the refusal's detail for what, the member that
// names stored content; its value (an id) is not echoed.
func providerStateDetail(what string) string {
	return "the request's " + what + " makes the provider add content it stores (an earlier response, a conversation, an uploaded file) " +
		"that the body does not carry: its size, and so its cost, cannot be bounded before sending, and its content was never decided here; send the content inline"
}
