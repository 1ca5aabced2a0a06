package crypt

import (
	"bytes"
	"crypto/cipher"
	"encoding/hex"
	"math/rand"
	"strings"
	"testing"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The valid test vectors of draft-irtf-cfrg-aegis-aead (appendix A: the
// 128-bit tags of AEGIS-128L, AEGIS-256, and AEGIS-128X2/X4 and
// AEGIS-256X2/X4), sealed and opened again. They run on the kernels this
// machine uses (assembly where the CPU has AES instructions); `go test
// -tags purego` runs them on the pure-Go ones.
func TestAegis_SpecVectors(t *testing.T) {
	t.Logf("assembly kernels: %v", aegisAsm)
	for _, v := range []struct {
		name                string
		new                 func([]byte) (cipher.AEAD, error)
		key, nonce, ad, msg string
		ct, tag             string
	}{
		{"aegis-128l-1", newAegis128L, "10010000000000000000000000000000", "10000200000000000000000000000000", "", "00000000000000000000000000000000",
			"c1c0e58bd913006feba00f4b3cc3594e", "abe0ece80c24868a226a35d16bdae37a"},
		{"aegis-128l-2", newAegis128L, "10010000000000000000000000000000", "10000200000000000000000000000000", "", "",
			"", "c2b879a67def9d74e6c14f708bbcc9b4"},
		{"aegis-128l-3", newAegis128L, "10010000000000000000000000000000", "10000200000000000000000000000000", "0001020304050607", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
			"79d94593d8c2119d7e8fd9b8fc77845c5c077a05b2528b6ac54b563aed8efe84", "cc6f3372f6aa1bb82388d695c3962d9a"},
		{"aegis-128l-4", newAegis128L, "10010000000000000000000000000000", "10000200000000000000000000000000", "0001020304050607", "000102030405060708090a0b0c0d",
			"79d94593d8c2119d7e8fd9b8fc77", "5c04b3dba849b2701effbe32c7f0fab7"},
		{"aegis-128l-5", newAegis128L, "10010000000000000000000000000000", "10000200000000000000000000000000", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20212223242526272829", "101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f3031323334353637",
			"b31052ad1cca4e291abcf2df3502e6bdb1bfd6db36798be3607b1f94d34478aa7ede7f7a990fec10", "7542a745733014f9474417b337399507"},
		{"aegis-256-1", newAegis256, "1001000000000000000000000000000000000000000000000000000000000000", "1000020000000000000000000000000000000000000000000000000000000000", "", "00000000000000000000000000000000",
			"754fc3d8c973246dcc6d741412a4b236", "3fe91994768b332ed7f570a19ec5896e"},
		{"aegis-256-2", newAegis256, "1001000000000000000000000000000000000000000000000000000000000000", "1000020000000000000000000000000000000000000000000000000000000000", "", "",
			"", "e3def978a0f054afd1e761d7553afba3"},
		{"aegis-256-3", newAegis256, "1001000000000000000000000000000000000000000000000000000000000000", "1000020000000000000000000000000000000000000000000000000000000000", "0001020304050607", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
			"f373079ed84b2709faee373584585d60accd191db310ef5d8b11833df9dec711", "8d86f91ee606e9ff26a01b64ccbdd91d"},
		{"aegis-256-4", newAegis256, "1001000000000000000000000000000000000000000000000000000000000000", "1000020000000000000000000000000000000000000000000000000000000000", "0001020304050607", "000102030405060708090a0b0c0d",
			"f373079ed84b2709faee37358458", "c60b9c2d33ceb058f96e6dd03c215652"},
		{"aegis-256-5", newAegis256, "1001000000000000000000000000000000000000000000000000000000000000", "1000020000000000000000000000000000000000000000000000000000000000", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20212223242526272829", "101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f3031323334353637",
			"57754a7d09963e7c787583a2e7b859bb24fa1e04d49fd550b2511a358e3bca252a9b1b8b30cc4a67", "ab8a7d53fd0e98d727accca94925e128"},
		{"aegis-128x2-1", newAegis128X2, "000102030405060708090a0b0c0d0e0f", "101112131415161718191a1b1c1d1e1f", "", "",
			"", "63117dc57756e402819a82e13eca8379"},
		{"aegis-128x2-2", newAegis128X2, "000102030405060708090a0b0c0d0e0f", "101112131415161718191a1b1c1d1e1f", "0102030401020304", strings.Repeat("04050607", 30),
			"5795544301997f93621b278809d6331b3bfa6f18e90db12c4aa35965b5e98c5fc6fb4e54bcb6111842c20637252eff747cb3a8f85b37de80919a589fe0f24872bc926360696739e05520647e390989e1eb5fd42f99678a0276a498f8c454761c9d6aacb647ad56be62b29c22cd4b5761b38f43d5a5ee062f", "1aebc200804f405cab637f2adebb6d77"},
		{"aegis-128x4-1", newAegis128X4, "000102030405060708090a0b0c0d0e0f", "101112131415161718191a1b1c1d1e1f", "", "",
			"", "5bef762d0947c00455b97bb3af30dfa3"},
		{"aegis-128x4-2", newAegis128X4, "000102030405060708090a0b0c0d0e0f", "101112131415161718191a1b1c1d1e1f", "0102030401020304", strings.Repeat("04050607", 30),
			"e836118562f4479c9d35c17356a833114c21f9aa39e4dda5e5c87f4152a00fce9a7c38f832eafe8b1c12f8a7cf12a81a1ad8a9c24ba9dedfbdaa586ffea67ddc801ea97d9ab4a872f42d0e352e2713dacd609f9442c17517c5a29daf3e2a3fac4ff6b1380c4e46df7b086af6ce6bc1ed594b8dd64aed2a7e", "0e56ab94e2e85db80f9d54010caabfb4"},
		{"aegis-256x2-1", newAegis256X2, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f", "", "",
			"", "62cdbab084c83dacdb945bb446f049c8"},
		{"aegis-256x2-2", newAegis256X2, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f", "0102030401020304", strings.Repeat("04050607", 30),
			"72120c2ea8236180d67859001f4729077b7064c414384fe3a7b52f1571f4f8a7d0f01e18db4f3bc0adb150702e5d147a8d36522132761b994c1bd395589e2ccf0790dfe2a3d12d61cd666b2859827739db4037dd3124c78424459376f6cac08e1a7223a2a43e398ce6385cd654a19f481cba3b8f25910b42", "635d391828520bf1512763f0c8f5cdbd"},
		{"aegis-256x4-1", newAegis256X4, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f", "", "",
			"", "3b7fee6cee7bf17888ad11ed2397beb4"},
		{"aegis-256x4-2", newAegis256X4, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f", "0102030401020304", strings.Repeat("04050607", 30),
			"bfc2085b7e8017da99b0b6d646ae4d01f4ba8f2e7dfca1d759ae48a135139b9aaac6b4f5db810d426be1fdaff4e1454153a34b11da78ed7e418ee2ee9853042e95536aecbb694cea1b16a478eb0d4d1bf6509b1ce652a45af58e0e46ffccfa2d0426e702391d2ff5813808b81748a490dd656465fed61f09", "b63b611b13975e2f3dc3cb6c2397bfcd"},
	} {
		a, err := v.new(unhex(t, v.key))
		if err != nil {
			t.Fatal(err)
		}
		nonce, msg, ad := unhex(t, v.nonce), unhex(t, v.msg), unhex(t, v.ad)
		got := a.Seal(nil, nonce, msg, ad)
		want := append(unhex(t, v.ct), unhex(t, v.tag)...)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: got %x, want %x", v.name, got, want)
			continue
		}
		pt, err := a.Open(nil, nonce, got, ad)
		if err != nil || !bytes.Equal(pt, msg) {
			t.Errorf("%s: open: %v", v.name, err)
		}
	}
}

// Open inverts Seal for lengths that end inside a block, in place too,
// and refuses a flipped bit anywhere.
func TestAegis_RoundTrip(t *testing.T) {
	for _, name := range Ciphers() {
		c := ciphers[name]
		key := bytes.Repeat([]byte{7}, c.key)
		a, err := c.newAEAD(key)
		if err != nil {
			t.Fatal(err)
		}
		nonce := bytes.Repeat([]byte{9}, c.nonce)
		for _, n := range []int{0, 1, 15, 16, 17, 31, 33, 127, 128, 129, 4000} {
			msg := bytes.Repeat([]byte("marker"), n)[:n]
			ct := a.Seal(nil, nonce, msg, []byte("ad"))
			buf := append([]byte{}, ct...)
			pt, err := a.Open(buf[:0], nonce, buf, []byte("ad"))
			if err != nil || !bytes.Equal(pt, msg) {
				t.Fatalf("%s len %d: round trip failed: %v", name, n, err)
			}
			for _, at := range []int{0, len(ct) / 2, len(ct) - 1} {
				bad := append([]byte{}, ct...)
				bad[at] ^= 1
				if _, err := a.Open(nil, nonce, bad, []byte("ad")); err == nil {
					t.Fatalf("%s len %d: ciphertext flipped at %d opened", name, n, at)
				}
			}
		}
	}
}

// FuzzAegisKernels: the kernels in use (the assembly ones where the CPU
// has AES instructions) leave the same state and output as the pure-Go
// ones, for any state, message, lane count and operation. Without
// assembly it compares the pure-Go kernels with themselves and proves
// nothing; the seed corpus runs in every `go test`.
func FuzzAegisKernels(f *testing.F) {
	r := rand.New(rand.NewSource(1))
	for sel := range 12 {
		seed := make([]byte, 128)
		r.Read(seed)
		msg := make([]byte, 16+r.Intn(1024))
		r.Read(msg)
		f.Add(uint8(sel), seed, msg)
	}
	f.Fuzz(checkKernels)
}

// TestAegis_KernelsRandom is FuzzAegisKernels on a few hundred random
// inputs, in every run (and where fuzzing cannot run, as under an
// emulator).
func TestAegis_KernelsRandom(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for range 400 {
		seed := make([]byte, 1+r.Intn(128))
		r.Read(seed)
		msg := make([]byte, r.Intn(2048))
		r.Read(msg)
		checkKernels(t, uint8(r.Intn(256)), seed, msg)
	}
}

func checkKernels(t *testing.T, sel uint8, seed, msg []byte) {
	wide, op, lanes := sel&1 != 0, int(sel>>1)%3, []int{1, 2, 4}[int(sel>>3)%3]
	stride := 32 * lanes
	if wide {
		stride = 16 * lanes
	}
	n := len(msg) / stride
	if n == 0 || len(seed) == 0 {
		return
	}
	var s0 state
	for i := range 128 {
		s0[i/16][i%16] = seed[i%len(seed)] ^ byte(i)
	}
	if wide {
		s0[6], s0[7] = block{}, block{} // not AEGIS-256's
	}
	// The initialization rounds, with message and context blocks from
	// the message.
	var m [4]block
	var c block
	for i := range 64 {
		m[i/16][i%16] = msg[i%len(msg)]
	}
	copy(c[:], msg[len(msg)-min(16, len(msg)):])
	got, want := s0, s0
	if wide {
		init256(&got, &m, &c)
		init256Generic(&want, &m, &c)
	} else {
		m2 := [2]block{m[0], m[1]}
		init128(&got, &m2, &c)
		init128Generic(&want, &m2, &c)
	}
	if got != want {
		t.Fatalf("wide %v: initialization kernels disagree", wide)
	}
	for i := range lanes {
		got, want := s0, s0
		dstGot, dstWant := make([]byte, n*stride), make([]byte, n*stride)
		src, dg, dw := msg[16*i:n*stride], dstGot[16*i:], dstWant[16*i:]
		switch {
		case wide && op == 0:
			absorb256(&got, src, n, stride)
			kernel256Generic(0, &want, nil, src, n, stride)
		case wide && op == 1:
			enc256(&got, dg, src, n, stride)
			kernel256Generic(1, &want, dw, src, n, stride)
		case wide:
			dec256(&got, dg, src, n, stride)
			kernel256Generic(2, &want, dw, src, n, stride)
		case op == 0:
			absorb128(&got, src, n, stride)
			kernel128Generic(0, &want, nil, src, n, stride)
		case op == 1:
			enc128(&got, dg, src, n, stride)
			kernel128Generic(1, &want, dw, src, n, stride)
		default:
			dec128(&got, dg, src, n, stride)
			kernel128Generic(2, &want, dw, src, n, stride)
		}
		if got != want || !bytes.Equal(dstGot, dstWant) {
			t.Fatalf("wide %v op %d lanes %d lane %d chunks %d: kernels disagree", wide, op, lanes, i, n)
		}
	}
}
