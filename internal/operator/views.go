package operator

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"time"
)

//go:embed assets
var assets embed.FS

// pageNames are the page templates in assets/, one per page; each
// defines "title" and "main" and is rendered inside layout.html.
var pageNames = []string{"overview", "jobs", "grants", "egress", "events", "sessions", "candidates", "candidate", "result"}

// views holds the parsed templates, one set per page.
type views struct {
	pages map[string]*template.Template
}

var funcs = template.FuncMap{
	"usd":      func(nano int64) string { return fmt.Sprintf("$%.4f", float64(nano)/1e9) },
	"bytes":    humanBytes,
	"ts":       func(t time.Time) string { return stamp(t) },
	"pct":      pct,
	"bar":      func(used, limit int64, title string) barData { return barData{used, max(limit, 1), title} },
	"navItems": func() []navItem { return nav },
}

// barData is a budget bar: a <progress> element (no inline style, which
// the CSP forbids).
type barData struct {
	Used, Max int64
	Title     string
}

type navItem struct{ Name, Path, Label string }

var nav = []navItem{
	{"overview", "/", "Overview"}, {"jobs", "/jobs", "Jobs"}, {"grants", "/grants", "Grants"},
	{"egress", "/egress", "Egress"}, {"events", "/events", "Events"}, {"sessions", "/sessions", "Sessions"},
	{"candidates", "/candidates", "Candidates"},
}

func newViews() (*views, error) {
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "assets/layout.html")
	if err != nil {
		return nil, fmt.Errorf("parse operator layout: %w", err)
	}
	v := &views{pages: map[string]*template.Template{}}
	for _, p := range pageNames {
		t, err := template.Must(base.Clone()).ParseFS(assets, "assets/"+p+".html")
		if err != nil {
			return nil, fmt.Errorf("parse operator page %s: %w", p, err)
		}
		v.pages[p] = t
	}
	return v, nil
}

// render writes page with data (already redacted) and status; a request
// with X-Coagent8-Fragment gets only the page's main content, for live
// updates and actions.
func (v *views) render(w http.ResponseWriter, r *http.Request, page string, status int, data any) {
	t := v.pages[page]
	name := "layout.html"
	if r.Header.Get("X-Coagent8-Fragment") != "" {
		name = "main"
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, data); err != nil {
		refuse(w, http.StatusInternalServerError, "operator.render")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// pct is used as a percentage of limit, 0–100 (a bar's fill).
func pct(used, limit int64) int64 {
	if limit <= 0 {
		return 0
	}
	return min(100, max(0, used*100/limit))
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
