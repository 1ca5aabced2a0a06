package jsnode

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"syscall"

	"github.com/dop251/goja"
	"github.com/evanw/esbuild/pkg/api"
)

// moduleExts are tried, in order, after a path without its extension.
var moduleExts = []string{".js", ".json", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".tsx"}

// isFile reports whether p is a file (following symlinks).
func (n *node) isFile(p string) bool {
	st, err := n.c.FS.Stat(p)
	return err == nil && !st.IsDir()
}

func (n *node) isDir(p string) bool {
	st, err := n.c.FS.Stat(p)
	return err == nil && st.IsDir()
}

// resolveFile finds the module file of an absolute path: the file, the
// file with an extension, or the directory's package.json main or index.
func (n *node) resolveFile(p string) (string, error) {
	if n.isFile(p) {
		return p, nil
	}
	for _, ext := range moduleExts {
		if n.isFile(p + ext) {
			return p + ext, nil
		}
	}
	// TypeScript sources are imported as ".js" (moduleResolution node16).
	if base, ok := strings.CutSuffix(p, ".js"); ok {
		for _, ext := range []string{".ts", ".tsx"} {
			if n.isFile(base + ext) {
				return base + ext, nil
			}
		}
	}
	if n.isDir(p) {
		if pkg := n.readPackage(p); pkg != nil {
			if main, ok := pkg["main"].(string); ok && main != "" {
				if r, err := n.resolveFile(path.Join(p, main)); err == nil {
					return r, nil
				}
			}
		}
		for _, ext := range moduleExts {
			if n.isFile(p + "/index" + ext) {
				return p + "/index" + ext, nil
			}
		}
	}
	return "", syscall.ENOENT
}

// readPackage reads dir/package.json (nil when absent or invalid).
func (n *node) readPackage(dir string) map[string]any {
	data, err := n.c.FS.ReadFile(dir + "/package.json")
	if err != nil {
		return nil
	}
	var pkg map[string]any
	if json.Unmarshal(data, &pkg) != nil {
		return nil
	}
	return pkg
}

// conditions are the "exports" conditions this loader matches, in order
// of preference: it runs ES modules and CommonJS alike.
var conditions = []string{"node", "require", "default", "import"}

// exportTarget picks the target of one "exports" value.
func exportTarget(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []any:
		for _, e := range x {
			if t, ok := exportTarget(e); ok {
				return t, true
			}
		}
	case map[string]any:
		for _, c := range conditions {
			if e, ok := x[c]; ok {
				if t, ok := exportTarget(e); ok {
					return t, true
				}
			}
		}
	}
	return "", false
}

// resolveExports maps a subpath ("." or "./x") through package.json
// "exports": a string, conditions, or a map of subpaths (with "*"
// patterns).
func resolveExports(exp any, sub string) (string, bool) {
	m, isMap := exp.(map[string]any)
	subpathMap := false
	if isMap {
		for k := range m {
			subpathMap = strings.HasPrefix(k, ".")
			break
		}
	}
	if !subpathMap {
		if sub != "." {
			return "", false
		}
		return exportTarget(exp)
	}
	if v, ok := m[sub]; ok {
		return exportTarget(v)
	}
	for k, v := range m {
		before, after, ok := strings.Cut(k, "*")
		if !ok || !strings.HasPrefix(sub, before) || !strings.HasSuffix(sub, after) || len(sub) < len(before)+len(after) {
			continue
		}
		star := sub[len(before) : len(sub)-len(after)]
		if t, ok := exportTarget(v); ok {
			return strings.ReplaceAll(t, "*", star), true
		}
	}
	return "", false
}

// resolveFrom resolves a require specifier from a module file; it throws
// MODULE_NOT_FOUND as Node does.
func (n *node) resolveFrom(spec, parent string) string {
	if _, ok := n.builtins[strings.TrimPrefix(spec, "node:")]; ok {
		return spec
	}
	dir := path.Dir(parent)
	spec = strings.TrimPrefix(spec, "file://")
	if strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../") || strings.HasPrefix(spec, "/") || spec == "." || spec == ".." {
		p := spec
		if !strings.HasPrefix(p, "/") {
			p = path.Join(dir, p)
		}
		if r, err := n.resolveFile(p); err == nil {
			return r
		}
		if _, err := n.c.FS.Stat(p); err != nil && errors.Is(err, syscall.EACCES) {
			// Refused by the sandbox's policy: say so, as a read would.
			n.fsError(err, "open", spec)
		}
		n.notFound(spec, parent)
	}
	// A package: node_modules of every ancestor directory.
	name, sub := spec, ""
	parts := strings.SplitN(spec, "/", 3)
	if strings.HasPrefix(spec, "@") && len(parts) >= 2 {
		name = parts[0] + "/" + parts[1]
		if len(parts) == 3 {
			sub = parts[2]
		}
	} else if i := strings.IndexByte(spec, '/'); i >= 0 {
		name, sub = spec[:i], spec[i+1:]
	}
	for d := dir; ; d = path.Dir(d) {
		if path.Base(d) != "node_modules" {
			pkgDir := path.Join(d, "node_modules", name)
			if n.isDir(pkgDir) {
				if r, ok := n.resolvePackage(pkgDir, sub); ok {
					return r
				}
			}
		}
		if d == "/" {
			break
		}
	}
	n.notFound(spec, parent)
	return ""
}

func (n *node) resolvePackage(pkgDir, sub string) (string, bool) {
	pkg := n.readPackage(pkgDir)
	if pkg != nil {
		if exp, ok := pkg["exports"]; ok && exp != nil {
			s := "."
			if sub != "" {
				s = "./" + sub
			}
			t, ok := resolveExports(exp, s)
			if !ok {
				e := n.rt.NewGoError(fmt.Errorf("Package subpath '%s' is not defined by \"exports\" in %s/package.json", s, pkgDir))
				e.Set("code", "ERR_PACKAGE_PATH_NOT_EXPORTED")
				panic(e)
			}
			r, err := n.resolveFile(path.Join(pkgDir, t))
			return r, err == nil
		}
	}
	r, err := n.resolveFile(path.Join(pkgDir, sub))
	return r, err == nil
}

func (n *node) notFound(spec, parent string) {
	e := n.rt.NewGoError(fmt.Errorf("Cannot find module '%s'\nRequire stack:\n- %s", spec, parent))
	e.Set("code", "MODULE_NOT_FOUND")
	panic(e)
}

// requireFrom is require(spec) in the module file parent.
func (n *node) requireFrom(spec, parent string) goja.Value {
	if m, ok := n.builtins[strings.TrimPrefix(spec, "node:")]; ok {
		return m
	}
	if strings.HasPrefix(spec, "node:") {
		e := n.rt.NewGoError(fmt.Errorf("No such built-in module: %s", spec))
		e.Set("code", "ERR_UNKNOWN_BUILTIN_MODULE")
		panic(e)
	}
	file := n.resolveFrom(spec, parent)
	return n.loadModule(file).Get("exports")
}

func (n *node) newModule(file string) *goja.Object {
	rt := n.rt
	m := rt.NewObject()
	m.Set("id", file)
	m.Set("filename", file)
	m.Set("path", path.Dir(file))
	m.Set("loaded", false)
	m.Set("exports", rt.NewObject())
	m.Set("children", rt.NewArray())
	m.Set("paths", rt.NewArray())
	return m
}

// loadMain runs the entry module.
func (n *node) loadMain(file string) {
	n.loadModuleAs(file, true)
}

func (n *node) loadModule(file string) *goja.Object {
	return n.loadModuleAs(file, false)
}

func (n *node) loadModuleAs(file string, main bool) *goja.Object {
	if m, ok := n.modules[file]; ok {
		return m
	}
	rt := n.rt
	src, err := n.readPath(file)
	if err != nil {
		n.fsError(err, "open", file)
	}
	m := n.newModule(file)
	if main {
		m.Set("id", ".")
		n.mainMod = m
	}
	n.modules[file] = m
	if strings.HasSuffix(file, ".json") {
		var v any
		if err := json.Unmarshal(src, &v); err != nil {
			delete(n.modules, file)
			panic(rt.NewGoError(fmt.Errorf("%s: Unexpected token in JSON: %v", file, err)))
		}
		parse, _ := goja.AssertFunction(rt.Get("JSON").ToObject(rt).Get("parse"))
		val, err := parse(goja.Undefined(), rt.ToValue(string(src)))
		if err != nil {
			delete(n.modules, file)
			panic(err)
		}
		m.Set("exports", val)
		m.Set("loaded", true)
		return m
	}
	prog, err := n.compileModule(file, src)
	if err != nil {
		delete(n.modules, file)
		e := rt.NewGoError(err)
		e.Set("name", "SyntaxError")
		panic(e)
	}
	fnv, err := rt.RunProgram(prog)
	if err != nil {
		delete(n.modules, file)
		panic(err)
	}
	fn, _ := goja.AssertFunction(fnv)
	req := n.makeRequire(file, m)
	dir := path.Dir(file)
	if _, err := fn(m.Get("exports"), m.Get("exports"), req, m, rt.ToValue(file), rt.ToValue(dir), rt.ToValue("file://"+file)); err != nil {
		delete(n.modules, file)
		panic(err)
	}
	m.Set("loaded", true)
	return m
}

// makeRequire is the require function of one module.
func (n *node) makeRequire(file string, m *goja.Object) *goja.Object {
	rt := n.rt
	req := rt.ToValue(func(call goja.FunctionCall) goja.Value {
		spec := call.Argument(0)
		if _, ok := spec.Export().(string); !ok {
			panic(n.typeError("ERR_INVALID_ARG_TYPE", "The \"id\" argument must be of type string. Received "+spec.String()))
		}
		return n.requireFrom(spec.String(), file)
	}).ToObject(rt)
	req.Set("resolve", func(call goja.FunctionCall) goja.Value {
		return rt.ToValue(n.resolveFrom(call.Argument(0).String(), file))
	})
	if n.mainMod != nil {
		req.Set("main", n.mainMod)
	}
	cache := rt.NewObject()
	req.Set("cache", cache)
	return req
}

// runSource runs "node -e" code (or a script read from stdin) as a
// script of the global scope, so that -p prints its completion value.
func (n *node) runSource(name, dir, code string, print bool) goja.Value {
	rt := n.rt
	file := path.Join(dir, name)
	m := n.newModule(file)
	m.Set("id", name)
	n.mainMod = m
	g := rt.GlobalObject()
	g.Set("module", m)
	g.Set("exports", m.Get("exports"))
	g.Set("require", n.makeRequire(file, m))
	g.Set("__filename", name)
	g.Set("__dirname", ".")
	code = stripShebang(code)
	prog, err := goja.Compile(name, code, false)
	if err != nil {
		// ES module syntax (import/export), TypeScript-free: transform.
		if looksESM(code) {
			prog, err = n.transformAndWrap(file, code, api.LoaderJS)
			if err == nil {
				fnv, err := rt.RunProgram(prog)
				if err != nil {
					panic(err)
				}
				fn, _ := goja.AssertFunction(fnv)
				if _, err := fn(m.Get("exports"), m.Get("exports"), g.Get("require"), m, rt.ToValue(file), rt.ToValue(dir), rt.ToValue("file://"+file)); err != nil {
					panic(err)
				}
				return goja.Undefined()
			}
		}
		e := rt.NewGoError(err)
		e.Set("name", "SyntaxError")
		panic(e)
	}
	v, err := rt.RunProgram(prog)
	if err != nil {
		panic(err)
	}
	return v
}

func stripShebang(src string) string {
	if strings.HasPrefix(src, "#!") {
		// Keep the line count for error positions.
		return "//" + src[2:]
	}
	return src
}

func looksESM(src string) bool {
	return strings.Contains(src, "import ") || strings.Contains(src, "export ") || strings.Contains(src, "import{") || strings.Contains(src, "export{") || strings.Contains(src, "await ")
}

const wrapHead = "(function (exports, require, module, __filename, __dirname, __importMetaUrl) {"
const wrapTail = "\n})"

// compileModule compiles one module file into its wrapper function.
// CommonJS that goja parses runs as is; ES modules, TypeScript and
// syntax goja lacks go through esbuild first.
func (n *node) compileModule(file string, src []byte) (*goja.Program, error) {
	code := stripShebang(string(src))
	ext := path.Ext(file)
	switch ext {
	case ".ts", ".mts", ".cts":
		return n.transformAndWrap(file, code, api.LoaderTS)
	case ".tsx":
		return n.transformAndWrap(file, code, api.LoaderTSX)
	case ".jsx":
		return n.transformAndWrap(file, code, api.LoaderJSX)
	case ".mjs":
		return n.transformAndWrap(file, code, api.LoaderJS)
	}
	if ext == ".js" && n.packageType(path.Dir(file)) == "module" {
		return n.transformAndWrap(file, code, api.LoaderJS)
	}
	prog, err := goja.Compile(file, wrapHead+code+wrapTail, false)
	if err == nil {
		return prog, nil
	}
	// ES module syntax in a .js file, or newer syntax: let esbuild
	// lower it; report goja's error if esbuild finds none.
	prog, err2 := n.transformAndWrap(file, code, api.LoaderJS)
	if err2 != nil {
		return nil, err2
	}
	return prog, nil
}

// packageType is the "type" of the nearest package.json.
func (n *node) packageType(dir string) string {
	for d := dir; ; d = path.Dir(d) {
		if pkg := n.readPackage(d); pkg != nil {
			t, _ := pkg["type"].(string)
			return t
		}
		if d == "/" || path.Base(d) == "node_modules" {
			return ""
		}
	}
}

// esbuildTarget is what goja parses natively; esbuild lowers the rest.
var esbuildTarget = api.ES2017

func (n *node) esbuild(file, code string, loader api.Loader, format api.Format) (string, error) {
	// esbuild marks a ".mjs"/".mts" importer as "node mode", whose
	// default import of a CommonJS module is module.exports even when
	// the module is an ES module that esbuild itself turned into
	// CommonJS (it carries __esModule). Every file here is converted
	// the same way, so the neutral name keeps the default export.
	src := strings.TrimSuffix(strings.TrimSuffix(file, ".mjs"), ".mts")
	if src != file {
		src += ".js"
	}
	res := api.Transform(code, api.TransformOptions{
		Loader:     loader,
		Format:     format,
		Target:     esbuildTarget,
		Platform:   api.PlatformNeutral,
		Sourcefile: src,
		Define: map[string]string{
			"import.meta.url":      "__importMetaUrl",
			"import.meta.filename": "__filename",
			"import.meta.dirname":  "__dirname",
		},
		Supported: map[string]bool{
			// goja runs these; lowering them costs size and speed.
			"async-await": true, "generator": true, "arrow": true, "class": true,
			"const-and-let": true, "destructuring": true, "template-literal": true,
			"for-of": true, "exponent-operator": true, "object-rest-spread": true, "bigint": true,
			"dynamic-import": false, "top-level-await": true,
		},
		LogLevel: api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		e := res.Errors[0]
		if e.Location != nil {
			return "", fmt.Errorf("%s:%d:%d: %s", file, e.Location.Line, e.Location.Column, e.Text)
		}
		return "", fmt.Errorf("%s: %s", file, e.Text)
	}
	return string(res.Code), nil
}

// transformAndWrap turns an ES module or TypeScript file into CommonJS
// and compiles its wrapper.
func (n *node) transformAndWrap(file, code string, loader api.Loader) (*goja.Program, error) {
	out, err := n.esbuild(file, code, loader, api.FormatCommonJS)
	if err != nil && strings.Contains(err.Error(), "Top-level await") {
		out, err = n.topLevelAwait(file, code, loader)
	}
	if err != nil {
		return nil, err
	}
	return goja.Compile(file, wrapHead+out+wrapTail, false)
}

// topLevelAwait handles a module with top-level await, which esbuild
// cannot emit as CommonJS: a first pass normalizes it as an ES module
// (TypeScript removed, one statement per line at column 0), then its
// import and re-export statements stay at the top and the rest of its
// body runs in an async function, which a second pass turns into
// CommonJS. Its own exports are not visible to importers (an entry
// script rarely has any).
func (n *node) topLevelAwait(file, code string, loader api.Loader) (string, error) {
	esm, err := n.esbuild(file, code, loader, api.FormatESModule)
	if err != nil {
		return "", err
	}
	var head, body strings.Builder
	lines := strings.Split(esm, "\n")
	inHead := false
	for _, line := range lines {
		top := line != "" && line[0] != ' ' && line[0] != '\t' && line[0] != '}' && line[0] != ')' && line[0] != ']'
		if top {
			inHead = false
			switch {
			case strings.HasPrefix(line, "import ") && !strings.HasPrefix(line, "import(") && !strings.HasPrefix(line, "import.meta"),
				strings.HasPrefix(line, "export *"),
				strings.HasPrefix(line, "export {") && strings.Contains(line, " from "):
				inHead = true
			case strings.HasPrefix(line, "export {"):
				// A local export list: its bindings live in the async
				// body, out of the module's scope.
				continue
			case strings.HasPrefix(line, "export default "):
				line = "module.exports.default = " + strings.TrimPrefix(line, "export default ")
			case strings.HasPrefix(line, "export "):
				line = strings.TrimPrefix(line, "export ")
			}
		}
		if inHead {
			head.WriteString(line)
			head.WriteByte('\n')
		} else {
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	src := head.String() + "(async () => {\n" + body.String() + "\n})();\n"
	return n.esbuild(file, src, api.LoaderJS, api.FormatCommonJS)
}
