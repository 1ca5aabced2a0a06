package core_test

// A writer process killed with SIGKILL in the middle of large writes must
// leave a consistent database in which every file holds exactly one
// complete generation, and every write it reported done is there.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/vfs"
)

const (
	crashFiles    = 3
	crashFileSize = 8 << 20
	crashMagic    = "AGFSGEN1"
	crashRounds   = 5
)

func crashPath(k int) string { return fmt.Sprintf("/big/file%d.bin", k) }

// crashContent is the content of file k at generation gen: a header
// (magic, gen, k), then a 64 KiB block of bytes that depend on both,
// repeated, with gen, k and the offset stamped at the start of every
// 1 KiB, so that any two generations differ in every chunk. It is cheap
// to build so that the writer spends its time writing, where the kills
// should land.
func crashContent(gen uint64, k int) []byte {
	const block = 64 << 10
	b := make([]byte, crashFileSize)
	x := (gen+1)*0x9E3779B97F4A7C15 ^ uint64(k+1)*0xD1B54A32D192ED03
	if x == 0 {
		x = 1
	}
	for i := 0; i < block; i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(b[i:], x)
	}
	for off := block; off < len(b); off *= 2 {
		copy(b[off:], b[:off])
	}
	for off := 0; off < len(b); off += 1 << 10 {
		binary.LittleEndian.PutUint64(b[off:], gen)
		binary.LittleEndian.PutUint64(b[off+8:], uint64(k))
		binary.LittleEndian.PutUint64(b[off+16:], uint64(off))
	}
	copy(b, crashMagic)
	binary.LittleEndian.PutUint64(b[8:], gen)
	binary.LittleEndian.PutUint64(b[16:], uint64(k))
	return b
}

// crashHeader decodes the generation and file number of a content.
func crashHeader(b []byte) (gen uint64, k int, ok bool) {
	if len(b) < 24 || string(b[:8]) != crashMagic {
		return 0, 0, false
	}
	return binary.LittleEndian.Uint64(b[8:]), int(binary.LittleEndian.Uint64(b[16:])), true
}

// helperCrash rewrites the files in turn, forever, announcing each write
// before it starts and after it returns, until it is killed.
func helperCrash() error {
	db := os.Getenv(envHelperDB)
	base, err := strconv.ParseUint(os.Getenv(envHelperN), 10, 64)
	if err != nil {
		return err
	}
	a, err := core.Open(context.Background(), db, core.Options{})
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	fmt.Println("open")
	for it := uint64(0); ; it++ {
		k := int(it % crashFiles)
		gen := base + it
		data := crashContent(gen, k)
		fmt.Printf("start %d %d\n", k, gen)
		if err := a.FS.WriteFile(context.Background(), crashPath(k), data, vfs.WriteOptions{}); err != nil {
			return fmt.Errorf("write %s gen %d: %w", crashPath(k), gen, err)
		}
		fmt.Printf("done %d %d\n", k, gen)
	}
}

func TestCrash_KillDuringLargeWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test")
	}
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "crash.db")
	a, err := core.Open(ctx, db, core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < crashFiles; k++ {
		if err := a.FS.WriteFile(ctx, crashPath(k), crashContent(0, k), vfs.WriteOptions{CreateParents: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	var committed [crashFiles]uint64 // generation each file must hold at least
	var totalDone, killedInFlight int
	for round := 1; round <= crashRounds; round++ {
		base := uint64(round) << 32
		h := startHelper(t, "crash", db, 0, int(base))
		h.expectLine(t, "open", time.Minute)
		// Kill at a random point after the first write completed, so that
		// every round checks committed data even on a slow machine (-race,
		// other jobs): a fixed delay from the start checked nothing there.
		firstDone := time.Now().Add(2 * time.Minute)
		for !hasDone(h.stdout.Lines()) {
			if time.Now().After(firstDone) {
				t.Fatalf("round %d: no write completed within 2 minutes; stderr:\n%s", round, h.stderr.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
		delay := time.Duration(rng.IntN(401)) * time.Millisecond
		select {
		case <-time.After(delay):
		case <-h.done:
			t.Fatalf("round %d: writer exited by itself (%v); stderr:\n%s", round, h.err, h.stderr.String())
		}
		if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-h.done
		if ws, ok := h.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: writer ended with %v, not by SIGKILL; stderr:\n%s", round, h.err, h.stderr.String())
		}

		// What the writer reported: "done" writes are committed; at most
		// one write, the last "start" without "done", was in flight.
		var inflightK = -1
		var inflightGen uint64
		done := 0
		for _, line := range h.stdout.Lines() {
			f := strings.Fields(line)
			if len(f) != 3 || (f[0] != "start" && f[0] != "done") {
				continue
			}
			k, _ := strconv.Atoi(f[1])
			gen, _ := strconv.ParseUint(f[2], 10, 64)
			if f[0] == "start" {
				inflightK, inflightGen = k, gen
			} else {
				committed[k] = gen
				inflightK = -1
				done++
			}
		}
		totalDone += done

		a, err := core.Open(ctx, db, core.Options{})
		if err != nil {
			t.Fatalf("round %d: reopen after the kill: %v", round, err)
		}
		rep, err := a.Fsck(ctx, false)
		if err != nil {
			t.Fatalf("round %d: fsck: %v", round, err)
		}
		if !rep.Clean() {
			t.Errorf("round %d: fsck after the kill found problems: %+v", round, rep.Problems)
		}
		if want := int64(crashFiles * crashFileSize / a.FS.ChunkSize()); rep.Chunks != want {
			t.Errorf("round %d: %d data chunks, want %d (%d files of %d bytes)", round, rep.Chunks, want, crashFiles, crashFileSize)
		}
		state := make([]string, crashFiles)
		for k := 0; k < crashFiles; k++ {
			data, err := a.FS.ReadFile(ctx, crashPath(k))
			if err != nil {
				t.Fatalf("round %d: read %s: %v", round, crashPath(k), err)
			}
			gen, hk, ok := crashHeader(data)
			switch {
			case !ok || hk != k:
				t.Fatalf("round %d: %s has no valid header for file %d (%d bytes, starts %q)", round, crashPath(k), k, len(data), data[:min(len(data), 24)])
			case !bytes.Equal(data, crashContent(gen, k)):
				t.Fatalf("round %d: %s is not one complete generation: header says %d but the %d bytes differ from it (torn or mixed write)", round, crashPath(k), gen, len(data))
			case gen == committed[k]:
				state[k] = fmt.Sprintf("%#x", gen)
			case k == inflightK && gen == inflightGen:
				// The write in flight committed before the kill.
				committed[k] = gen
				killedInFlight-- // not interrupted after all
				state[k] = fmt.Sprintf("%#x (in flight, committed)", gen)
			default:
				t.Fatalf("round %d: %s holds generation %#x; want %#x (last reported done) or the in-flight %#x", round, crashPath(k), gen, committed[k], inflightGen)
			}
		}
		if inflightK >= 0 {
			killedInFlight++
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: killed %v after the first write, %d writes done, in flight: file %d; files at %v", round, delay, done, inflightK, state)
	}
	if totalDone == 0 {
		t.Errorf("no write completed before any kill: the test checked nothing but the initial state (machine too slow?)")
	}
	t.Logf("%d writes completed, %d killed in flight", totalDone, killedInFlight)
}

// hasDone reports whether the writer reported a completed write.
func hasDone(lines []string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, "done ") {
			return true
		}
	}
	return false
}

// helperCrashOpen keeps a file open after removing its name, then waits
// to be killed.
func helperCrashOpen() error {
	a, err := core.Open(context.Background(), os.Getenv(envHelperDB), core.Options{})
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	h, err := a.FS.Open(context.Background(), "/scratch.bin", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := h.Write(bytes.Repeat([]byte("scratch "), 50_000)); err != nil {
		return err
	}
	if err := a.FS.Unlink(context.Background(), "/scratch.bin"); err != nil {
		return err
	}
	if _, err := h.Write([]byte("still writable after unlink")); err != nil {
		return err
	}
	fmt.Println("unlinked")
	select {} // until killed
}

// TestCrash_KillWithUnlinkedOpenFile: a process killed while it holds a
// file whose last name it removed leaves a nameless inode behind. The
// database must then be clean at reopen, or show only repairable
// "orphan" problems that a repair removes, sparing everything else.
func TestCrash_KillWithUnlinkedOpenFile(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test")
	}
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "orphan.db")
	a, err := core.Open(ctx, db, core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	keep := bytes.Repeat([]byte("keep me "), 10_000)
	if err := a.FS.WriteFile(ctx, "/keep.txt", keep, vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	h := startHelper(t, "crash-open", db, 0, 0)
	h.expectLine(t, "unlinked", time.Minute)
	if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-h.done

	a, err = core.Open(ctx, db, core.Options{})
	if err != nil {
		t.Fatalf("reopen after the kill: %v", err)
	}
	defer a.Close()
	rep, err := a.Fsck(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		if p.Rule != "orphan" || !p.Repairable {
			t.Errorf("after the kill: unexpected problem [%s] %s (repairable %v)", p.Rule, p.Detail, p.Repairable)
		}
	}
	if !rep.Clean() {
		t.Logf("after the kill: %d repairable orphan(s), as expected unless the engine cleans them at open", len(rep.Problems))
		rep, err = a.Fsck(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Clean() || rep.Repaired == 0 {
			t.Errorf("repair left %+v (repaired %d)", rep.Problems, rep.Repaired)
		}
		requireClean(t, "after repair", a)
	}
	if rep.Inodes != 2 || rep.Chunks != int64((len(keep)+a.FS.ChunkSize()-1)/a.FS.ChunkSize()) {
		t.Errorf("%d inodes, %d chunks remain; want the root and /keep.txt with its chunks only", rep.Inodes, rep.Chunks)
	}
	if got, err := a.FS.ReadFile(ctx, "/keep.txt"); err != nil || !bytes.Equal(got, keep) {
		t.Errorf("/keep.txt: %d bytes, %v", len(got), err)
	}
	if names, err := a.FS.Readdir(ctx, "/"); err != nil || len(names) != 1 {
		t.Errorf("readdir / = %q, %v; want only keep.txt", names, err)
	}
}
