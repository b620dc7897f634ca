package operator

import (
	"net/http"
	"net/netip"
	"time"
)

// route is one entry of the route table. Every route is served only
// through [guard.wrap]; routes_test.go checks each one refuses an
// unauthenticated request.
type route struct {
	pattern string // net/http ServeMux pattern, method first
	handle  func(*Server, http.ResponseWriter, *http.Request)
}

// routeTable lists every route. There is no stop route and no
// job-queue administration; lifecycle actions refuse.
var routeTable = []route{
	{"GET /{$}", (*Server).pageOverview},
	{"GET /jobs", (*Server).pageJobs},
	{"GET /grants", (*Server).pageGrants},
	{"GET /egress", (*Server).pageEgress},
	{"GET /events", (*Server).pageEvents},
	{"GET /sessions", (*Server).pageSessions},
	{"GET /candidates", (*Server).pageCandidates},
	{"GET /candidates/{id}", (*Server).pageCandidate},
	{"POST /candidates/{id}/admit", (*Server).postAdmit},
	{"POST /candidates/{id}/reject", (*Server).postReject},
	{"POST /overview/refresh", (*Server).postRefresh},
	{"POST /lifecycle/{action}", (*Server).postLifecycle},
	{"POST /logout", (*Server).postLogout},
	{"GET /live", (*Server).serveLive},
	{"GET /assets/{file}", (*Server).serveAsset},
}

// Handler returns the dashboard for a listener on ap: the route table
// behind the one request chain. Serve uses it; tests and benchmarks may
// drive it directly.
func (s *Server) Handler(ap netip.AddrPort) http.Handler {
	mux := http.NewServeMux()
	for _, rt := range routeTable {
		mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) {
			s.trim.touch(time.Now())
			rt.handle(s, w, r)
		})
	}
	s.badges = newBadges("http://"+ap.String(), ap.Port(), s.opts.Now)
	return newGuard(ap, s.csrf, s.auth, s.badges, s.rec).wrap(mux)
}
