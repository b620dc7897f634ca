package price

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Refresh fetches OpenRouter's model list from url with client and parses
// it. It does not touch the cache: on success the caller saves the result
// with [Catalog.Save]; on any error (network, HTTP status, oversize or
// invalid JSON, no prices) the caller keeps its last good catalog.
func Refresh(ctx context.Context, client *http.Client, url string) (*Catalog, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("price list request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch price list: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch price list: %w", &StatusError{Code: resp.StatusCode})
	}
	b, err := readLimited(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read price list: %w", err)
	}
	return Parse(b, Source{Kind: KindLive, URL: url, Date: time.Now().UTC()})
}

// readLimited reads at most MaxListBytes and fails if there is more.
func readLimited(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxListBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxListBytes {
		return nil, ErrTooLarge
	}
	return b, nil
}

// StatusError is a price list answer with an HTTP status other than 200.
type StatusError struct {
	Code int // HTTP status code
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("HTTP %d %s", e.Code, http.StatusText(e.Code))
}

// ErrTooLarge reports a price list larger than [MaxListBytes].
var ErrTooLarge = fmt.Errorf("price list larger than %d bytes", MaxListBytes)
