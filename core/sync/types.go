package sync

import (
	"errors"
	"net/http"

	"github.com/agentfs-go/agentfs/core/store"
)

// The types of the client's API, shared by the cgo build (client.go) and
// builds without cgo (nocgo.go).

// DefaultHistoryBytes bounds the page history the server keeps per
// database (Server.HistoryBytes).
const DefaultHistoryBytes = 256 << 20

// Options of a sync operation.
type Options struct {
	// Token is sent as "Authorization: Bearer TOKEN" when set.
	Token string
	// HTTP is the client to use (default: one with a 5-minute timeout).
	HTTP *http.Client
	// Encryption is the local database's key and cipher (nil: plain).
	// The base kept beside it is then encrypted with the same key; the
	// wire and the remote hold plain pages (docs/SYNC.md).
	Encryption *store.Encryption
	// Partial, at a bootstrap, fetches only a subset of the remote's
	// pages; the rest arrive when read (docs/SYNC.md, "Partial sync").
	Partial *Partial
}

// Partial is a partial bootstrap (the options of Turso's AgentFS
// --sync-partial-*): the pages of a prefix of BootstrapLength bytes, or
// the pages the server reads to run BootstrapQuery; later reads of absent
// pages fetch them in segments of SegmentSize bytes (default 128 KiB),
// with Prefetch also the children of fetched interior b-tree pages.
type Partial struct {
	BootstrapLength int64  `json:"bootstrap_length,omitempty"`
	BootstrapQuery  string `json:"bootstrap_query,omitempty"`
	SegmentSize     int    `json:"segment_size,omitempty"`
	Prefetch        bool   `json:"prefetch,omitempty"`
}

// Check refuses a partial bootstrap that names no part of the remote,
// both parts, or a negative size (EINVAL): the one check behind `agentfs
// init --sync-partial-*`, the SDKs' handshake and Bootstrap itself.
func (p *Partial) Check() error {
	switch {
	case p.BootstrapLength < 0 || p.SegmentSize < 0:
		return errors.New("partial sync sizes (bootstrap length, segment size) are byte counts, not negative (EINVAL)")
	case p.BootstrapLength > 0 && p.BootstrapQuery != "":
		return errors.New("a partial bootstrap takes a prefix length or a query: they exclude each other (EINVAL)")
	case p.BootstrapLength == 0 && p.BootstrapQuery == "":
		return errors.New("partial sync needs a bootstrap: a prefix length (bytes) or a query (SQL) (EINVAL)")
	}
	return nil
}

func (p *Partial) segmentPages() int {
	s := p.SegmentSize
	if s <= 0 {
		s = 128 << 10
	}
	return max(1, s/PageSize)
}

// PullResult says what a pull did.
type PullResult struct {
	Revision string
	Changed  bool // the remote had changes
	Applied  int  // rows applied locally
	Kept     int  // remote rows not applied: the local version wins
}

// PushResult says what a push did.
type PushResult struct {
	Rows     int // rows sent
	Revision string
}

// Stats is the JSON of "agentfs sync ID stats" (the field names of
// Turso's sync statistics).
type Stats struct {
	CDCOperations        int64  `json:"cdc_operations"`
	MainWALSize          int64  `json:"main_wal_size"`
	RevertWALSize        int64  `json:"revert_wal_size"`
	LastPullUnixTime     *int64 `json:"last_pull_unix_time"`
	LastPushUnixTime     *int64 `json:"last_push_unix_time"`
	Revision             string `json:"revision"`
	NetworkSentBytes     int64  `json:"network_sent_bytes"`
	NetworkReceivedBytes int64  `json:"network_received_bytes"`
	RemoteURL            string `json:"remote_url"`
	// MissingPages counts the pages a partially bootstrapped agent has
	// not fetched yet (0 once whole). While it is not 0, CDCOperations is
	// -1: counting local changes would read, and so fetch, every page.
	MissingPages int64 `json:"partial_missing_pages"`
}

// Meta is the sync state of a local database (P-sync.json).
type Meta struct {
	RemoteURL    string `json:"remote_url"`
	ClientID     string `json:"client_id"`
	Revision     string `json:"revision"`
	LastPull     int64  `json:"last_pull_unix_time,omitempty"`
	LastPush     int64  `json:"last_push_unix_time,omitempty"`
	SentBytes    int64  `json:"network_sent_bytes"`
	ReceivedByte int64  `json:"network_received_bytes"`
	Pushes       int64  `json:"pushes"`
	// Partial is set while the agent has pages it has not fetched yet:
	// they are read at Revision, the revision of the bootstrap.
	Partial *Partial `json:"partial,omitempty"`
}
