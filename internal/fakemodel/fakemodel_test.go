package fakemodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// post sends body to path on a fresh server and returns the response and
// the request log.
func post(t *testing.T, method, path, body string) (*http.Response, []byte, []Record) {
	t.Helper()
	var log bytes.Buffer
	srv := httptest.NewServer(&Server{Log: &log})
	defer srv.Close()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(resp.Body)
	if err := resp.Body.Close(); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	sc := bufio.NewScanner(&log)
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return resp, data, recs
}

// sseData returns the JSON objects of the data lines of an SSE stream.
func sseData(t *testing.T, stream []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(string(stream), "\n") {
		d, ok := strings.CutPrefix(line, "data: ")
		if !ok || d == "[DONE]" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("data line %q: %v", d, err)
		}
		out = append(out, m)
	}
	return out
}

func TestAPIs(t *testing.T) {
	tests := []struct {
		name, method, path, body string
		api                      string
		// text finds the answer's text in the response.
		text func(t *testing.T, body []byte) string
	}{
		{"anthropic stream", "POST", "/v1/messages", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, Anthropic,
			func(t *testing.T, b []byte) string {
				for _, ev := range sseData(t, b) {
					if d, ok := ev["delta"].(map[string]any); ok && d["type"] == "text_delta" {
						return d["text"].(string)
					}
				}
				return ""
			}},
		{"anthropic", "POST", "/v1/messages", `{"model":"m","messages":[]}`, Anthropic,
			func(t *testing.T, b []byte) string {
				var m struct{ Content []struct{ Text string } }
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				return m.Content[0].Text
			}},
		{"responses stream", "POST", "/v1/responses", `{"model":"m","stream":true}`, Responses,
			func(t *testing.T, b []byte) string {
				evs := sseData(t, b)
				last := evs[len(evs)-1]
				if last["type"] != "response.completed" {
					t.Errorf("last event %v", last["type"])
				}
				for _, ev := range evs {
					if ev["type"] == "response.output_text.delta" {
						return ev["delta"].(string)
					}
				}
				return ""
			}},
		{"chat stream", "POST", "/v1/chat/completions", `{"model":"m","stream":true}`, Chat,
			func(t *testing.T, b []byte) string {
				if !bytes.Contains(b, []byte("data: [DONE]")) {
					t.Error("no [DONE]")
				}
				var s strings.Builder
				for _, ev := range sseData(t, b) {
					d := ev["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
					c, _ := d["content"].(string)
					s.WriteString(c)
				}
				return s.String()
			}},
		{"chat", "POST", "/v1/chat/completions", `{"model":"m"}`, Chat,
			func(t *testing.T, b []byte) string {
				var m struct {
					Choices []struct{ Message struct{ Content string } }
				}
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				return m.Choices[0].Message.Content
			}},
		{"gemini stream", "POST", "/v1beta/models/g:streamGenerateContent?alt=sse", `{"contents":[]}`, Gemini,
			func(t *testing.T, b []byte) string {
				ev := sseData(t, b)[0]
				c := ev["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)
				return c["parts"].([]any)[0].(map[string]any)["text"].(string)
			}},
		{"gemini json", "POST", "/v1beta/models/g:generateContent", `{"generationConfig":{"responseMimeType":"application/json"}}`, Gemini,
			func(t *testing.T, b []byte) string {
				var m struct {
					Candidates []struct {
						Content struct{ Parts []struct{ Text string } }
					}
				}
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				text := m.Candidates[0].Content.Parts[0].Text
				if !json.Valid([]byte(text)) {
					t.Errorf("a JSON request got %q", text)
				}
				return DefaultReply
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body, recs := post(t, tt.method, tt.path, tt.body)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if got := tt.text(t, body); got != DefaultReply {
				t.Errorf("answer text %q, want %q", got, DefaultReply)
			}
			if len(recs) != 1 || recs[0].API != tt.api || !json.Valid(recs[0].Body) {
				t.Errorf("log %+v, want one %s record with the JSON body", recs, tt.api)
			}
		})
	}
}

func TestUnknownPathIsLogged(t *testing.T) {
	resp, _, recs := post(t, "POST", "/nowhere", "not json")
	if resp.StatusCode != 404 {
		t.Errorf("status %d, want 404", resp.StatusCode)
	}
	if len(recs) != 1 || recs[0].API != Unknown || recs[0].Text != "not json" {
		t.Errorf("log %+v", recs)
	}
}
