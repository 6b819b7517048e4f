//go:build !linux

package store

import "errors"

func newNotifier(string) (notifier, error) {
	return nil, errors.New("watching the tree is not supported on this system")
}
