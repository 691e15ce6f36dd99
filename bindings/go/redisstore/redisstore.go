// Package redisstore keeps a relayed stream (ssefold.Relay) in Redis
// Streams, so that any server process can serve it: a browser that
// reconnects with Last-Event-ID to another process than the one relaying
// the provider stream gets every event after that id, exactly once, and the
// stream still ends with its finish.
//
// A Relay keeps its last frames for ReplayAfter in its own process; a Store
// holds them by event id where every process reaches them:
//
//   - the process that relays the provider stream appends each call's frames
//     (Relay.Frames) and, at the end, the finished marker with the relay's
//     trailer (Relay.Trailer): Save does both;
//   - any process serves the stream with After: the frames after the
//     browser's Last-Event-ID, then the new ones as they are appended,
//     until the finished marker (and its trailer).
//
// Layout: one Redis stream per relayed turn, key Prefix+streamID; frame N is
// entry 0-N (field f), so XADD refuses an id already stored, or older than
// the newest (exactly once: a producer that appends a call again stores
// nothing twice); the finished marker is entry 1-0 (field t: the trailer),
// after every frame, so nothing can be appended after it and a reader
// following with XREAD BLOCK meets it last. Every write refreshes the key's
// expiry (TTL, 24 h by default). Where to resume is decided by the core
// (ssefold.ResumePoint): an id newer than the store holds matches
// ssefold.ErrUnknownEventID, an id whose next frame is no longer held (the
// stream expired) ssefold.ErrReplayTooOld, as Relay.ReplayAfter's errors.
//
// It is a module of its own (github.com/ssefold/ssefold/bindings/go/redisstore,
// on github.com/redis/go-redis/v9), so the ssefold package itself depends on
// nothing. The store moves bytes only: it never reads the frames' JSON.
//
//	store := redisstore.New(redis.NewClient(&redis.Options{Addr: addr}), nil)
//	// the producer, after each relay call:
//	store.Save(ctx, turnID, relay)
//	// any process, per request:
//	err := store.After(ctx, turnID, r.Header.Get("Last-Event-ID"), func(frame []byte) error {
//		if len(frame) == 0 {
//			frame = []byte(": keep-alive\n\n")
//		}
//		_, err := w.Write(frame)
//		flusher.Flush()
//		return err
//	})
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	ssefold "github.com/ssefold/ssefold/bindings/go"
)

// Defaults of Options.
const (
	// DefaultTTL: a stream is kept this long after its last write.
	DefaultTTL = 24 * time.Hour
	// DefaultBlock: how long After waits for a new frame before it calls
	// send with an empty frame (the moment for a keep-alive comment).
	DefaultBlock = 5 * time.Second
	// DefaultPrefix of the streams' keys.
	DefaultPrefix = "ssefold:relay:"
)

// Options are a Store's settings; the zero value (or nil) takes the defaults.
type Options struct {
	// Prefix of every stream's key (DefaultPrefix when empty).
	Prefix string
	// TTL: the key expires this long after its last write (DefaultTTL
	// when 0); whole seconds.
	TTL time.Duration
	// Block is the XREAD BLOCK time of a following reader (DefaultBlock
	// when 0).
	Block time.Duration
}

// Store keeps relayed streams in Redis Streams (Redis >= 5). It is safe for
// concurrent use, as the client is.
type Store struct {
	client redis.UniversalClient
	opts   Options
}

// New returns a store over client; opts may be nil.
func New(client redis.UniversalClient, opts *Options) *Store {
	s := &Store{client: client}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Prefix == "" {
		s.opts.Prefix = DefaultPrefix
	}
	if s.opts.TTL <= 0 {
		s.opts.TTL = DefaultTTL
	}
	if s.opts.Block <= 0 {
		s.opts.Block = DefaultBlock
	}
	return s
}

// Key returns the Redis key of a stream.
func (s *Store) Key(streamID string) string { return s.opts.Prefix + streamID }

// The same scripts as ssefold.relay_store (Python): one round trip, atomic.
var (
	appendScript = redis.NewScript(`
local stored = 0
for i = 2, #ARGV, 2 do
  local r = redis.pcall('XADD', KEYS[1], '0-' .. ARGV[i], 'f', ARGV[i + 1])
  if type(r) ~= 'table' or r.err == nil then stored = stored + 1 end
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return stored
`)
	finishScript = redis.NewScript(`
redis.pcall('XADD', KEYS[1], '1-0', 't', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
`)
)

// frameIDsEnd is the largest entry id of a frame (0-N).
const frameIDsEnd = "0-18446744073709551615"

func (s *Store) ttlSeconds() int64 {
	if secs := int64(s.opts.TTL / time.Second); secs > 0 {
		return secs
	}
	return 1
}

// Append stores frames (Relay.Frames) under their event ids; ids already
// stored, or older than the newest stored, are refused. It returns how many
// were stored, and refreshes the stream's expiry.
func (s *Store) Append(ctx context.Context, streamID string, frames []ssefold.RelayFrame) (int, error) {
	if len(frames) == 0 {
		return 0, nil
	}
	args := make([]any, 0, 1+2*len(frames))
	args = append(args, s.ttlSeconds())
	for _, f := range frames {
		args = append(args, f.ID, f.Bytes)
	}
	n, err := appendScript.Run(ctx, s.client, []string{s.Key(streamID)}, args...).Int()
	if err != nil {
		return 0, fmt.Errorf("redisstore: append to %s: %w", streamID, err)
	}
	return n, nil
}

// Finish marks the stream finished: readers send trailer (Relay.Trailer)
// after its last frame, then end. Nothing can be appended afterwards.
func (s *Store) Finish(ctx context.Context, streamID string, trailer []byte) error {
	if trailer == nil {
		trailer = []byte{}
	}
	if err := finishScript.Run(ctx, s.client, []string{s.Key(streamID)}, s.ttlSeconds(), trailer).Err(); err != nil {
		return fmt.Errorf("redisstore: finish %s: %w", streamID, err)
	}
	return nil
}

// Save appends the frames of the relay's last call, and finishes the stream
// when the relay has finished. It returns the frames stored.
func (s *Store) Save(ctx context.Context, streamID string, rl *ssefold.Relay) (int, error) {
	n, err := s.Append(ctx, streamID, rl.Frames())
	if err != nil {
		return n, err
	}
	if _, finished := rl.LastEventID(); finished {
		err = s.Finish(ctx, streamID, rl.Trailer())
	}
	return n, err
}

// entryID splits "ms-seq".
func entryID(id string) (ms, seq uint64, err error) {
	a, b, ok := strings.Cut(id, "-")
	if !ok {
		return 0, 0, fmt.Errorf("redisstore: bad entry id %q", id)
	}
	if ms, err = strconv.ParseUint(a, 10, 64); err == nil {
		seq, err = strconv.ParseUint(b, 10, 64)
	}
	return ms, seq, err
}

func field(values map[string]any, name string) []byte {
	switch v := values[name].(type) {
	case string:
		return []byte(v)
	case []byte:
		return v
	}
	return nil
}

// After calls send with every frame after lastEventID (the browser's
// Last-Event-ID header; "": from the first), then with each new frame as it
// is appended, then with the trailer (when not empty) once the stream
// finished, and returns nil. send gets an empty frame when no frame came
// for the block time (send a keep-alive comment then); an error from send,
// from Redis, or ctx's, ends it. Before any send, an unknown or too old
// lastEventID gives an error matching ssefold.ErrUnknownEventID or
// ssefold.ErrReplayTooOld (as ssefold.ResumePoint). A stream that expires
// while followed (its producer died) ends it with nil: the browser's
// reconnection then gets ErrReplayTooOld. A stream not written yet is
// waited for.
func (s *Store) After(ctx context.Context, streamID, lastEventID string, send func(frame []byte) error) error {
	key := s.Key(streamID)
	var after uint64
	if lastEventID != "" {
		var oldest, newest uint64
		first, err := s.client.XRangeN(ctx, key, "-", frameIDsEnd, 1).Result()
		if err != nil {
			return fmt.Errorf("redisstore: %w", err)
		}
		last, err := s.client.XRevRangeN(ctx, key, frameIDsEnd, "-", 1).Result()
		if err != nil {
			return fmt.Errorf("redisstore: %w", err)
		}
		if len(first) > 0 && len(last) > 0 {
			if _, oldest, err = entryID(first[0].ID); err == nil {
				_, newest, err = entryID(last[0].ID)
			}
			if err != nil {
				return err
			}
		}
		if after, err = ssefold.ResumePoint(lastEventID, oldest, newest); err != nil {
			return err
		}
	}
	cursor := "0-" + strconv.FormatUint(after, 10)
	for {
		reply, err := s.client.XRead(ctx, &redis.XReadArgs{Streams: []string{key, cursor}, Count: 512, Block: s.opts.Block}).Result()
		if errors.Is(err, redis.Nil) {
			if cursor != "0-0" && s.client.Exists(ctx, key).Val() == 0 {
				return nil // expired while followed: a reconnection gets ErrReplayTooOld
			}
			if err := send(nil); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("redisstore: %w", err)
		}
		for _, stream := range reply {
			for _, m := range stream.Messages {
				cursor = m.ID
				ms, _, err := entryID(m.ID)
				if err != nil {
					return err
				}
				if ms == 0 {
					if err := send(field(m.Values, "f")); err != nil {
						return err
					}
					continue
				}
				if trailer := field(m.Values, "t"); len(trailer) > 0 {
					return send(trailer)
				}
				return nil
			}
		}
	}
}
