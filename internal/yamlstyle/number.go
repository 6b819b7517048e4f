package yamlstyle

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// scientificWithoutDot matches JavaScript exponent notation that has no
// decimal point, which YAML would not read as a float.
var scientificWithoutDot = regexp.MustCompile(`^[-+]?[0-9]+e`)

// formatFloat renders f as js-yaml writes a JavaScript number. Integral
// values go through js-yaml's int type (plain Number#toString, so 3.0 is
// "3" and 1e21 is "1e+21"); the rest go through its float type, which
// spells out NaN, the infinities and negative zero and adds a '.' to
// exponent notation without one ("5.e-7").
func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return ".nan"
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	case f == 0 && math.Signbit(f):
		return "-0.0"
	case f == math.Trunc(f):
		return jsNumberString(f)
	}
	s := jsNumberString(f)
	if scientificWithoutDot.MatchString(s) {
		s = strings.Replace(s, "e", ".e", 1)
	}
	return s
}

// jsNumberString implements Number.prototype.toString() (radix 10) for a
// finite f: the shortest digits that round-trip, in positional notation
// for decimal exponents from -7 to 20 and in exponent notation otherwise.
func jsNumberString(f float64) string {
	if f == 0 {
		return "0"
	}
	if f < 0 {
		return "-" + jsNumberString(-f)
	}
	// Shortest round-trip digits, as "d.ddde±x".
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	k := len(digits)
	n := x + 1 // position of the decimal point relative to the digits

	switch {
	case k <= n && n <= 21:
		return digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return "0." + strings.Repeat("0", -n) + digits
	}
	sign := "+"
	if n-1 < 0 {
		sign = "-"
	}
	m := digits[:1]
	if k > 1 {
		m += "." + digits[1:]
	}
	return m + "e" + sign + strconv.Itoa(abs(n-1))
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// maxDateMillis is the largest distance from the epoch, in milliseconds,
// that a JavaScript Date can hold.
const maxDateMillis = 8.64e15

// formatISOTime renders t as Date.prototype.toISOString does for the same
// instant truncated to milliseconds: UTC with exactly three fractional
// digits, and a signed six-digit year outside 0000-9999.
func formatISOTime(t time.Time) (string, error) {
	t = t.UTC()
	ms := t.UnixMilli()
	if ms > maxDateMillis || ms < -maxDateMillis || t.Year() < -271821 || t.Year() > 275760 {
		return "", errors.New("time is outside the range of a JavaScript Date")
	}
	year := fmt.Sprintf("%04d", t.Year())
	if t.Year() < 0 || t.Year() > 9999 {
		year = fmt.Sprintf("%+07d", t.Year())
	}
	return fmt.Sprintf("%s-%02d-%02dT%02d:%02d:%02d.%03dZ",
		year, int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(),
		t.Nanosecond()/int(time.Millisecond)), nil
}
