/*
 * clock-shim: a fake wall clock for one process, through LD_PRELOAD.
 *
 *   cc -shared -fPIC -O2 -o clock-shim.so clock-shim.c -ldl
 *   CLOCK_SHIM_FILE=/tmp/clock LD_PRELOAD=./clock-shim.so redis-server ...
 *
 * Overrides clock_gettime (CLOCK_REALTIME and CLOCK_REALTIME_COARSE only; every other clock id, the
 * monotonic ones included, passes through to libc), gettimeofday and time:
 *
 *   fake = anchorFake + (real - anchorReal) * rate + offset
 *
 * The control file holds "rate offsetMs [epoch]", e.g. "1.05 0". It is re-read at most every
 * RELOAD_NS of real time, on some clock read. A new rate re-anchors (anchorFake = the fake time
 * without offset at that moment, anchorReal = now), so the clock keeps running continuously at the
 * new speed; a new offset steps the clock by the difference; a new epoch re-anchors at the real time
 * (anchorFake = anchorReal = now): rate 1, offset 0 and a new epoch put the clock back on real time.
 * A missing or unreadable file leaves the clock as it was.
 *
 * The real time comes from the clock_gettime system call itself, never through the overridden
 * symbol. Readers never block: the state is published with a sequence counter (seqlock), and only
 * one thread at a time reloads (a try-lock), so a signal handler reading the clock cannot deadlock.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define RELOAD_NS 20000000LL /* 20 ms */
#define NS_PER_S 1000000000LL

struct state {
  int64_t anchor_real; /* ns */
  int64_t anchor_fake; /* ns, without the offset */
  int64_t offset;      /* ns */
  double rate;
  double epoch;
};

static struct state current;
static unsigned seq;         /* odd while `current` is being written */
static int reloading;        /* try-lock: 1 while one thread reloads */
static int64_t next_reload;  /* real ns; 0 = never loaded */

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
static clock_gettime_fn libc_clock_gettime;

static int64_t real_now(void) {
  struct timespec ts;
  syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static int64_t fake_at(const struct state *s, int64_t real) {
  return s->anchor_fake + (int64_t)((double)(real - s->anchor_real) * s->rate) + s->offset;
}

/* "rate offsetMs [epoch]" from the control file; 0 if it cannot be read. */
static int read_control(double *rate, double *offset_ms, double *epoch) {
  const char *path = getenv("CLOCK_SHIM_FILE");
  if (!path) return 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[128];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  char *end;
  *rate = strtod(buf, &end);
  if (end == buf || !(*rate > 0)) return 0;
  char *p = end;
  *offset_ms = strtod(p, &end);
  if (end == p) return 0;
  p = end;
  *epoch = strtod(p, &end);
  if (end == p) *epoch = 0;
  return 1;
}

static void publish(const struct state *s) {
  __atomic_add_fetch(&seq, 1, __ATOMIC_ACQ_REL);
  current = *s;
  __atomic_add_fetch(&seq, 1, __ATOMIC_RELEASE);
}

static struct state snapshot(void) {
  struct state s;
  for (int tries = 0; tries < 1000; tries++) {
    unsigned before = __atomic_load_n(&seq, __ATOMIC_ACQUIRE);
    s = current;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (!(before & 1) && before == __atomic_load_n(&seq, __ATOMIC_RELAXED)) return s;
  }
  return s; /* a writer interrupted on this very thread: take the (nearly) current state */
}

static void maybe_reload(int64_t real) {
  if (real < __atomic_load_n(&next_reload, __ATOMIC_RELAXED)) return;
  if (__atomic_exchange_n(&reloading, 1, __ATOMIC_ACQUIRE)) return;
  int first = next_reload == 0;
  struct state s = first ? (struct state){ real, real, 0, 1.0, 0 } : snapshot();
  double rate, offset_ms, epoch;
  if (read_control(&rate, &offset_ms, &epoch)) {
    if (first) {
      s.epoch = epoch;
    } else if (epoch != s.epoch) {
      s.anchor_real = real;
      s.anchor_fake = real;
      s.epoch = epoch;
    } else if (rate != s.rate) {
      s.anchor_fake = fake_at(&s, real) - s.offset;
      s.anchor_real = real;
    }
    s.rate = rate;
    s.offset = (int64_t)(offset_ms * 1e6);
  }
  publish(&s);
  __atomic_store_n(&next_reload, real + RELOAD_NS, __ATOMIC_RELAXED);
  __atomic_store_n(&reloading, 0, __ATOMIC_RELEASE);
}

static int64_t fake_now(void) {
  int64_t real = real_now();
  maybe_reload(real);
  struct state s = snapshot();
  /* Until the very first load is published, the clock is the real one. */
  return s.rate > 0 ? fake_at(&s, real) : real;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
  if (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE) {
    int64_t now = fake_now();
    ts->tv_sec = now / NS_PER_S;
    ts->tv_nsec = now % NS_PER_S;
    if (ts->tv_nsec < 0) {
      ts->tv_nsec += NS_PER_S;
      ts->tv_sec -= 1;
    }
    return 0;
  }
  clock_gettime_fn next = __atomic_load_n(&libc_clock_gettime, __ATOMIC_ACQUIRE);
  if (!next) {
    next = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    __atomic_store_n(&libc_clock_gettime, next, __ATOMIC_RELEASE);
  }
  if (next) return next(id, ts);
  return (int)syscall(SYS_clock_gettime, id, ts);
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
  struct timespec ts; /* tv: declared nonnull by glibc */
  clock_gettime(CLOCK_REALTIME, &ts);
  tv->tv_sec = ts.tv_sec;
  tv->tv_usec = ts.tv_nsec / 1000;
  if (tz) {
    struct timezone *zone = tz;
    zone->tz_minuteswest = 0;
    zone->tz_dsttime = 0;
  }
  return 0;
}

time_t time(time_t *out) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  if (out) *out = ts.tv_sec;
  return ts.tv_sec;
}
