// Package httpapi is the link shortener's HTTP API.
package httpapi

import (
	"errors"
	"net/http"

	"example.com/shortlink/internal/links"
)

// New returns the API's handler.
func New(store *links.Store) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /links", func(w http.ResponseWriter, r *http.Request) {
		code, err := store.Shorten(r.Header.Get("X-User"), r.FormValue("url"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(code))
	})
	mux.HandleFunc("GET /{code}", func(w http.ResponseWriter, r *http.Request) {
		target, err := store.Resolve(r.PathValue("code"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		http.Redirect(w, r, target, http.StatusFound)
	})
	mux.HandleFunc("DELETE /{code}", func(w http.ResponseWriter, r *http.Request) {
		err := store.Delete(r.Header.Get("X-User"), r.PathValue("code"))
		switch {
		case errors.Is(err, links.ErrNotOwner):
			http.Error(w, "only the owner may delete a link", http.StatusForbidden)
		case err != nil:
			http.NotFound(w, r)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	return mux
}
