package serve

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/fakemodel"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/llm"
	"github.com/kk-project/kk/internal/store"
)

// quickRetry is the provider's retry policy with waits short enough for a
// test: four tries, one more for a bad reply.
var quickRetry = llm.RetryPolicy{Attempts: 4, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, BadReplies: 1}

// modelServer runs the fake model server (internal/fakemodel), answering
// the organizer's JSON requests with placement, failing the requests fail
// says; it returns the server and an OpenAI-compatible provider for it.
func modelServer(t *testing.T, placement string, fail func(n int) int) (*fakemodel.Server, llm.Provider) {
	t.Helper()
	fm := &fakemodel.Server{JSON: func([]byte) string { return placement }, Fail: fail}
	srv := httptest.NewServer(fm)
	t.Cleanup(srv.Close)
	return fm, provider(t, srv.URL)
}

func provider(t *testing.T, url string) llm.Provider {
	t.Helper()
	p, err := llm.New(llm.Config{Provider: "openai", Model: "fake", URL: url}, llm.Deps{Retry: &quickRetry})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// commitMessage is the whole message of job id's commit.
func commitMessage(t *testing.T, k *store.KB, id string) string {
	t.Helper()
	return git(t, k, "log", "-1", "--format=%B", "--grep", "("+id+")", "--fixed-strings")
}

const goodPlacement = `{"folder":"go/concurrency","title":"Channels","description":"What channels are for","type":"map","tags":["golang"]}`

// TestAModelFailingTwiceStillPlaces: a provider that answers 503 twice
// and then the decision is tried again with backoff: the job is done
// where the model put it, in one commit, with no note.
func TestAModelFailingTwiceStillPlaces(t *testing.T) {
	k := newRepo(t, 0)
	fm, p := modelServer(t, goodPlacement, func(n int) int {
		if n <= 2 {
			return http.StatusServiceUnavailable
		}
		return 0
	})
	s := start(t, k, p)
	head := git(t, k, "rev-parse", "HEAD")
	j := s.post(t, httpapi.PostRequest{Content: "Channels pass values between goroutines.\n"})
	if j.Status != "done" || j.Path != "go/concurrency/map-channels.md" || j.Note != "" {
		t.Fatalf("job: %+v", j)
	}
	if n := fm.Requests(); n != 3 {
		t.Errorf("the model got %d requests, want 3 (two failures, then the answer)", n)
	}
	if got := git(t, k, "rev-list", "--count", head+"..HEAD"); got != "1" {
		t.Errorf("%s commits for one job", got)
	}
	jobCommit(t, k, "store", j)
	if msg := commitMessage(t, k, j.JobID); strings.Contains(msg, "without the model") {
		t.Errorf("commit message: %q", msg)
	}
	clean(t, k)
}

// TestAModelThatStaysDownFallsBack: a provider that stays down (503, a
// refused connection) through every try: the job is still done, placed
// as without a model, and the job and its commit message say so.
func TestAModelThatStaysDownFallsBack(t *testing.T) {
	k := newRepo(t, 0)
	fm, down := modelServer(t, goodPlacement, func(int) int { return http.StatusServiceUnavailable })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	} // nothing listens there now
	for _, c := range []struct {
		name string
		p    llm.Provider
		why  string
	}{
		{"503", down, "HTTP 503"},
		{"refused", provider(t, refused), "connection refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := start(t, k, c.p)
			head := git(t, k, "rev-parse", "HEAD")
			j := s.post(t, httpapi.PostRequest{Content: "# Mutexes guard state\nA mutex guards shared state (" + c.name + ").\n"})
			if j.Status != "done" || !strings.HasPrefix(j.Path, InboxFolder+"/") {
				t.Fatalf("job: %+v", j)
			}
			if !strings.HasPrefix(j.Note, "Placed without the model (openai fake), which failed: ") || !strings.Contains(j.Note, c.why) || !strings.Contains(j.Note, "(after 4 tries)") {
				t.Errorf("note: %q", j.Note)
			}
			if got := git(t, k, "rev-list", "--count", head+"..HEAD"); got != "1" {
				t.Errorf("%s commits for one job", got)
			}
			jobCommit(t, k, "store", j)
			msg := commitMessage(t, k, j.JobID)
			if first, body, _ := strings.Cut(msg, "\n\n"); first != "store("+j.JobID+"): "+j.Path || strings.TrimSpace(body) != j.Note {
				t.Errorf("commit message:\n%s", msg)
			}
			if n, _ := k.ReadLeaf(j.Path); n == nil || n.Title != "Mutexes guard state" {
				t.Errorf("leaf: %+v", n)
			}
			s.stop()
			clean(t, k)
		})
	}
	if n := fm.Requests(); n != 4 {
		t.Errorf("the model got %d requests, want 4 tries", n)
	}
}

// TestABadModelReplyFallsBack: a decision that fails its schema, or whose
// refactor names a note the tree does not have, is asked for once more,
// then the note is placed without the model; the job says why.
func TestABadModelReplyFallsBack(t *testing.T) {
	k := newRepo(t, 0)
	for _, c := range []struct {
		name, reply, why string
	}{
		{"schema", `{"folder":"go","title":"x"}`, "reply for serve-placement"},
		{"refactor", `{"folder":"go","title":"x","description":"","type":"map","tags":[],"refactors":[{"from":"old/map-gone.md","to":"go"}]}`, `no note or folder "old/map-gone.md" under nodes/`},
	} {
		t.Run(c.name, func(t *testing.T) {
			fm, p := modelServer(t, c.reply, nil)
			s := start(t, k, p)
			head := git(t, k, "rev-parse", "HEAD")
			j := s.post(t, httpapi.PostRequest{Content: "Anything (" + c.name + ").\n"})
			if j.Status != "done" || !strings.HasPrefix(j.Path, InboxFolder+"/") || !strings.Contains(j.Note, c.why) {
				t.Fatalf("job: %+v", j)
			}
			if n := fm.Requests(); n != 2 {
				t.Errorf("the model got %d requests, want 2 (the bad reply asked for once more)", n)
			}
			if got := git(t, k, "rev-list", "--count", head+"..HEAD"); got != "1" {
				t.Errorf("%s commits for one job", got)
			}
			s.stop()
			clean(t, k)
		})
	}
}
