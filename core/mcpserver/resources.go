package mcpserver

import (
	"context"
	"fmt"
	"mime"
	"net/url"
	"path"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// URIScheme is the scheme of the resources of the agent filesystem:
// agentfs:///notes/todo.md is the file /notes/todo.md.
const URIScheme = "agentfs"

// URITemplate matches every path of the agent filesystem.
const URITemplate = URIScheme + ":///{+path}"

// URIForPath returns the resource URI of a path of the agent filesystem,
// with each path segment escaped.
func URIForPath(p string) string {
	u := url.URL{Scheme: URIScheme, Path: "/" + strings.TrimLeft(p, "/")}
	// url.URL drops the empty host: put the three slashes back.
	return URIScheme + "://" + u.EscapedPath()
}

// pathForURI returns the filesystem path named by a resource URI.
func pathForURI(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", err
	}
	if u.Scheme != URIScheme || u.Host != "" || u.Opaque != "" || u.User != nil {
		return "", fmt.Errorf("not an %s:///path URI", URIScheme)
	}
	if u.Path == "" {
		return "/", nil
	}
	return u.Path, nil
}

func (s *Server) addResources() {
	s.mcp.AddResource(&mcp.Resource{
		URI:         URIScheme + ":///",
		Name:        "root",
		Title:       "Agent filesystem root",
		Description: "The root directory of the agent filesystem: one entry per line, directories end with /.",
		MIMEType:    "text/plain",
	}, s.readResource)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: URITemplate,
		Name:        "file",
		Title:       "File of the agent filesystem",
		Description: "A file of the agent filesystem by absolute path, e.g. agentfs:///notes/todo.md (segments percent-encoded). Text files come back as text, others as base64 blobs; a directory as a listing, one entry per line, directories ending with /.",
	}, s.readResource)
}

func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	p, err := pathForURI(uri)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	fsys := s.agent.FS
	st, err := fsys.Stat(ctx, p)
	if err == nil && st.IsDir() {
		ents, err := fsys.ReaddirPlus(ctx, p)
		if err != nil {
			return nil, s.resourceError(uri, err)
		}
		var b strings.Builder
		for _, e := range ents {
			b.WriteString(e.Name)
			if e.Stat.IsDir() {
				b.WriteByte('/')
			}
			b.WriteByte('\n')
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: b.String()}}}, nil
	}
	if err != nil {
		return nil, s.resourceError(uri, err)
	}
	data, err := fsys.ReadFile(ctx, p)
	if err != nil {
		return nil, s.resourceError(uri, err)
	}
	c := &mcp.ResourceContents{URI: uri, MIMEType: mime.TypeByExtension(path.Ext(p))}
	if isText(c.MIMEType, data) {
		if c.MIMEType == "" {
			c.MIMEType = "text/plain"
		}
		c.Text = string(data)
	} else {
		if c.MIMEType == "" {
			c.MIMEType = "application/octet-stream"
		}
		c.Blob = data
		if c.Blob == nil {
			c.Blob = []byte{}
		}
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
}

// resourceError maps a missing path to the MCP "resource not found"
// error and others to an error naming the POSIX code and the path.
func (s *Server) resourceError(uri string, err error) error {
	if vfs.Errno(err) == syscall.ENOENT {
		return mcp.ResourceNotFoundError(uri)
	}
	return toolError(err)
}

// isText reports whether content of the given MIME type ("" when unknown)
// goes out as text rather than as a blob.
func isText(mimeType string, data []byte) bool {
	if !utf8.Valid(data) {
		return false
	}
	if mimeType == "" {
		return true
	}
	t, _, _ := strings.Cut(mimeType, ";")
	t = strings.TrimSpace(t)
	switch {
	case strings.HasPrefix(t, "text/"),
		strings.HasSuffix(t, "+json"), strings.HasSuffix(t, "+xml"),
		strings.Contains(t, "json"), strings.Contains(t, "xml"),
		strings.Contains(t, "javascript"), strings.Contains(t, "yaml"), strings.Contains(t, "toml"),
		t == "application/x-sh", t == "application/sql":
		return true
	}
	return false
}
