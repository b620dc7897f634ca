package operator

import (
	"net/http"
	"path"
)

// assetTypes are the embedded static files and their content types; any
// other name is 404 (templates are not served).
var assetTypes = map[string]string{
	"app.css": "text/css; charset=utf-8",
	"app.js":  "text/javascript; charset=utf-8",
}

// serveAsset is GET /assets/{file}: an embedded stylesheet or script.
func (s *Server) serveAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	ct, ok := assetTypes[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	b, err := assets.ReadFile(path.Join("assets", name))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Write(b)
}
