package yamlstyle

import "regexp"

// isAmbiguous reports whether a plain scalar s would be read back by js-yaml
// (DEFAULT_SAFE_SCHEMA) as something other than a string: null, a boolean,
// an integer, a float, a timestamp or the merge key "<<". Such strings must
// be quoted.
//
// The checks work on bytes. Every pattern involved is pure ASCII, so a
// string containing other characters never matches, exactly as with
// JavaScript's UTF-16 view of it.
func isAmbiguous(s string) bool {
	return isNull(s) || isBool(s) || isInt(s) || isFloat(s) || isTimestamp(s) || s == "<<"
}

func isNull(s string) bool {
	switch s {
	case "~", "null", "Null", "NULL":
		return true
	}
	return false
}

func isBool(s string) bool {
	switch s {
	case "true", "True", "TRUE", "false", "False", "FALSE":
		return true
	}
	return false
}

// base60Tail matches the ":mm:ss"-style remainder of a sexagesimal integer.
var base60Tail = regexp.MustCompile(`^(:[0-5]?[0-9])+$`)

// isInt follows js-yaml 3's hand-written integer scanner: an optional sign,
// then "0", 0b binary, 0x hex, 0-prefixed octal, decimal, or decimal with
// sexagesimal ":nn" groups. Underscores may separate digits, but at least
// one digit is required and the value may not end with '_' (nor may a
// decimal start with one).
func isInt(s string) bool {
	n := len(s)
	if n == 0 {
		return false
	}
	at := func(i int) byte { // JavaScript's data[i], with 0 for undefined
		if i < n {
			return s[i]
		}
		return 0
	}

	i := 0
	ch := at(i)
	if ch == '-' || ch == '+' {
		i++
		ch = at(i)
	}

	if ch == '0' {
		if i+1 == n {
			return true // 0, -0, +0
		}
		i++
		ch = s[i]
		var digit func(byte) bool
		switch ch {
		case 'b':
			i++
			digit = func(c byte) bool { return c == '0' || c == '1' }
		case 'x':
			i++
			digit = isHexDigit
		default:
			digit = func(c byte) bool { return '0' <= c && c <= '7' }
		}
		hasDigits := false
		for ; i < n; i++ {
			ch = s[i]
			if ch == '_' {
				continue
			}
			if !digit(ch) {
				return false
			}
			hasDigits = true
		}
		return hasDigits && ch != '_'
	}

	if ch == '_' {
		return false
	}
	hasDigits := false
	for ; i < n; i++ {
		ch = s[i]
		if ch == '_' {
			continue
		}
		if ch == ':' {
			break
		}
		if !isDecDigit(ch) {
			return false
		}
		hasDigits = true
	}
	if !hasDigits || ch == '_' {
		return false
	}
	if ch != ':' {
		return true
	}
	return base60Tail.MatchString(s[i:])
}

func isDecDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHexDigit(c byte) bool {
	return isDecDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// floatPattern is js-yaml 3's YAML_FLOAT_PATTERN.
var floatPattern = regexp.MustCompile(`^(?:` +
	`[-+]?(?:0|[1-9][0-9_]*)(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?` +
	`|\.[0-9_]+(?:[eE][-+]?[0-9]+)?` +
	`|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*` +
	`|[-+]?\.(?:inf|Inf|INF)` +
	`|\.(?:nan|NaN|NAN)` +
	`)$`)

// isFloat reports whether js-yaml 3 resolves s as a float. Note that the
// pattern also accepts plain decimal integers.
func isFloat(s string) bool {
	return floatPattern.MatchString(s) && s[len(s)-1] != '_'
}

// js-yaml 3's YAML_DATE_REGEXP and YAML_TIMESTAMP_REGEXP.
var (
	datePattern      = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	timestampPattern = regexp.MustCompile(`^[0-9]{4}-[0-9][0-9]?-[0-9][0-9]?` +
		`(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?` +
		`(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9]{2})?))?$`)
)

func isTimestamp(s string) bool {
	return datePattern.MatchString(s) || timestampPattern.MatchString(s)
}
