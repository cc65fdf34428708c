#pragma once

/*
 * Small helpers shared by every module: allocation that aborts only on out-of-memory, strict
 * number parsers (no atoi anywhere), and bit arithmetic.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* calloc() that aborts with a message on out-of-memory: the only place that may abort. */
void *xzalloc(size_t bytes);
/* realloc() with the same contract as xzalloc(); new bytes are not zeroed. */
void *xrealloc(void *p, size_t bytes);
/* strdup() with the same contract as xzalloc(); xstrdup(NULL) returns NULL. */
char *xstrdup(const char *s);

/* Parses a whole decimal (or 0x hex) unsigned number. Rejects empty input, signs, trailing junk
 * and values above UINT64_MAX. Returns true and sets *out on success. */
bool parse_u64(const char *s, uint64_t *out);

/* Parses a whole hexadecimal number without 0x prefix (trace addresses). */
bool parse_hex_u64(const char *s, size_t len, uint64_t *out);

/* Parses a byte size: digits followed by an optional unit B, K, M or G (powers of 1024, case
 * insensitive, "KiB"/"KB" accepted). Returns 0 on success, -EINVAL for bad syntax, -ERANGE if
 * the value does not fit in 64 bits. */
int parse_size_bytes(const char *s, uint64_t *out);

/* Formats a byte count with the largest unit that divides it exactly ("32K", "6M", "100B").
 * Writes into buf (at least 24 bytes) and returns buf. */
char *format_size_bytes(uint64_t bytes, char *buf, size_t len);

/* For a static function whose callers pass constants to specialize it (a loop instantiated
 * for one geometry): GCC and Clang inline it whatever its size; elsewhere a plain hint. */
#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

/* For a rare path of a hot function (back-invalidation on a cache miss): kept out of line, so
 * the hot function does not save the registers the rare path needs on every call. */
#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

static inline bool
is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

/* floor(log2(x)) for x > 0. */
static inline unsigned
log2_u64(uint64_t x)
{
	return 63u - (unsigned)__builtin_clzll(x);
}

/* Creates directory path and any missing parents (mode 0755). Returns 0 once path is a
 * directory, or a negative errno: -ENOENT for "", -ENOTDIR where a file is in the way. */
int mkdir_p(const char *path);

/* Monotonic clock in seconds. */
double now_seconds(void);

/* Memory this process may use: MemAvailable from /proc/meminfo, else the physical memory. */
uint64_t mem_available_bytes(void);

/* Writes all len bytes to fd, again after short writes and EINTR. Returns 0 or a negative
 * errno (-EIO for a write that wrote nothing). */
int write_fd_all(int fd, const void *buf, size_t len);

/*
 * Writes len bytes to path, a path the user gave (--json FILE), whole or not at all where that
 * can be had:
 * - "-" is standard output;
 * - a regular file with one link (or none yet) is written to a new temporary file beside it
 *   (created with O_EXCL, so it follows no link) and renamed over it: a reader never sees half
 *   a file. The file keeps its mode, and its owner and group where they can be given to the
 *   new file (else it is written in place, which keeps them);
 * - anything else (a symlink, a file with other hard links, a device such as /dev/null, a
 *   FIFO) is written in place, never replaced: links keep pointing at the new contents.
 * Every write is checked. Returns 0, or a negative errno with "cannot write PATH: why" in err.
 */
int write_file_whole(const char *path, const void *data, size_t len, char *err, size_t errlen);

/* Creates a new directory parent/prefix-XXXXXX (mkdtemp: a name no one can predict, mode 0700)
 * and writes its path into out. Returns 0, or a negative errno with "cannot ...: why" in err. */
int make_private_dir(const char *parent, const char *prefix, char *out, size_t len, char *err,
		     size_t errlen);

/* Takes the lock of directory dir (flock on dir/.memsim-lock, which records the holder's pid)
 * for as long as the returned descriptor stays open (and the processes forked since). Returns
 * the descriptor, or a negative errno with a one-line message in err: -EBUSY "dir is in use by
 * another memsim (pid N)". */
int lock_dir(const char *dir, char *err, size_t errlen);
