package commands

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

func init() {
	register("date", "date [-u] [-d DATE] [-r FILE] [-I[FMT]] [-R] [+FORMAT]", runDate)
}

// strftime formats t with the conversions of date(1).
func strftime(format string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		ch := format[i]
		if ch != '%' || i+1 >= len(format) {
			b.WriteByte(ch)
			continue
		}
		i++
		pad := byte(0)
		if format[i] == '-' || format[i] == '_' || format[i] == '0' {
			pad = format[i]
			i++
			if i >= len(format) {
				break
			}
		}
		num := func(v, width int) {
			s := strconv.Itoa(v)
			switch pad {
			case '-':
			case '_':
				s = strings.Repeat(" ", max(0, width-len(s))) + s
			default:
				s = strings.Repeat("0", max(0, width-len(s))) + s
			}
			b.WriteString(s)
		}
		switch format[i] {
		case '%':
			b.WriteByte('%')
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'Y':
			num(t.Year(), 4)
		case 'y':
			num(t.Year()%100, 2)
		case 'C':
			num(t.Year()/100, 2)
		case 'm':
			num(int(t.Month()), 2)
		case 'd':
			num(t.Day(), 2)
		case 'e':
			if pad == 0 {
				pad = '_'
			}
			num(t.Day(), 2)
		case 'H':
			num(t.Hour(), 2)
		case 'I':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			num(h, 2)
		case 'M':
			num(t.Minute(), 2)
		case 'S':
			num(t.Second(), 2)
		case 'N':
			b.WriteString(fmt.Sprintf("%09d", t.Nanosecond()))
		case 'j':
			num(t.YearDay(), 3)
		case 'u':
			wd := int(t.Weekday())
			if wd == 0 {
				wd = 7
			}
			num(wd, 1)
		case 'w':
			num(int(t.Weekday()), 1)
		case 'a':
			b.WriteString(t.Format("Mon"))
		case 'A':
			b.WriteString(t.Format("Monday"))
		case 'b', 'h':
			b.WriteString(t.Format("Jan"))
		case 'B':
			b.WriteString(t.Format("January"))
		case 'p':
			b.WriteString(t.Format("PM"))
		case 'P':
			b.WriteString(strings.ToLower(t.Format("PM")))
		case 'Z':
			b.WriteString(t.Format("MST"))
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 's':
			b.WriteString(strconv.FormatInt(t.Unix(), 10))
		case 'F':
			b.WriteString(t.Format("2006-01-02"))
		case 'T':
			b.WriteString(t.Format("15:04:05"))
		case 'R':
			b.WriteString(t.Format("15:04"))
		case 'D':
			b.WriteString(t.Format("01/02/06"))
		case 'c':
			b.WriteString(t.Format("Mon Jan _2 15:04:05 2006"))
		case 'x':
			b.WriteString(t.Format("01/02/06"))
		case 'X':
			b.WriteString(t.Format("15:04:05"))
		case 'V':
			_, w := t.ISOWeek()
			num(w, 2)
		case 'G':
			y, _ := t.ISOWeek()
			num(y, 4)
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}

func runDate(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "ud:r:I::R", long: map[string]string{
		"utc": "u", "universal": "u", "date=": "d", "reference=": "r", "iso-8601=": "I", "rfc-email": "R", "iso-8601": "I",
	}}, 1)
	if !ok {
		return code
	}
	t := c.Now()
	if o.has("u") {
		t = t.UTC()
	}
	if d, ok := o.val("d"); ok {
		p, ok := parseDate(d, t)
		if !ok {
			return c.Fail("invalid date %s", q(d))
		}
		t = p
		if o.has("u") {
			t = t.UTC()
		}
	}
	if r, ok := o.val("r"); ok {
		st, err := c.Stat(r)
		if err != nil {
			c.PathError(r, err)
			return 1
		}
		t = st.Mtime
		if o.has("u") {
			t = t.UTC()
		}
	}
	format := "%a %b %e %H:%M:%S %Z %Y"
	if o.has("R") {
		format = "%a, %d %b %Y %H:%M:%S %z"
	}
	if o.has("I") {
		v, _ := o.val("I")
		switch v {
		case "", "date":
			format = "%Y-%m-%d"
		case "hours":
			format = "%Y-%m-%dT%H" + isoZone(t)
		case "minutes":
			format = "%Y-%m-%dT%H:%M" + isoZone(t)
		case "seconds":
			format = "%Y-%m-%dT%H:%M:%S" + isoZone(t)
		case "ns":
			format = "%Y-%m-%dT%H:%M:%S,%N" + isoZone(t)
		default:
			return c.Fail("invalid argument %s for '--iso-8601'", q(v))
		}
	}
	for _, a := range args {
		if strings.HasPrefix(a, "+") {
			format = a[1:]
		} else {
			return c.Fail("invalid date %s", q(a))
		}
	}
	fmt.Fprintln(c.Stdout, strftime(format, t))
	return 0
}

func isoZone(t time.Time) string {
	return t.Format("-07:00")
}
