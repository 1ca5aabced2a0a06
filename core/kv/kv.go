// Package kv is the key-value store of an agent: string keys, JSON values.
package kv

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentfs-go/agentfs/core/store"
)

// ErrNotFound is returned by Get for a missing key.
var ErrNotFound = errors.New("key not found")

// Store is the key-value store of one database.
type Store struct{ db *store.DB }

// New returns the store of db.
func New(db *store.DB) *Store { return &Store{db: db} }

// Entry is one key with its value and timestamps (Unix seconds).
type Entry struct {
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	CreatedAt int64           `json:"created_at"`
	UpdatedAt int64           `json:"updated_at"`
}

func checkKey(key string) error {
	if key == "" {
		return errors.New("kv: empty key")
	}
	if strings.IndexByte(key, 0) >= 0 {
		return fmt.Errorf("kv: key %q contains a NUL byte", key)
	}
	if !utf8.ValidString(key) {
		return fmt.Errorf("kv: key %q is not valid UTF-8", key)
	}
	return nil
}

// SetJSON stores raw JSON text under key, replacing any previous value.
func (s *Store) SetJSON(ctx context.Context, key string, value []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	// JSON text is UTF-8 (RFC 8259); json.Valid does not check that.
	if !json.Valid(value) || !utf8.Valid(value) {
		return fmt.Errorf("kv: value for %q is not valid JSON", key)
	}
	compact, err := compactJSON(value)
	if err != nil {
		return err
	}
	now := time.Now().Unix()
	return s.db.WriteOne(ctx, func(c *store.Conn) error {
		_, err := c.Exec(`INSERT INTO kv_store (key, value, created_at, updated_at) VALUES (CAST(? AS TEXT), ?, ?, ?)
			ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, []byte(key), compact, now, now)
		return err
	})
}

// Set stores v, encoded as JSON, under key.
func (s *Store) Set(ctx context.Context, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("kv: encode %q: %w", key, err)
	}
	return s.SetJSON(ctx, key, b)
}

// GetJSON returns the JSON text stored under key, or ErrNotFound.
func (s *Store) GetJSON(ctx context.Context, key string) (json.RawMessage, error) {
	var v []byte
	err := s.db.Query(ctx, func(c *store.Conn) error {
		return c.QueryRow("SELECT CAST(value AS BLOB) FROM kv_store WHERE key = CAST(? AS TEXT)", []byte(key)).Scan(&v)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("kv: %q: %w", key, ErrNotFound)
	}
	return v, err
}

// Get decodes the value under key into out.
func (s *Store) Get(ctx context.Context, key string, out any) error {
	raw, err := s.GetJSON(ctx, key)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// Delete removes key; a missing key is not an error. It reports whether
// the key existed.
func (s *Store) Delete(ctx context.Context, key string) (bool, error) {
	var n int64
	err := s.db.WriteOne(ctx, func(c *store.Conn) error {
		r, err := c.Exec("DELETE FROM kv_store WHERE key = CAST(? AS TEXT)", []byte(key))
		if err != nil {
			return err
		}
		n, _ = r.RowsAffected()
		return nil
	})
	return n > 0, err
}

// List returns the entries whose key starts with prefix (exactly, case
// sensitive), in key order. It is a range scan of the primary key index:
// key >= prefix AND key < the next string after every key with that prefix.
// limit <= 0 means no limit.
func (s *Store) List(ctx context.Context, prefix string, limit int) ([]Entry, error) {
	q := "SELECT CAST(key AS BLOB), CAST(value AS BLOB), COALESCE(created_at, 0), COALESCE(updated_at, 0) FROM kv_store"
	var args []any
	if prefix != "" {
		q += " WHERE key >= CAST(? AS TEXT)"
		args = append(args, []byte(prefix))
		if upper, ok := prefixUpperBound(prefix); ok {
			// The bound may not be valid UTF-8: bind its bytes as TEXT.
			q += " AND key < CAST(? AS TEXT)"
			args = append(args, []byte(upper))
		}
	}
	q += " ORDER BY key"
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	var out []Entry
	err := s.db.Query(ctx, func(c *store.Conn) error {
		rows, err := c.Query(q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k, v []byte
			var e Entry
			if err := rows.Scan(&k, &v, &e.CreatedAt, &e.UpdatedAt); err != nil {
				return err
			}
			e.Key, e.Value = string(k), json.RawMessage(v)
			out = append(out, e)
		}
		return rows.Err()
	})
	return out, err
}

// Keys, prefixes and bounds are bound as bytes cast to TEXT, never as Go
// strings: the driver refuses a string that is not valid UTF-8 (a byte
// prefix such as "\xc3", or any key given to Get and Delete) and cuts one
// at its first NUL, so Delete("a\x00b") deleted the key "a".

// prefixUpperBound returns the smallest string greater than every string
// with the given prefix, in SQLite's bytewise (BINARY) order.
func prefixUpperBound(prefix string) (string, bool) {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}

func compactJSON(v []byte) (string, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return "", err
	}
	return b.String(), nil
}
