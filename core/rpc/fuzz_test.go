package rpc

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
)

// frameBytes is f with its length prefix.
func frameBytes(t testing.TB, f *v1.Frame) []byte {
	b, err := proto.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// frameSeeds are streams a client could send: well formed, truncated and
// lying about their length.
func frameSeeds(t testing.TB) [][]byte {
	hello := frameBytes(t, &v1.Frame{Id: 1, Body: &v1.Frame_Hello{Hello: &v1.Hello{ProtocolVersion: ProtocolVersion, Client: "fuzz"}}})
	call := frameBytes(t, &v1.Frame{Id: 2, Body: &v1.Frame_Call{Call: &v1.Call{Method: "agentfs.v1.FilesystemService/Stat", Payload: []byte{10, 1, '/'}}}})
	ping := frameBytes(t, &v1.Frame{Id: 3, Body: &v1.Frame_Ping{Ping: &v1.Ping{}}})
	cancel := frameBytes(t, &v1.Frame{Id: 4, Body: &v1.Frame_Cancel{Cancel: &v1.Cancel{}}})
	result := frameBytes(t, &v1.Frame{Id: 5, Body: &v1.Frame_Result{Result: &v1.Result{Payload: []byte("x")}}})
	shutdown := frameBytes(t, &v1.Frame{Id: 6, Body: &v1.Frame_Shutdown{Shutdown: &v1.Shutdown{}}})
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	return [][]byte{
		nil,
		{0, 0, 0},
		{0, 0, 0, 0},
		{0x40, 0, 0, 0, 1, 2, 3},          // 1 GiB claimed, 3 bytes sent
		{0xff, 0xff, 0xff, 0xff, 1, 2, 3}, // beyond MaxFrame
		{0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff, 0xff},
		hello,
		hello[:len(hello)-1],
		cat(hello, call, ping, cancel, result, shutdown),
		cat(hello, ping, call[:len(call)-2]),
		cat(hello, []byte{0, 0, 0, 2, 0x0a, 0x05}), // a Hello field whose length runs past the frame
	}
}

// FuzzStdioFrames: whatever bytes a client sends, reading and splitting
// frames gives frames or an error, never a panic, and never a buffer
// larger than the bytes that arrived.
func FuzzStdioFrames(f *testing.F) {
	for _, s := range frameSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := newStdioConn(bytes.NewReader(data), io.Discard, io.Discard, "fuzz")
		read := 0
		for {
			buf, err := c.readFrame()
			if err != nil {
				if len(buf) != 0 {
					t.Fatalf("frame of %d bytes returned with error %v", len(buf), err)
				}
				break
			}
			read += 4 + len(buf)
			if read > len(data) || cap(buf) > len(data) {
				t.Fatalf("frame buffer of cap %d from %d input bytes", cap(buf), len(data))
			}
			var fr v1.Frame
			_ = proto.Unmarshal(buf, &fr) // the handshake's parse
			_, field, body, err := splitFrame(buf)
			if err != nil {
				continue
			}
			switch field {
			case fieldCall:
				splitCall(body)
			case fieldResult:
				var res v1.Result
				_ = proto.Unmarshal(body, &res)
			}
		}
	})
}

// FuzzStdioServe runs the whole engine on what a client sends. A first
// frame that is a Hello gets its open options replaced by a database in
// the test's temporary directory, so that fuzzing never opens or creates
// a file elsewhere on the host; everything after it is sent as is.
func FuzzStdioServe(f *testing.F) {
	for _, s := range frameSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		data = confineHello(t, data, filepath.Join(t.TempDir(), "a.db"))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := ServeStdio(ctx, bytes.NewReader(data), io.Discard, io.Discard, "fuzz")
		_ = err // any error is an acceptable answer to random bytes; a panic is not
	})
}

// confineHello rewrites the open options of a leading Hello frame.
func confineHello(t *testing.T, data []byte, db string) []byte {
	if len(data) < 4 {
		return data
	}
	n := binary.BigEndian.Uint32(data)
	if uint64(n) > uint64(len(data)-4) {
		return data
	}
	var fr v1.Frame
	if proto.Unmarshal(data[4:4+n], &fr) != nil || fr.GetHello() == nil {
		return data
	}
	h := fr.GetHello()
	o := h.GetOpen()
	if o == nil {
		o = &v1.OpenOptions{}
	}
	// Keep the options that do not name a host file.
	h.Open = &v1.OpenOptions{Path: db, ReadOnly: o.GetReadOnly(), NoCreate: o.GetNoCreate(), ChunkSize: o.GetChunkSize(), Durability: o.GetDurability()}
	return append(frameBytes(t, &fr), data[4+n:]...)
}

// A length prefix is a claim, not an allocation: 1 GiB announced and a
// few bytes sent costs the engine about the bytes sent.
func TestAttack_Parse_StdioFrameHugeLength(t *testing.T) {
	data := append([]byte{0x40, 0, 0, 0}, make([]byte, 100)...)
	c := newStdioConn(bytes.NewReader(data), io.Discard, io.Discard, "test")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	buf, err := c.readFrame()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) || buf != nil {
		t.Fatalf("readFrame = %d bytes, %v; want ErrUnexpectedEOF", len(buf), err)
	}
	// The reader's own 256 KiB buffer plus one 1 MiB step, not 1 GiB.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("reading a truncated 1 GiB frame allocated %d bytes", grew)
	}
	c = newStdioConn(bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff, 1}), io.Discard, io.Discard, "test")
	if _, err := c.readFrame(); err == nil {
		t.Error("a frame beyond MaxFrame was accepted")
	}
	// A large frame that does arrive whole is read whole.
	big := make([]byte, 3<<20+5)
	for i := range big {
		big[i] = byte(i)
	}
	c = newStdioConn(bytes.NewReader(append(binary.BigEndian.AppendUint32(nil, uint32(len(big))), big...)), io.Discard, io.Discard, "test")
	got, err := c.readFrame()
	if err != nil || !bytes.Equal(got, big) {
		t.Errorf("large frame: %d bytes, %v", len(got), err)
	}
}

// A stream of random bytes as the first frame is refused by the
// handshake, with an answer, never a panic.
func TestAttack_Parse_StdioGarbageHandshake(t *testing.T) {
	for _, data := range [][]byte{
		{0, 0, 0, 3, 0xff, 0xff, 0xff},
		{0, 0, 0, 2, 0x0a, 0x05},
		[]byte("GET / HTTP/1.1\r\n\r\n"),
	} {
		var out bytes.Buffer
		err := ServeStdio(context.Background(), bytes.NewReader(data), &out, io.Discard, "test")
		if err == nil {
			t.Errorf("%q: handshake accepted", data)
		}
	}
}
