package sync

import (
	"encoding/binary"
	"errors"
	"sort"
)

// The protocol selects pages with a RoaringBitmap in its portable
// serialization (the format every Roaring implementation reads): cookie
// 12346 (no run containers; a 32-bit container count and always an
// offset table) or 12347 (run containers; count in the cookie's high 16
// bits, a run bitmap, offsets only from 4 containers on). Containers hold
// the low 16 bits of values sharing a high 16-bit key: an array of uint16
// (at most 4096 values), a bitmap of 65536 bits, or runs (start,
// length-1).

const (
	cookieNoRun = 12346
	cookieRun   = 12347
)

var errBitmap = errors.New("malformed page selector bitmap")

func decodeRoaring(b []byte) ([]uint32, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b) < 4 {
		return nil, errBitmap
	}
	cookie := binary.LittleEndian.Uint32(b)
	pos := 4
	var size int
	var runs []byte
	switch {
	case cookie == cookieNoRun:
		if len(b) < 8 {
			return nil, errBitmap
		}
		size = int(binary.LittleEndian.Uint32(b[4:]))
		pos = 8
	case cookie&0xffff == cookieRun:
		size = int(cookie>>16) + 1
		n := (size + 7) / 8
		if len(b) < pos+n {
			return nil, errBitmap
		}
		runs = b[pos : pos+n]
		pos += n
	default:
		return nil, errBitmap
	}
	if size > 1<<16 || len(b) < pos+4*size {
		return nil, errBitmap
	}
	keys := make([]uint16, size)
	cards := make([]int, size)
	for i := range size {
		keys[i] = binary.LittleEndian.Uint16(b[pos:])
		cards[i] = int(binary.LittleEndian.Uint16(b[pos+2:])) + 1
		pos += 4
	}
	if runs == nil || size >= 4 {
		pos += 4 * size // offsets: the containers follow in order anyway
	}
	var out []uint32
	for i := range size {
		hi := uint32(keys[i]) << 16
		isRun := runs != nil && runs[i/8]&(1<<(i%8)) != 0
		switch {
		case isRun:
			if len(b) < pos+2 {
				return nil, errBitmap
			}
			n := int(binary.LittleEndian.Uint16(b[pos:]))
			pos += 2
			if len(b) < pos+4*n {
				return nil, errBitmap
			}
			for range n {
				start := uint32(binary.LittleEndian.Uint16(b[pos:]))
				length := uint32(binary.LittleEndian.Uint16(b[pos+2:]))
				pos += 4
				for v := start; v <= start+length && v < 1<<16; v++ {
					out = append(out, hi|v)
				}
			}
		case cards[i] <= 4096:
			if len(b) < pos+2*cards[i] {
				return nil, errBitmap
			}
			for range cards[i] {
				out = append(out, hi|uint32(binary.LittleEndian.Uint16(b[pos:])))
				pos += 2
			}
		default:
			if len(b) < pos+8192 {
				return nil, errBitmap
			}
			for w := range 1024 {
				word := binary.LittleEndian.Uint64(b[pos+8*w:])
				for bit := range 64 {
					if word&(1<<bit) != 0 {
						out = append(out, hi|uint32(w*64+bit))
					}
				}
			}
			pos += 8192
		}
	}
	return out, nil
}

// encodeRoaring writes values in the no-run format (cookie 12346).
func encodeRoaring(vals []uint32) []byte {
	vals = append([]uint32(nil), vals...)
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	type container struct {
		key  uint16
		lows []uint16
	}
	var cs []container
	for i, v := range vals {
		if i > 0 && v == vals[i-1] {
			continue
		}
		k := uint16(v >> 16)
		if len(cs) == 0 || cs[len(cs)-1].key != k {
			cs = append(cs, container{key: k})
		}
		cs[len(cs)-1].lows = append(cs[len(cs)-1].lows, uint16(v))
	}
	b := binary.LittleEndian.AppendUint32(nil, cookieNoRun)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(cs)))
	for _, c := range cs {
		b = binary.LittleEndian.AppendUint16(b, c.key)
		b = binary.LittleEndian.AppendUint16(b, uint16(len(c.lows)-1))
	}
	off := len(b) + 4*len(cs)
	for _, c := range cs {
		b = binary.LittleEndian.AppendUint32(b, uint32(off))
		if len(c.lows) <= 4096 {
			off += 2 * len(c.lows)
		} else {
			off += 8192
		}
	}
	for _, c := range cs {
		if len(c.lows) <= 4096 {
			for _, l := range c.lows {
				b = binary.LittleEndian.AppendUint16(b, l)
			}
			continue
		}
		var words [1024]uint64
		for _, l := range c.lows {
			words[l/64] |= 1 << (l % 64)
		}
		for _, w := range words {
			b = binary.LittleEndian.AppendUint64(b, w)
		}
	}
	return b
}
