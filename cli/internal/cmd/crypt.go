package cmd

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core/store"
)

// Encryption at rest: --key HEX, --key-file FILE, --cipher NAME, or the
// environment (AGENTFS_KEY, AGENTFS_CIPHER), on every command that opens
// a database. The key is taken out of this process's environment as soon
// as it is read, so no command that agentfs runs (run, exec, sh) inherits
// it; child agentfs processes that need it (the mount server, run's
// stages) get it in their environment, never on their command line.
var (
	keyFlag, keyFileFlag, cipherFlag string
	keyEnv, cipherEnv                string
)

const keyHelpWarning = "a key on the command line is visible to other users of this machine (ps); prefer --key-file or AGENTFS_KEY"

func addKeyFlags(root *cobra.Command) {
	keyEnv, cipherEnv = os.Getenv("AGENTFS_KEY"), os.Getenv("AGENTFS_CIPHER")
	os.Unsetenv("AGENTFS_KEY")
	os.Unsetenv("AGENTFS_CIPHER")
	f := root.PersistentFlags()
	// Defaults stay empty: help must never print a key from the environment.
	f.StringVar(&keyFlag, "key", "", "hex key of an encrypted database (env AGENTFS_KEY); "+keyHelpWarning)
	f.StringVar(&keyFileFlag, "key-file", "", "file holding the hex key of an encrypted database")
	f.StringVar(&cipherFlag, "cipher", "", "cipher of a new encrypted database: "+strings.Join(store.Ciphers(), ", ")+" (env AGENTFS_CIPHER; default aegis256 for a 32-byte key, aegis128l for 16; an existing database names its own)")
}

// encryptionOption is the key and cipher the user gave, or nil.
func encryptionOption() (*store.Encryption, error) {
	src, text := "", ""
	switch {
	case keyFileFlag != "":
		b, err := os.ReadFile(keyFileFlag)
		if err != nil {
			return nil, userError{msg: fmt.Sprintf("read the key file: %v", errors.Unwrap(err)), hint: "--key-file PATH of a file holding the key in hex"}
		}
		src, text = "--key-file", string(b)
	case keyFlag != "":
		src, text = "--key", keyFlag
	case keyEnv != "":
		src, text = "AGENTFS_KEY", keyEnv
	}
	cipher := cipherFlag
	if cipher == "" {
		cipher = cipherEnv
	}
	if src == "" {
		if cipher != "" {
			return nil, userError{msg: "--cipher (or AGENTFS_CIPHER) without a key", hint: "give the key too: --key-file FILE or AGENTFS_KEY"}
		}
		return nil, nil
	}
	key, err := hex.DecodeString(strings.TrimSpace(text))
	if err != nil || len(key) == 0 {
		// Never repeat the key: only where it came from and its length.
		return nil, userError{msg: fmt.Sprintf("the key of %s is not hexadecimal (%d characters)", src, len(strings.TrimSpace(text))), hint: "a key is 32 hex digits (16 bytes) or 64 (32 bytes); make one with: openssl rand -hex 32"}
	}
	return &store.Encryption{Cipher: cipher, Key: key}, nil
}

// keyEnvFor is the environment that hands the user's key to a child
// agentfs process (nil without a key).
func keyEnvFor() ([]string, error) {
	e, err := encryptionOption()
	if err != nil || e == nil {
		return nil, err
	}
	env := []string{"AGENTFS_KEY=" + hex.EncodeToString(e.Key)}
	if e.Cipher != "" {
		env = append(env, "AGENTFS_CIPHER="+e.Cipher)
	}
	return env, nil
}
