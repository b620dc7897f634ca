package codex

import "errors"

func errorsCause(err error) error { return errors.Unwrap(err) }
