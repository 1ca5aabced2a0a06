package crypt

import "testing"

// BenchmarkSealPage: one 4 KiB page's AEAD seal per cipher, as the VFS
// does it (go test -bench SealPage ./core/internal/crypt; add -tags
// purego for the pure-Go AEGIS kernels).
func BenchmarkSealPage(b *testing.B) {
	for _, name := range Ciphers() {
		b.Run(name, func(b *testing.B) {
			c := ciphers[name]
			a, err := c.newAEAD(make([]byte, c.key))
			if err != nil {
				b.Fatal(err)
			}
			nonce := make([]byte, c.nonce)
			page := make([]byte, 4096-c.Meta())
			out := make([]byte, 0, 4096)
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				a.Seal(out, nonce, page, nil)
			}
		})
	}
}
