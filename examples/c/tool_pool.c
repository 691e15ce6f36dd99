/* Runs a turn's tool calls on a small pthread pool, scheduled by ssefold's
 * tool scheduler: safe calls in parallel, an exclusive call alone and in
 * order, results handed back in call order, and the next request's tool
 * results as JSON.
 *
 *   tool_pool [WORKERS]
 *
 * The calls arrive one after the other, as a streamed answer completes them
 * (here: a fixed list with a delay between calls). The scheduler runs no
 * tool and owns no thread: this program does. Only the main thread calls the
 * scheduler; workers take jobs from a queue and post their results back. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ssefold.h"

struct call {
  const char *id, *name, *input;
  int exclusive;
  int millis; /* how long the simulated tool runs */
};

static const struct call CALLS[] = {
    {"call_1", "read_file", "{\"path\":\"a.c\"}", 0, 60},
    {"call_2", "grep", "{\"pattern\":\"main\"}", 0, 20},
    {"call_3", "bash", "{\"cmd\":\"make\"}", 1, 30},
    {"call_4", "read_file", "{\"path\":\"b.c\"}", 0, 10},
    {"call_5", "no_such_tool", "{}", 0, 0},
};
#define NCALLS (sizeof CALLS / sizeof CALLS[0])
#define MAX_ID 32

/* A job for a worker, or a result for the main thread. */
struct job {
  char id[MAX_ID];
  int call; /* index in CALLS */
  char output[128];
};

struct queue {
  struct job items[NCALLS];
  size_t head, tail;
  int closed;
  pthread_mutex_t mu;
  pthread_cond_t cv;
};

static void queue_init(struct queue *q) {
  memset(q, 0, sizeof *q);
  pthread_mutex_init(&q->mu, NULL);
  pthread_cond_init(&q->cv, NULL);
}

static void queue_push(struct queue *q, const struct job *j) {
  pthread_mutex_lock(&q->mu);
  q->items[q->tail++ % NCALLS] = *j;
  pthread_cond_signal(&q->cv);
  pthread_mutex_unlock(&q->mu);
}

/* Pops a job; 0 when closed and empty. `wait_ms` < 0: wait forever. */
static int queue_pop(struct queue *q, struct job *out, int wait_ms) {
  int got = 0;
  pthread_mutex_lock(&q->mu);
  if (wait_ms >= 0 && q->head == q->tail && !q->closed) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += (long)wait_ms * 1000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    pthread_cond_timedwait(&q->cv, &q->mu, &until);
  } else {
    while (q->head == q->tail && !q->closed) pthread_cond_wait(&q->cv, &q->mu);
  }
  if (q->head != q->tail) {
    *out = q->items[q->head++ % NCALLS];
    got = 1;
  }
  pthread_mutex_unlock(&q->mu);
  return got;
}

static void queue_close(struct queue *q) {
  pthread_mutex_lock(&q->mu);
  q->closed = 1;
  pthread_cond_broadcast(&q->cv);
  pthread_mutex_unlock(&q->mu);
}

static void queue_destroy(struct queue *q) {
  pthread_mutex_destroy(&q->mu);
  pthread_cond_destroy(&q->cv);
}

static struct queue jobs, done;

static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static void *worker(void *arg) {
  struct job j;
  (void)arg;
  while (queue_pop(&jobs, &j, -1)) {
    sleep_ms(CALLS[j.call].millis); /* the tool's work */
    snprintf(j.output, sizeof j.output, "%s done in %d ms", CALLS[j.call].name, CALLS[j.call].millis);
    queue_push(&done, &j);
  }
  return NULL;
}

static ssefold_str str(const char *s) {
  ssefold_str v;
  v.ptr = s;
  v.len = strlen(s);
  return v;
}

static int check(ssefold_tool_scheduler *s, ssefold_result rc, const char *what) {
  ssefold_str msg;
  if (rc == SSEFOLD_RESULT_OK) return 0;
  if (s == NULL || ssefold_tool_scheduler_last_error(s, &msg) != SSEFOLD_RESULT_OK) msg = str("");
  fprintf(stderr, "%s: %s (%.*s)\n", what, ssefold_result_str(rc), (int)msg.len, msg.ptr);
  return 1;
}

static int find_call(ssefold_str id) {
  size_t i;
  for (i = 0; i < NCALLS; i++)
    if (strlen(CALLS[i].id) == id.len && memcmp(CALLS[i].id, id.ptr, id.len) == 0) return (int)i;
  return -1;
}

/* Starts what the scheduler allows, prints its events and released results. */
static int pump(ssefold_tool_scheduler *s) {
  const ssefold_str *ids;
  const ssefold_tool_result *results;
  size_t n, i;
  ssefold_tool_event event;
  bool has_event;
  if (check(s, ssefold_tool_scheduler_startable(s, &ids, &n), "startable")) return 1;
  for (i = 0; i < n; i++) {
    struct job j;
    memset(&j, 0, sizeof j);
    j.call = find_call(ids[i]);
    memcpy(j.id, ids[i].ptr, ids[i].len < MAX_ID - 1 ? ids[i].len : MAX_ID - 1);
    queue_push(&jobs, &j); /* copied: the views end at the next call */
  }
  for (;;) {
    if (check(s, ssefold_tool_scheduler_next_event(s, &event, &has_event), "next_event")) return 1;
    if (!has_event) break;
    printf("event %.*s\n", (int)event.json.len, event.json.ptr);
  }
  if (check(s, ssefold_tool_scheduler_results(s, &results, &n), "results")) return 1;
  for (i = 0; i < n; i++)
    printf("result %.*s%s: %.*s\n", (int)results[i].call_id.len, results[i].call_id.ptr,
           results[i].is_error ? " (error)" : "", (int)results[i].output.len, results[i].output.ptr);
  return 0;
}

int main(int argc, char **argv) {
  int workers = argc > 1 ? atoi(argv[1]) : 3;
  pthread_t threads[16];
  ssefold_tool_scheduler *s = NULL;
  ssefold_tool_scheduler_config config = ssefold_tool_scheduler_config_default();
  size_t added = 0, calls = 0;
  bool settled = false;
  ssefold_str json;
  int i, status = 0;

  if (workers < 1 || workers > 16) workers = 3;
  config.max_concurrency = (size_t)workers;
  if (check(s, ssefold_tool_scheduler_new(&config, &s), "new")) return 1;
  queue_init(&jobs);
  queue_init(&done);
  for (i = 0; i < workers; i++) pthread_create(&threads[i], NULL, worker, NULL);

  for (;;) {
    struct job j;
    size_t running = 0;
    if (added < NCALLS) {
      const struct call *c = &CALLS[added++];
      ssefold_tool_options options;
      options.exclusive = c->exclusive != 0;
      options.abort_siblings_on_error = false;
      options.start = SSEFOLD_TOOL_START_AUTO;
      options.needs_approval = false;
      if (strcmp(c->name, "no_such_tool") == 0)
        status |= check(s, ssefold_tool_scheduler_add_unknown(s, str(c->id), str(c->name)), "add_unknown");
      else
        status |= check(s, ssefold_tool_scheduler_add(s, str(c->id), str(c->name), str(c->input), options), "add");
    }
    status |= pump(s);
    status |= check(s, ssefold_tool_scheduler_status(s, &calls, &running, &settled), "status");
    if (status || (added == NCALLS && settled)) break;
    /* While calls are still arriving, wait briefly; then until a tool ends
     * (something runs: a queued call waits only for a running one). */
    if (queue_pop(&done, &j, added < NCALLS ? 5 : -1)) {
      bool recorded;
      const ssefold_str *cancel;
      size_t ncancel;
      status |= check(s, ssefold_tool_scheduler_finish(s, str(j.id), str(j.output), false, &recorded, &cancel, &ncancel),
                      "finish");
      status |= pump(s);
    }
  }
  printf("%zu calls\n", calls);

  queue_close(&jobs);
  for (i = 0; i < workers; i++) pthread_join(threads[i], NULL);
  if (!status && !check(s, ssefold_tool_scheduler_tool_results(s, SSEFOLD_PROVIDER_ANTHROPIC, &json), "tool_results"))
    printf("next request: %.*s\n", (int)json.len, json.ptr);
  else
    status = 1;
  ssefold_tool_scheduler_free(s);
  queue_destroy(&jobs);
  queue_destroy(&done);
  return status;
}
