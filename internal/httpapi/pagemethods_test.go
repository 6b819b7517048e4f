package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestPageRoutesAnswerOtherMethods405: kk serve mounts kk browse's page
// for GET and HEAD; another method on one of the page's paths (TRACE /,
// POST /graph, DELETE /node/x) was answered 404 "not found", as if the
// page were not there, where the API's own routes answer 405 with an
// Allow header (knowledged's mux does, and so does kk browse alone). It
// is 405, Allow: GET, HEAD, in JSON as every error of the API; a path
// neither the API nor the page has stays 404.
func TestPageRoutesAnswerOtherMethods405(t *testing.T) {
	url, _ := servePage(t, newRepo(t), "127.0.0.1:0", "")
	for _, target := range []string{"/", "/folder/go", "/node/req-login", "/leaf/go/a.md", "/find", "/api/find", "/graph", "/trace", "/assets/kk.css"} {
		for _, method := range []string{"TRACE", "OPTIONS", "POST", "PUT", "DELETE", "PATCH"} {
			r := send(t, method, url+target, "", nil)
			var e struct {
				Error string `json:"error"`
			}
			if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET, HEAD" || json.Unmarshal([]byte(r.body), &e) != nil || e.Error != "method "+method+" is not allowed on "+target {
				t.Errorf("%s %s: %d Allow %q %s", method, target, r.status, r.header.Get("Allow"), r.body)
			}
		}
		if r := send(t, "GET", url+target, "", nil); r.status != http.StatusOK {
			t.Errorf("GET %s: %d %s", target, r.status, r.body)
		}
	}
	for _, method := range []string{"GET", "TRACE", "POST"} {
		if r := send(t, method, url+"/nope", "", nil); r.status != http.StatusNotFound {
			t.Errorf("%s /nope: %d %s", method, r.status, r.body)
		}
	}
}
