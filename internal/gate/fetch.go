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
// item_reference, previous_response_id or conversation. That content
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
		return s.container(key, depth)
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

// container reads the object or array at the cursor, the value of key.
func (s *fetchScan) container(key string, depth int) (string, error) {
	c := &s.c
	obj := c.b[c.i] == '{'
	end := byte(']')
	if obj {
		end = '}'
	}
	c.i++
	for n := 0; ; n++ {
		more, ok := c.next(n, end)
		if !ok {
			return "", errFetchScan
		}
		if !more {
			return "", nil
		}
		k := ""
		if obj {
			var err error
			if k, err = c.name(); err != nil {
				return "", errFetchScan
			}
		}
		if what, err := s.value(k, key, depth+1); what != "" || err != nil {
			return what, err
		}
	}
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
var stateWhats = map[string]bool{"file source": true, "container_upload": true, "item_reference": true, "file_id": true}

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
