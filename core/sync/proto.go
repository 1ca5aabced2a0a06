package sync

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// The protobuf messages of the /pull-updates endpoint (see docs/SYNC.md
// for the field numbers, taken from the protocol's definition).

// PageSize is the only page size the protocol carries.
const PageSize = 4096

type pullRequest struct {
	Encoding          int64  // 1: 0 raw, 1 zstd
	ServerRevision    string // 2
	ClientRevision    string // 3
	LongPollTimeoutMS uint64 // 4
	ServerPagesSel    []byte // 5: roaring bitmap of 0-based page ids
	ClientPages       []byte // 6
	ServerQuerySel    string // 7
	StreamKind        int64  // 8: 0 pages, 1 MVCC logical log
}

type pullHeader struct {
	ServerRevision string // 1
	DBSize         uint64 // 2: pages
	Raw            bool   // 3: empty message PageSetRawEncodingProto
	Zstd           bool   // 4
	StreamKind     int64  // 5
	ApplyMode      int64  // 6
	Protocol       int64  // 8: 1 pages
}

type pageData struct {
	PageID uint64 // 1: 0-based
	Page   []byte // 2
}

func (r *pullRequest) marshal() []byte {
	var b []byte
	if r.Encoding != 0 {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(r.Encoding))
	}
	if r.ServerRevision != "" {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, r.ServerRevision)
	}
	if r.ClientRevision != "" {
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendString(b, r.ClientRevision)
	}
	if r.LongPollTimeoutMS != 0 {
		b = protowire.AppendTag(b, 4, protowire.VarintType)
		b = protowire.AppendVarint(b, r.LongPollTimeoutMS)
	}
	if len(r.ServerPagesSel) > 0 {
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		b = protowire.AppendBytes(b, r.ServerPagesSel)
	}
	if r.ServerQuerySel != "" {
		b = protowire.AppendTag(b, 7, protowire.BytesType)
		b = protowire.AppendString(b, r.ServerQuerySel)
	}
	return b
}

// fields walks the fields of one message, calling f with each field's
// number and its varint value or bytes.
func fields(b []byte, f func(num protowire.Number, v uint64, data []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			if err := f(num, v, nil); err != nil {
				return err
			}
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			if err := f(num, 0, v); err != nil {
				return err
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	return nil
}

func (r *pullRequest) unmarshal(b []byte) error {
	return fields(b, func(num protowire.Number, v uint64, data []byte) error {
		switch num {
		case 1:
			r.Encoding = int64(v)
		case 2:
			r.ServerRevision = string(data)
		case 3:
			r.ClientRevision = string(data)
		case 4:
			r.LongPollTimeoutMS = v
		case 5:
			r.ServerPagesSel = append([]byte(nil), data...)
		case 6:
			r.ClientPages = append([]byte(nil), data...)
		case 7:
			r.ServerQuerySel = string(data)
		case 8:
			r.StreamKind = int64(v)
		}
		return nil
	})
}

func (h *pullHeader) marshal() []byte {
	var b []byte
	if h.ServerRevision != "" {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, h.ServerRevision)
	}
	if h.DBSize != 0 {
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, h.DBSize)
	}
	if h.Raw {
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendBytes(b, nil)
	}
	if h.Protocol != 0 {
		b = protowire.AppendTag(b, 8, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(h.Protocol))
	}
	return b
}

func (h *pullHeader) unmarshal(b []byte) error {
	return fields(b, func(num protowire.Number, v uint64, data []byte) error {
		switch num {
		case 1:
			h.ServerRevision = string(data)
		case 2:
			h.DBSize = v
		case 3:
			h.Raw = true
		case 4:
			h.Zstd = true
		case 5:
			h.StreamKind = int64(v)
		case 6:
			h.ApplyMode = int64(v)
		case 8:
			h.Protocol = int64(v)
		}
		return nil
	})
}

func (p *pageData) marshal() []byte {
	var b []byte
	if p.PageID != 0 {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, p.PageID)
	}
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	return protowire.AppendBytes(b, p.Page)
}

func (p *pageData) unmarshal(b []byte) error {
	return fields(b, func(num protowire.Number, v uint64, data []byte) error {
		switch num {
		case 1:
			p.PageID = v
		case 2:
			p.Page = append([]byte(nil), data...)
		}
		return nil
	})
}

// delimited prefixes a message with its length (varint), as the response
// stream of /pull-updates frames every message.
func delimited(msg []byte) []byte {
	b := protowire.AppendVarint(make([]byte, 0, len(msg)+5), uint64(len(msg)))
	return append(b, msg...)
}

// errShortMessage is a stream that ended inside a message.
var errShortMessage = errors.New("pull-updates: the response ended inside a message (connection cut?)")

// readDelimited reads one length-prefixed message; io.EOF at a message
// boundary.
func readDelimited(r interface{ ReadByte() (byte, error) }, read func([]byte) error) ([]byte, error) {
	var n uint64
	for shift := uint(0); ; shift += 7 {
		c, err := r.ReadByte()
		if err != nil {
			if shift == 0 {
				return nil, err
			}
			return nil, errShortMessage
		}
		if shift > 63 {
			return nil, errors.New("pull-updates: bad length prefix")
		}
		n |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			break
		}
	}
	if n > 64<<20 {
		return nil, fmt.Errorf("pull-updates: message of %d bytes is too large", n)
	}
	buf := make([]byte, n)
	if err := read(buf); err != nil {
		return nil, errShortMessage
	}
	return buf, nil
}
