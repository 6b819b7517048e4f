package httpapitest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FakeOllama runs a stand-in for Ollama's POST /api/chat and returns its
// URL. It answers by the schema it is asked for: the reply whose key is a
// property of the request's format schema ("sources" for serve-answer,
// "title" for serve-ask, ...). A non-zero status answers every request
// with that HTTP status instead.
func FakeOllama(t testing.TB, replies map[string]string, status int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Format struct {
				Properties map[string]any `json:"properties"`
			} `json:"format"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.URL.Path != "/api/chat" {
			t.Errorf("fake Ollama: %s %v", r.URL.Path, err)
		}
		if status != 0 {
			http.Error(w, `{"error":"model not loaded"}`, status)
			return
		}
		for prop, content := range replies {
			if _, ok := req.Format.Properties[prop]; ok {
				_ = json.NewEncoder(w).Encode(map[string]any{"message": map[string]string{"role": "assistant", "content": content}, "done": true})
				return
			}
		}
		t.Errorf("fake Ollama: no reply for a schema with %v", req.Format.Properties)
		http.Error(w, `{"error":"no reply"}`, http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
