package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/redis/go-redis/v9"
	ssefold "github.com/ssefold/ssefold/bindings/go"
	"github.com/ssefold/ssefold/bindings/go/redisstore"
)

// produce relays a provider body into Redis: after every relay call, Save
// appends that call's frames under their event ids (and, after Finish, the
// finished marker).
func produce(ctx context.Context, store *redisstore.Store, turnID string, chunks [][]byte) error {
	rl, err := ssefold.NewRelayWithStream(ssefold.Auto, &ssefold.RelayOptions{Format: ssefold.RelayCatalog})
	if err != nil {
		return err
	}
	defer rl.Close()
	for _, chunk := range chunks {
		if _, err := rl.Feed(chunk); err != nil {
			return err
		}
		if _, err := store.Save(ctx, turnID, rl); err != nil {
			return err
		}
	}
	if _, err := rl.EndOfInput(); err != nil {
		return err
	}
	if _, err := store.Save(ctx, turnID, rl); err != nil {
		return err
	}
	if _, err := rl.Finish(nil); err != nil {
		return err
	}
	_, err = store.Save(ctx, turnID, rl)
	return err
}

// streamHandler serves GET /stream/<turn> from Redis in any process: the
// frames after the browser's Last-Event-ID, then the new ones until finish.
func streamHandler(store *redisstore.Store, headers []ssefold.RelayHeader) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		turnID := strings.TrimPrefix(r.URL.Path, "/stream/")
		flusher := w.(http.Flusher)
		started := false
		err := store.After(r.Context(), turnID, r.Header.Get("Last-Event-ID"), func(frame []byte) error {
			if !started {
				for _, h := range headers { // Relay.Headers() of the format
					w.Header().Set(h.Name, h.Value)
				}
				started = true
			}
			if len(frame) == 0 { // nothing new for the block time
				frame = []byte(": keep-alive\n\n")
			}
			_, err := w.Write(frame)
			flusher.Flush()
			return err
		})
		if !started && (errors.Is(err, ssefold.ErrReplayTooOld) || errors.Is(err, ssefold.ErrUnknownEventID)) {
			w.WriteHeader(http.StatusNoContent) // the stream expired: the browser reloads the message
		}
	}
}

// A relayed turn kept in Redis Streams, served by whichever process the
// browser reaches (compiled, not run: it needs a Redis server).
func Example() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	store := redisstore.New(client, &redisstore.Options{Prefix: "chat:"}) // TTL 24 h, XREAD BLOCK 5 s
	rl, _ := ssefold.NewRelay(&ssefold.RelayOptions{Format: ssefold.RelayCatalog})
	http.Handle("/stream/", streamHandler(store, rl.Headers()))
	rl.Close()
	go produce(context.Background(), store, "turn-1", nil)
	fmt.Println(store.Key("turn-1"))
}
