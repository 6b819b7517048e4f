// Command shortlink serves the link shortener's HTTP API.
package main

import (
	"log"
	"net/http"
	"time"

	"example.com/shortlink/internal/httpapi"
	"example.com/shortlink/internal/links"
)

func main() {
	store := links.NewStore(30 * 24 * time.Hour)
	log.Fatal(http.ListenAndServe(":8080", httpapi.New(store)))
}
