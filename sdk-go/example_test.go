package agentfs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"

	agentfs "github.com/agentfs-go/agentfs/sdk-go"
)

func Example() {
	ctx := context.Background()
	a, err := agentfs.Open(ctx, agentfs.Options{}) // a temporary database
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	if err := a.FS().WriteFile(ctx, "/notes/todo.md", []byte("- write tests\n"), agentfs.WriteOptions{CreateParents: true}); err != nil {
		log.Fatal(err)
	}
	data, _ := a.FS().ReadFile(ctx, "/notes/todo.md")
	fmt.Printf("%s", data)

	_, err = a.FS().Stat(ctx, "/missing")
	fmt.Println(errors.Is(err, fs.ErrNotExist))

	_ = a.KV().Set(ctx, "step", 3)
	var step int
	_ = a.KV().Get(ctx, "step", &step)
	fmt.Println("step", step)

	id, _ := a.Tools().Start(ctx, "search", map[string]string{"q": "agentfs"})
	_ = a.Tools().Success(ctx, id, map[string]int{"hits": 1})
	calls, _ := a.Tools().List(ctx, agentfs.ToolFilter{})
	fmt.Println(len(calls), calls[0].Name, calls[0].Status)
	// Output:
	// - write tests
	// true
	// step 3
	// 1 search success
}
