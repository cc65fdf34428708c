#define _DEFAULT_SOURCE /* madvise(), MADV_HUGEPAGE */
#include "base/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void *
xzalloc(size_t bytes)
{
	void *p = calloc(1, bytes ? bytes : 1);

	if (!p) {
		fprintf(stderr, "memsim: out of memory allocating %zu bytes\n", bytes);
		abort();
	}
	return p;
}

#define HUGE_PAGE (UINT64_C(2) << 20)
void *
array_alloc_huge(uint64_t n, size_t size, bool zero)
{
	void *p = zero ? calloc(n, size) : malloc(n * size);
	uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	uintptr_t hi = ((uintptr_t)p + n * size) & ~(uintptr_t)(HUGE_PAGE - 1);

	if (p && hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
	return p;
}

void *
xrealloc(void *p, size_t bytes)
{
	void *q = realloc(p, bytes ? bytes : 1);

	if (!q) {
		fprintf(stderr, "memsim: out of memory allocating %zu bytes\n", bytes);
		abort();
	}
	return q;
}

char *
xstrdup(const char *s)
{
	size_t n;
	char *d;

	if (!s)
		return NULL;
	n = strlen(s) + 1;
	d = xzalloc(n);
	memcpy(d, s, n);
	return d;
}

/* The value of hex digit c, or -1. */
static int
hex_digit(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool
parse_u64(const char *s, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;

	if (!s || !isdigit((unsigned char)s[0]))
		return false;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return false;
	/* By hand: strtoull() with base 16 takes a second "0x" after ours ("0x0x10"). */
	for (; *s; s++) {
		int d = hex_digit((unsigned char)*s);

		if (d < 0 || (unsigned)d >= base)
			return false;
		if (v > (UINT64_MAX - (unsigned)d) / base)
			return false;
		v = v * base + (unsigned)d;
	}
	*out = v;
	return true;
}

bool
parse_hex_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 16)
		return false;
	for (size_t i = 0; i < len; i++) {
		int d = hex_digit((unsigned char)s[i]);

		if (d < 0)
			return false;
		v = (v << 4) | (unsigned)d;
	}
	*out = v;
	return true;
}

int
parse_size_bytes(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	const char *p = s;

	if (!s || !isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	switch (toupper((unsigned char)*p)) {
	case '\0':
		break;
	case 'B':
		p++;
		break;
	case 'K':
		shift = 10;
		p++;
		break;
	case 'M':
		shift = 20;
		p++;
		break;
	case 'G':
		shift = 30;
		p++;
		break;
	default:
		return -EINVAL;
	}
	if (shift) {
		/* Accept "K", "KB", "KiB". */
		if (p[0] == 'i' && toupper((unsigned char)p[1]) == 'B')
			p += 2;
		else if (toupper((unsigned char)p[0]) == 'B')
			p++;
	}
	if (*p != '\0')
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = v << shift;
	return 0;
}

char *
format_size_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = { 'G', 'M', 'K' };
	static const unsigned shifts[] = { 30, 20, 10 };

	for (size_t i = 0; i < sizeof(units); i++) {
		uint64_t unit = UINT64_C(1) << shifts[i];

		if (bytes && bytes % unit == 0) {
			snprintf(buf, len, "%" PRIu64 "%c", bytes / unit, units[i]);
			return buf;
		}
	}
	snprintf(buf, len, "%" PRIu64 "B", bytes);
	return buf;
}

double
now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void
sort_doubles(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
}

double
cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int
mkdir_p(const char *path)
{
	char *copy;
	int rc = 0;
	struct stat st;

	/* The loop below starts after the first byte: an empty path has none. */
	if (!*path)
		return -ENOENT;
	copy = xstrdup(path);
	for (char *p = copy + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(copy, 0755) && errno != EEXIST) {
			rc = -errno;
			break;
		}
		*p = c;
		if (c == '\0')
			break;
	}
	/* mkdir() says EEXIST for a file of that name too: path must end up a directory. */
	if (!rc) {
		if (stat(path, &st))
			rc = -errno;
		else if (!S_ISDIR(st.st_mode))
			rc = -ENOTDIR;
	}
	free(copy);
	return rc;
}

uint64_t
mem_available_bytes(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kb;

	if (f) {
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
				fclose(f);
				return (uint64_t)kb * 1024;
			}
		}
		fclose(f);
	}
	return (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
}

int
write_fd_all(int fd, const void *buf, size_t len)
{
	const char *data = buf;

	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

int
open_regular_read(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd, rc;

	/* O_NONBLOCK: opening a FIFO for reading does not wait for a writer; refused below. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	rc = fstat(fd, &st) ? -errno : 0;
	if (!rc && !S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		snprintf(err, errlen, "%s is not a regular file: refused", path);
	} else if (!rc && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
		rc = -errno;
	}
	if (rc) {
		if (rc != -EINVAL)
			snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		close(fd);
		return rc;
	}
	return fd;
}

int
file_fnv1a64(const char *path, uint64_t *out, char *err, size_t errlen)
{
	unsigned char buf[65536];
	uint64_t h = UINT64_C(0xcbf29ce484222325); /* FNV-1a's offset basis */
	int fd = open_regular_read(path, err, errlen), rc = 0;
	ssize_t n;

	if (fd < 0)
		return fd;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			break;
		}
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * UINT64_C(0x100000001b3); /* FNV's 64-bit prime */
	}
	close(fd);
	*out = h;
	return rc;
}

/* Gives the new file fd what the file it replaces had (old): its owner and group where they
 * differ and can be given, then its mode (after: a chown clears set-id bits). Returns false
 * when the owner or group could not be kept. */
static bool
keep_attributes(int fd, const struct stat *old)
{
	struct stat st;

	if (fstat(fd, &st))
		return false;
	if ((st.st_uid != old->st_uid || st.st_gid != old->st_gid) &&
	    fchown(fd, old->st_uid, old->st_gid))
		return false;
	return fchmod(fd, old->st_mode & 07777) == 0;
}

/* The temporaries of whole files open now, for whole_file_remove_temps(): a slot is FREE,
 * being CLAIMED (its path not written yet) or holds a temporary's path (READY). */
enum { TEMP_FREE, TEMP_CLAIMED, TEMP_READY };
#define TEMP_SLOTS 8
static struct {
	atomic_int state;
	char path[4096];
} temp_slots[TEMP_SLOTS];

/* Records tmp for whole_file_remove_temps(); the slot's index, or -1 when all are taken (the
 * file is still written whole, only not removed by a signal). */
static int
temp_register(const char *tmp)
{
	if (strlen(tmp) >= sizeof(temp_slots[0].path))
		return -1;
	for (int i = 0; i < TEMP_SLOTS; i++) {
		int want = TEMP_FREE;

		if (atomic_compare_exchange_strong(&temp_slots[i].state, &want, TEMP_CLAIMED)) {
			strcpy(temp_slots[i].path, tmp);
			atomic_store(&temp_slots[i].state, TEMP_READY);
			return i;
		}
	}
	return -1;
}

void
whole_file_remove_temps(void)
{
	for (int i = 0; i < TEMP_SLOTS; i++)
		if (atomic_load(&temp_slots[i].state) == TEMP_READY)
			unlink(temp_slots[i].path);
}

/* Clears f's slot, closes it and frees its names. */
static void
whole_file_release(struct whole_file *f)
{
	if (f->slot >= 0)
		atomic_store(&temp_slots[f->slot].state, TEMP_FREE);
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	free(f->tmp);
	f->slot = f->fd = -1;
	f->path = f->tmp = NULL;
}

int
whole_file_open(struct whole_file *f, const char *path)
{
	static atomic_uint serial;
	struct stat st;
	bool exists = lstat(path, &st) == 0;
	int rc;

	memset(f, 0, sizeof(*f));
	f->slot = -1;
	f->path = xstrdup(path);
	/* A link, a device, a FIFO: replacing it would break what it stands for. A second hard
	 * link would keep the old contents: written in place, so every name sees the new ones. */
	if (exists && (!S_ISREG(st.st_mode) || st.st_nlink > 1))
		goto in_place;
	f->tmp = xzalloc(strlen(path) + 48);
	sprintf(f->tmp, "%s.tmp%ld.%u", path, (long)getpid(), atomic_fetch_add(&serial, 1));
	f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (f->fd < 0) {
		rc = -errno;
		f->fd = -1;
		whole_file_release(f);
		return rc;
	}
	f->slot = temp_register(f->tmp);
	if (!exists || keep_attributes(f->fd, &st))
		return 0;
	/* Another user's file we may write but not give away: in place keeps its owner. */
	unlink(f->tmp);
	close(f->fd);
	free(f->tmp);
	f->tmp = NULL;
	if (f->slot >= 0)
		atomic_store(&temp_slots[f->slot].state, TEMP_FREE);
	f->slot = -1;
in_place:
	f->fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (f->fd < 0) {
		rc = -errno;
		whole_file_release(f);
		return rc;
	}
	return 0;
}

int
whole_file_commit(struct whole_file *f, char *err, size_t errlen)
{
	int rc = close(f->fd) ? -errno : 0;

	f->fd = -1;
	/* rename() last: until then the file at path is the old one, whole. */
	if (!rc && f->tmp && rename(f->tmp, f->path))
		rc = -errno;
	if (rc) {
		snprintf(err, errlen, "cannot write %s: %s", f->path, strerror(-rc));
		if (f->tmp)
			unlink(f->tmp);
	}
	whole_file_release(f);
	return rc;
}

bool
whole_file_discard(struct whole_file *f)
{
	bool removed = f->tmp && unlink(f->tmp) == 0;

	whole_file_release(f);
	return removed;
}

int
write_file_whole(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
	struct whole_file f;
	int rc;

	if (strcmp(path, "-") == 0) {
		/* What stdio holds goes first, so the output keeps its order. */
		rc = fflush(stdout) ? -errno : write_fd_all(STDOUT_FILENO, data, len);
		if (rc)
			snprintf(err, errlen, "cannot write standard output: %s", strerror(-rc));
		return rc;
	}
	rc = whole_file_open(&f, path);
	if (!rc && (rc = write_fd_all(f.fd, data, len)))
		whole_file_discard(&f);
	else if (!rc)
		return whole_file_commit(&f, err, errlen);
	snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
	return rc;
}

int
outdir_open(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd, rc;

	if ((rc = mkdir_p(path))) {
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(-rc));
		return rc;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* A link is ELOOP, or ENOTDIR where O_DIRECTORY is checked first (Linux). */
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR) && lstat(path, &st) == 0 &&
	    S_ISLNK(st.st_mode)) {
		/* The user's own link (out -> /scratch/out) is theirs to follow; one that another
		 * user planted where the user meant to create a directory is not. */
		if (st.st_uid != geteuid()) {
			snprintf(err, errlen,
				 "%s is a symbolic link of user %ld, not yours: refused", path,
				 (long)st.st_uid);
			return -EPERM;
		}
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return rc;
	}
	if (fstat(fd, &st)) {
		rc = -errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		close(fd);
		return rc;
	}
	/* Its owner could replace any file memsim writes there, between two of our calls. */
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen,
			 "%s belongs to user %ld, not to you (%ld): refused (its owner could swap "
			 "the files memsim writes there)",
			 path, (long)st.st_uid, (long)geteuid());
		close(fd);
		return -EPERM;
	}
	return fd;
}

int
outdir_file_open(int dirfd, const char *dir, const char *name, int flags, char *err, size_t errlen)
{
	struct stat st;
	int fd, rc;

	/* O_NONBLOCK: a FIFO planted there must not hang the open; it is refused below. */
	fd = openat(dirfd, name, (flags & ~O_TRUNC) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
	if (fd < 0) {
		rc = -errno;
		if (errno == ELOOP)
			snprintf(err, errlen,
				 "%s/%s is a symbolic link: refused (memsim follows no "
				 "link inside its output directory)",
				 dir, name);
		else if (errno == ENXIO) /* a FIFO without a reader, a socket */
			snprintf(err, errlen, "%s/%s is not a regular file: refused", dir, name);
		else
			snprintf(err, errlen, "cannot open %s/%s: %s", dir, name, strerror(errno));
		return rc;
	}
	rc = fstat(fd, &st) ? -errno : 0;
	if (!rc && !S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		snprintf(err, errlen, "%s/%s is not a regular file: refused", dir, name);
	} else if (!rc && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
		rc = -errno;
	} else if (!rc && (flags & O_TRUNC) && ftruncate(fd, 0)) {
		rc = -errno;
	}
	if (rc) {
		if (rc != -EINVAL)
			snprintf(err, errlen, "cannot open %s/%s: %s", dir, name, strerror(-rc));
		close(fd);
		return rc;
	}
	return fd;
}

#define OUTDIR_TEMP_PREFIX ".memsim-tmp."

int
outdir_temp_open(int dirfd, const char *dir, const char *name, char *tmp, size_t tmplen, char *err,
		 size_t errlen)
{
	static unsigned serial;
	int fd;

	if ((size_t)snprintf(tmp, tmplen, OUTDIR_TEMP_PREFIX "%ld.%u.%s", (long)getpid(), serial++,
			     name) >= tmplen) {
		snprintf(err, errlen, "cannot write %s/%s: the name is too long", dir, name);
		return -ENAMETOOLONG;
	}
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0) {
		int rc = -errno;

		snprintf(err, errlen, "cannot write %s/%s: %s", dir, name, strerror(errno));
		return rc;
	}
	return fd;
}

int
outdir_temp_commit(int dirfd, const char *dir, const char *tmp, const char *name, char *err,
		   size_t errlen)
{
	int rc;

	/* rename() replaces a link named name; it never writes through it. */
	if (renameat(dirfd, tmp, dirfd, name) == 0)
		return 0;
	rc = -errno;
	snprintf(err, errlen, "cannot write %s/%s: %s", dir, name, strerror(errno));
	unlinkat(dirfd, tmp, 0);
	return rc;
}

int
write_file_whole_at(int dirfd, const char *dir, const char *name, const void *data, size_t len,
		    char *err, size_t errlen)
{
	char tmp[4200];
	struct stat st;
	int fd, rc;

	fd = outdir_temp_open(dirfd, dir, name, tmp, sizeof(tmp), err, errlen);
	if (fd < 0)
		return fd;
	rc = write_fd_all(fd, data, len);
	if (!rc && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	    fchmod(fd, st.st_mode & 0777))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (rc) {
		snprintf(err, errlen, "cannot write %s/%s: %s", dir, name, strerror(-rc));
		unlinkat(dirfd, tmp, 0);
		return rc;
	}
	return outdir_temp_commit(dirfd, dir, tmp, name, err, errlen);
}

int
make_private_dir(const char *parent, const char *prefix, char *out, size_t len, char *err,
		 size_t errlen)
{
	if ((size_t)snprintf(out, len, "%s/%s-XXXXXX", parent, prefix) >= len) {
		snprintf(err, errlen, "cannot make a directory in %.200s: the path is too long",
			 parent);
		return -ENAMETOOLONG;
	}
	if (!mkdtemp(out)) {
		int rc = -errno;

		snprintf(err, errlen, "cannot make a directory in %.200s: %s", parent,
			 strerror(errno));
		return rc;
	}
	return 0;
}

/* Removes the temporary files of outdir_temp_open() in dirfd whose process is gone (a merge
 * killed before its renames): they would only take space. */
static void
remove_dead_temps(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		const char *p = e->d_name + strlen(OUTDIR_TEMP_PREFIX);
		char *end;
		long pid;

		if (strncmp(e->d_name, OUTDIR_TEMP_PREFIX, strlen(OUTDIR_TEMP_PREFIX)) != 0)
			continue;
		errno = 0;
		pid = strtol(p, &end, 10);
		if (errno || end == p || *end != '.' || pid <= 0)
			continue;
		if (kill((pid_t)pid, 0) && errno == ESRCH)
			unlinkat(dirfd, e->d_name, 0);
	}
	closedir(d);
}

int
lock_dir(int dirfd, const char *dir, char *err, size_t errlen)
{
	char pid[32];
	int fd, rc;

	fd = outdir_file_open(dirfd, dir, ".memsim-lock", O_RDWR | O_CREAT, err, errlen);
	if (fd < 0)
		return fd;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		ssize_t n = read(fd, pid, sizeof(pid) - 1);

		rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		if (rc == -EBUSY)
			snprintf(err, errlen, "%s is in use by another memsim%s%s%s", dir,
				 pid[0] ? " (pid " : "", pid, pid[0] ? ")" : "");
		else
			snprintf(err, errlen, "cannot lock %s: %s", dir, strerror(-rc));
		close(fd);
		return rc;
	}
	snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) == 0 && write_fd_all(fd, pid, strlen(pid)) == 0) {
		remove_dead_temps(dirfd);
		return fd;
	}
	rc = -errno;
	snprintf(err, errlen, "cannot lock %s: %s", dir, strerror(errno));
	close(fd);
	return rc;
}
