package crypt

import (
	"bytes"
	"encoding/hex"
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

// Test vectors of draft-irtf-cfrg-aegis-aead (A.2 AEGIS-128L, A.3
// AEGIS-256), 128-bit tags.
func TestAegis_SpecVectors(t *testing.T) {
	for _, v := range []struct {
		name string
		new  func([]byte) (interface {
			Seal(a, b, c, d []byte) []byte
		}, error)
		key, nonce, ad, msg string
		ct, tag             string
	}{
		{"aegis128l-1", wrap(newAegis128L), "10010000000000000000000000000000", "10000200000000000000000000000000", "", "00000000000000000000000000000000",
			"c1c0e58bd913006feba00f4b3cc3594e", "abe0ece80c24868a226a35d16bdae37a"},
		{"aegis128l-2", wrap(newAegis128L), "10010000000000000000000000000000", "10000200000000000000000000000000", "", "",
			"", "c2b879a67def9d74e6c14f708bbcc9b4"},
		{"aegis128l-3", wrap(newAegis128L), "10010000000000000000000000000000", "10000200000000000000000000000000", "0001020304050607", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
			"79d94593d8c2119d7e8fd9b8fc77845c5c077a05b2528b6ac54b563aed8efe84", "cc6f3372f6aa1bb82388d695c3962d9a"},
		{"aegis256-1", wrap(newAegis256), "1001000000000000000000000000000000000000000000000000000000000000", "1000020000000000000000000000000000000000000000000000000000000000", "", "00000000000000000000000000000000",
			"754fc3d8c973246dcc6d741412a4b236", "3fe91994768b332ed7f570a19ec5896e"},
		{"aegis256-2", wrap(newAegis256), "1001000000000000000000000000000000000000000000000000000000000000", "1000020000000000000000000000000000000000000000000000000000000000", "", "",
			"", "e3def978a0f054afd1e761d7553afba3"},
	} {
		a, err := v.new(unhex(t, v.key))
		if err != nil {
			t.Fatal(err)
		}
		got := a.Seal(nil, unhex(t, v.nonce), unhex(t, v.msg), unhex(t, v.ad))
		want := append(unhex(t, v.ct), unhex(t, v.tag)...)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: got %x, want %x", v.name, got, want)
		}
	}
}

func wrap[T any](f func([]byte) (T, error)) func([]byte) (interface {
	Seal(a, b, c, d []byte) []byte
}, error) {
	return func(k []byte) (interface {
		Seal(a, b, c, d []byte) []byte
	}, error) {
		a, err := f(k)
		return any(a).(interface {
			Seal(a, b, c, d []byte) []byte
		}), err
	}
}

// Open inverts Seal for lengths that end inside a block, and refuses a
// flipped bit anywhere.
func TestAegis_RoundTrip(t *testing.T) {
	for _, name := range Ciphers() {
		c := ciphers[name]
		key := bytes.Repeat([]byte{7}, c.key)
		a, err := c.newAEAD(key)
		if err != nil {
			t.Fatal(err)
		}
		nonce := bytes.Repeat([]byte{9}, c.nonce)
		for _, n := range []int{0, 1, 15, 16, 17, 31, 33, 4000} {
			msg := bytes.Repeat([]byte("marker"), n)[:n]
			ct := a.Seal(nil, nonce, msg, []byte("ad"))
			pt, err := a.Open(nil, nonce, ct, []byte("ad"))
			if err != nil || !bytes.Equal(pt, msg) {
				t.Fatalf("%s len %d: round trip failed: %v", name, n, err)
			}
			ct[len(ct)/2] ^= 1
			if _, err := a.Open(nil, nonce, ct, []byte("ad")); err == nil {
				t.Fatalf("%s len %d: tampered ciphertext opened", name, n)
			}
		}
	}
}
