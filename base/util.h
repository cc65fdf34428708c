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
/* calloc() (zero) or malloc() of n items of size bytes, NULL when memory is short, its whole
 * 2 MiB pages asked to be huge pages before they are first written: a model of millions of
 * lines is otherwise set up a 4 KiB page fault at a time. Only advice: where the kernel gives
 * none, the array is the same. */
void *array_alloc_huge(uint64_t n, size_t size, bool zero);
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

/* For a hot loop's function: starts on a 64-byte line, so that the loop's place in the
 * instruction cache's lines does not move with unrelated code around it (a 3-4% swing in
 * the fused replay loop, measured). */
#if defined(__GNUC__)
#define LINE_ALIGNED __attribute__((aligned(64)))
#else
#define LINE_ALIGNED
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

/* Sorts v[0 .. n) in ascending order (timings: their median, their quantiles). */
void sort_doubles(double *v, size_t n);

/* Processor time this process has used (all its threads), in seconds: for timings that
 * other programs on a shared machine should not move. */
double cpu_seconds(void);

/* Memory this process may use: MemAvailable from /proc/meminfo, else the physical memory. */
uint64_t mem_available_bytes(void);

/* Writes all len bytes to fd, again after short writes and EINTR. Returns 0 or a negative
 * errno (-EIO for a write that wrote nothing). */
int write_fd_all(int fd, const void *buf, size_t len);

/* Opens the file at path for reading (following a link) where it is a regular file: a FIFO,
 * whose open or first read would wait for a writer forever, a device, a directory or a socket
 * is refused ("PATH is not a regular file: refused"), as the writers of output directories
 * refuse them. Returns the descriptor (O_CLOEXEC, blocking), or a negative errno with a
 * one-line message in err ("PATH: why"; -ENOENT where path does not exist). */
int open_regular_read(const char *path, char *err, size_t errlen);

/* The 64-bit FNV-1a hash of the bytes of the regular file at path into *out: what a file is,
 * to tell two builds at one path apart (not against an adversary). Returns 0, or a negative
 * errno with "PATH: why" in err. */
int file_fnv1a64(const char *path, uint64_t *out, char *err, size_t errlen);

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

/* A file written whole by a writer that streams it (a recording), by write_file_whole()'s
 * rules: opened first, put in place at the end. */
struct whole_file {
	int fd;     /* write here */
	char *path; /* as given */
	char *tmp;  /* the temporary renamed over path at the end; NULL where written in place */
	int slot;   /* its place among the temporaries whole_file_remove_temps() removes, or -1 */
};

/* Opens path (not "-") for writing whole: a regular file with one link, or none yet, gets a
 * new temporary beside it ("PATH.tmpPID.N", O_EXCL, with the file's mode and owner), so the
 * file stays as it was until whole_file_commit() and two writers never write into one file;
 * anything else is opened in place, truncated. Returns 0 or a negative errno. */
int whole_file_open(struct whole_file *f, const char *path);

/* Closes f and renames its temporary over the path. Returns 0, or a negative errno with
 * "cannot write PATH: why" in err (the temporary removed, the path as it was). */
int whole_file_commit(struct whole_file *f, char *err, size_t errlen);

/* Closes f without putting it in place: its temporary is removed and the path stays as it was
 * (a file written in place keeps what was written). Returns whether a temporary was removed. */
bool whole_file_discard(struct whole_file *f);

/* Removes the temporaries of every whole file open now, for a signal handler of a process that
 * ends before it commits them (async-signal-safe: unlink() alone). */
void whole_file_remove_temps(void);

/*
 * Output directories (sweep --out, merge --out, profile --out): memsim opens the files it names
 * itself there (results.json, manifest.json, .memsim-lock) relative to the directory's
 * descriptor and never through a symbolic link, so a link planted in the directory cannot make
 * it write elsewhere, and it writes only into a directory of its effective user's, whose files
 * no one else can swap.
 */

/* Opens directory path for memsim's files, creating it and its parents (mode 0755) when
 * missing. Refused with a one-line reason: a path that is not a directory, a symbolic link
 * that is not the effective user's own (the user's own link to a directory is followed), a
 * directory another user owns. Returns an O_DIRECTORY descriptor, or a negative errno with
 * the message in err. */
int outdir_open(const char *path, char *err, size_t errlen);

/* Opens file name in directory dirfd (from outdir_open(); dir is its path, for messages) with
 * flags, O_NOFOLLOW and O_CLOEXEC: a symbolic link there is refused ("DIR/NAME is a symbolic
 * link: refused"), as is anything but a regular file; O_TRUNC truncates only after those
 * checks. O_CREAT makes the file mode 0666 less the umask. Returns the descriptor, or a
 * negative errno with a one-line message in err (-ENOENT when missing without O_CREAT). */
int outdir_file_open(int dirfd, const char *dir, const char *name, int flags, char *err,
		     size_t errlen);

/* Creates a new empty temporary file in dirfd for name (".memsim-tmp.PID.N.NAME", O_EXCL: no
 * link followed) and writes its name into tmp (at least 64 + strlen(name) bytes). Returns the
 * descriptor, or a negative errno with a message in err. Put it in place with
 * outdir_temp_commit(), or remove it with unlinkat(). lock_dir() removes those whose process
 * is gone. */
int outdir_temp_open(int dirfd, const char *dir, const char *name, char *tmp, size_t tmplen,
		     char *err, size_t errlen);

/* Renames temporary tmp over name in dirfd: a symbolic link named name is replaced, never
 * followed; a reader sees the old file or the new one, whole. On failure tmp is removed.
 * Returns 0 or a negative errno with "cannot write DIR/NAME: why" in err. */
int outdir_temp_commit(int dirfd, const char *dir, const char *tmp, const char *name, char *err,
		       size_t errlen);

/* Writes len bytes to name in dirfd whole, through a temporary file renamed over it (never
 * following a link, never writing in place); an existing regular file's mode is kept. Returns
 * 0, or a negative errno with "cannot write DIR/NAME: why" in err. */
int write_file_whole_at(int dirfd, const char *dir, const char *name, const void *data, size_t len,
			char *err, size_t errlen);

/* Creates a new directory parent/prefix-XXXXXX (mkdtemp: a name no one can predict, mode 0700)
 * and writes its path into out. Returns 0, or a negative errno with "cannot ...: why" in err. */
int make_private_dir(const char *parent, const char *prefix, char *out, size_t len, char *err,
		     size_t errlen);

/* Takes the lock of directory dirfd (from outdir_open(); dir is its path, for messages): flock
 * on DIR/.memsim-lock, opened as outdir_file_open() does, which records the holder's pid. The
 * lock lasts as long as the returned descriptor stays open (and the processes forked since).
 * Removes the temporary files of outdir_temp_open() whose process is gone. Returns the
 * descriptor, or a negative errno with a one-line message in err: -EBUSY "dir is in use by
 * another memsim (pid N)". */
int lock_dir(int dirfd, const char *dir, char *err, size_t errlen);
