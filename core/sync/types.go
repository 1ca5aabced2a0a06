package sync

import (
	"net/http"

	"github.com/agentfs-go/agentfs/core/store"
)

// The types of the client's API, shared by the cgo build (client.go) and
// builds without cgo (nocgo.go).

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
}
