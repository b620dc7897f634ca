package price

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
)

// TestModelsCountsListedIDs: Models counts the rows IDs lists; Len also
// counts canonical slugs (testList has one).
func TestModelsCountsListedIDs(t *testing.T) {
	c := mustParse(t, testList)
	if got, want := c.Models(), len(c.IDs()); got != want || c.Len() != want+1 {
		t.Errorf("Models() = %d, len(IDs()) = %d, Len() = %d; want Models == len(IDs) == Len-1", got, want, c.Len())
	}
	if got := (*Catalog)(nil).Models(); got != 0 {
		t.Errorf("nil catalog: Models() = %d", got)
	}
}

// TestRefreshTypedErrors: callers tell the failures apart with errors.As
// and errors.Is (the terminal command names the cause).
func TestRefreshTypedErrors(t *testing.T) {
	tests := []struct {
		status int32
		body   string
		check  func(error) bool
	}{
		{503, "busy", func(err error) bool { var se *StatusError; return errors.As(err, &se) && se.Code == 503 }},
		{200, `{"other":1}`, func(err error) bool { return errors.Is(err, ErrNoData) }},
		{200, `{"data":[]}`, func(err error) bool { return errors.Is(err, ErrNoPrices) }},
	}
	for _, tt := range tests {
		var status atomic.Int32
		var body atomic.Value
		status.Store(tt.status)
		body.Store(tt.body)
		_, err := Refresh(context.Background(), http.DefaultClient, openRouterDouble(t, &status, &body))
		if !tt.check(err) {
			t.Errorf("status %d, body %q: err = %v", tt.status, tt.body, err)
		}
	}
}
