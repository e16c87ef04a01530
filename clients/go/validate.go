package lockservice

import (
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
)

func invalid(arg, reason string) error { return &InvalidArgumentError{Argument: arg, Reason: reason} }

func validKey(key string) error {
	if len(key) < 1 || len(key) > 200 {
		return invalid("key", "must be 1–200 characters, got "+strconv.Itoa(len(key)))
	}
	for i := 0; i < len(key); i++ {
		if !keyByte(key[i]) {
			return invalid("key", "may only contain A-Z a-z 0-9 . _ - : @ = + (found "+strconv.Quote(key[i:i+1])+")")
		}
	}
	return nil
}

func keyByte(b byte) bool {
	return tokenByte(b) || b == '.' || b == ':' || b == '@' || b == '=' || b == '+'
}

func tokenByte(b byte) bool {
	return (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '_' || b == '-'
}

func validToken(token string) error {
	if len(token) < 16 || len(token) > 128 {
		return invalid("token", "must be 16–128 characters, got "+strconv.Itoa(len(token)))
	}
	for i := 0; i < len(token); i++ {
		if !tokenByte(token[i]) {
			return invalid("token", "may only contain A-Z a-z 0-9 _ -")
		}
	}
	return nil
}

func validTTL(arg string, ttl time.Duration) error {
	if ttl != 0 && ttl < 100*time.Millisecond {
		return invalid(arg, "must be at least 100ms (or 0 for the service's default), got "+ttl.String())
	}
	return nil
}

func validOwner(owner string) error {
	if owner == "" {
		return nil
	}
	if !utf8.ValidString(owner) || utf8.RuneCountInString(owner) > 200 {
		return invalid("owner", "must be 1–200 printable characters")
	}
	for _, r := range owner {
		// The service's rule: no \p{C} (control, format, surrogate, private use, unassigned).
		if !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z) {
			return invalid("owner", "must not contain control or unassigned characters")
		}
	}
	return nil
}

func validSession(id string) error {
	if id == "" {
		return nil
	}
	if len(id) != 24 || id[0] != 's' || id[1] != '.' {
		return invalid("session", "is not a session id (s. and 22 characters)")
	}
	for i := 2; i < len(id); i++ {
		if !tokenByte(id[i]) {
			return invalid("session", "is not a session id (s. and 22 characters)")
		}
	}
	return nil
}

// validAcquire checks everything an acquire sends, before any request.
func validAcquire(key string, o *AcquireOptions) error {
	if err := validKey(key); err != nil {
		return err
	}
	switch o.Kind {
	case "", KindLock, KindRead, KindWrite, KindPermit:
	default:
		return invalid("kind", "must be KindLock, KindRead, KindWrite or KindPermit")
	}
	if o.Token != "" {
		if err := validToken(o.Token); err != nil {
			return err
		}
	}
	if err := validTTL("ttl", o.TTL); err != nil {
		return err
	}
	if o.Wait < 0 {
		return invalid("wait", "must not be negative")
	}
	if o.LockDelay < 0 {
		return invalid("lockDelay", "must not be negative")
	}
	if o.MaxHold < 0 {
		return invalid("maxHold", "must not be negative")
	}
	if err := validOwner(o.Owner); err != nil {
		return err
	}
	if err := validSession(o.Session); err != nil {
		return err
	}
	if o.Kind == KindPermit {
		if o.Limit < 1 {
			return invalid("limit", "a semaphore needs a limit of at least 1")
		}
		if o.Permits < 1 {
			return invalid("permits", "must be at least 1 (required for a semaphore), got "+strconv.Itoa(o.Permits))
		}
		if o.Permits > o.Limit {
			return invalid("permits", "must not exceed the limit ("+strconv.Itoa(o.Limit)+")")
		}
	} else if o.Limit != 0 || o.Permits != 0 {
		return invalid("limit", "limit and permits are for semaphores (KindPermit) only")
	}
	return nil
}
