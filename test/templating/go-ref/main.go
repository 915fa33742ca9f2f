// Reference renderer for the template engine's differential test: Go's own text/template with the
// Helm/Sprig-like functions re-implemented as Helm defines them (stdlib only, no modules).
// Input (stdin): JSON array of {"template": string, "data": any}. Output (stdout): JSON array of
// {"ok": bool, "output": string, "error": string}. JSON integers decode to int, other numbers to float64,
// as the TypeScript engine models them.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"text/template"
)

type testCase struct {
	Template string          `json:"template"`
	Data     json.RawMessage `json:"data"`
}

type result struct {
	OK     bool   `json:"ok"`
	Output string `json:"output"`
	Error  string `json:"error"`
}

func convert(v interface{}) interface{} {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return int(i)
		}
		f, _ := x.Float64()
		return f
	case map[string]interface{}:
		for k, e := range x {
			x[k] = convert(e)
		}
		return x
	case []interface{}:
		for i, e := range x {
			x[i] = convert(e)
		}
		return x
	}
	return v
}

func empty(given interface{}) bool {
	g := reflect.ValueOf(given)
	if !g.IsValid() {
		return true
	}
	switch g.Kind() {
	default:
		return g.IsNil()
	case reflect.Array, reflect.Slice, reflect.Map, reflect.String:
		return g.Len() == 0
	case reflect.Bool:
		return !g.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return g.Int() == 0
	case reflect.Float32, reflect.Float64:
		return g.Float() == 0
	}
}

func strval(v interface{}) string {
	switch v := v.(type) {
	case string:
		return v
	case error:
		return v.Error()
	case fmt.Stringer:
		return v.String()
	default:
		return fmt.Sprintf("%v", v)
	}
}

func indent(spaces int, v string) string {
	pad := strings.Repeat(" ", spaces)
	return pad + strings.Replace(v, "\n", "\n"+pad, -1)
}

var funcs = template.FuncMap{
	"default": func(d interface{}, given ...interface{}) interface{} {
		if len(given) == 0 || empty(given[0]) {
			return d
		}
		return given[0]
	},
	"quote": func(str ...interface{}) string {
		out := make([]string, 0, len(str))
		for _, s := range str {
			if s != nil {
				out = append(out, fmt.Sprintf("%q", strval(s)))
			}
		}
		return strings.Join(out, " ")
	},
	"toJson": func(v interface{}) string {
		data, err := json.Marshal(v)
		if err != nil {
			return ""
		}
		return string(data)
	},
	"indent":  indent,
	"nindent": func(spaces int, v string) string { return "\n" + indent(spaces, v) },
	"b64enc":  func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	"lower":   strings.ToLower,
	"upper":   strings.ToUpper,
	"trim":    strings.TrimSpace,
	"replace": func(o, n, s string) string { return strings.Replace(s, o, n, -1) },
	"required": func(warn string, val interface{}) (interface{}, error) {
		if val == nil {
			return val, errors.New(warn)
		} else if _, ok := val.(string); ok {
			if val == "" {
				return val, errors.New(warn)
			}
		}
		return val, nil
	},
}

func render(c testCase) (r result) {
	defer func() {
		if p := recover(); p != nil {
			r = result{OK: false, Error: fmt.Sprintf("panic: %v", p)}
		}
	}()
	var data interface{}
	dec := json.NewDecoder(bytes.NewReader(c.Data))
	dec.UseNumber()
	if err := dec.Decode(&data); err != nil {
		return result{Error: "bad data: " + err.Error()}
	}
	data = convert(data)
	tpl, err := template.New("t").Funcs(funcs).Parse(c.Template)
	if err != nil {
		return result{Error: err.Error()}
	}
	var out strings.Builder
	if err := tpl.Execute(&out, data); err != nil {
		return result{Error: err.Error(), Output: out.String()}
	}
	return result{OK: true, Output: out.String()}
}

func main() {
	var cases []testCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintln(os.Stderr, "bad input:", err)
		os.Exit(2)
	}
	results := make([]result, len(cases))
	for i, c := range cases {
		results[i] = render(c)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(results); err != nil {
		fmt.Fprintln(os.Stderr, "write:", err)
		os.Exit(2)
	}
}
