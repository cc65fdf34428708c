/*
 * bench-replay FILE SPEC [--batch]: the C side of the Python package's benchmark. Replays the
 * accesses in FILE through a hierarchy made from SPEC, as an outside program does (the shared
 * libmemsim, public headers only), timing only the accesses: memsim_load()/memsim_store() once
 * per access, or one memsim_access_batch() with --batch. Prints one JSON line:
 * {"accesses": n, "seconds": s, "rate": n/s, "report": memsim_report_json()}.
 *
 * FILE, in native byte order (numpy's tofile): n (uint64), addrs[n] (uint64), sizes[n]
 * (uint32), writes[n] (uint8). Exit 2 for usage and a bad spec, 1 for a bad file.
 */

#include <memsim/memsim.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROG "bench-replay"

struct accesses {
	uint64_t n;
	uint64_t *addrs;
	uint32_t *sizes;
	uint8_t *writes;
};

static int
usage(const char *msg)
{
	fprintf(stderr, PROG ": %s (usage: " PROG " FILE SPEC [--batch])\n", msg);
	return 2;
}

static int
read_part(FILE *f, const char *path, void *buf, size_t elem, uint64_t n, const char *what)
{
	if (n && fread(buf, elem, (size_t)n, f) != n) {
		fprintf(stderr, PROG ": %s: truncated in %s (%llu expected)\n", path, what,
			(unsigned long long)n);
		return -1;
	}
	return 0;
}

/* Reads FILE whole; every access is checked as memsim_access_batch() checks it, so both modes
 * take the same files. Returns 0, or -1 with a one-line message on stderr. */
static int
read_accesses(const char *path, struct accesses *a)
{
	FILE *f = fopen(path, "rb");
	long size;
	int rc = -1;

	memset(a, 0, sizeof(*a));
	if (!f) {
		fprintf(stderr, PROG ": %s: cannot open it\n", path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, PROG ": %s: cannot read its length\n", path);
		goto out;
	}
	if (fread(&a->n, sizeof(a->n), 1, f) != 1) {
		fprintf(stderr, PROG ": %s: truncated: no access count (8 bytes)\n", path);
		goto out;
	}
	if (a->n > ((uint64_t)size - 8) / 13) {
		fprintf(stderr, PROG ": %s: truncated: %ld bytes, too few for %llu accesses\n",
			path, size, (unsigned long long)a->n);
		goto out;
	}
	if ((uint64_t)size != 8 + a->n * 13) {
		fprintf(stderr, PROG ": %s: %ld bytes, where %llu accesses take %llu\n", path, size,
			(unsigned long long)a->n, (unsigned long long)(8 + a->n * 13));
		goto out;
	}
	a->addrs = malloc(a->n ? a->n * sizeof(*a->addrs) : 1);
	a->sizes = malloc(a->n ? a->n * sizeof(*a->sizes) : 1);
	a->writes = malloc(a->n ? a->n : 1);
	if (!a->addrs || !a->sizes || !a->writes) {
		fprintf(stderr, PROG ": %s: out of memory for %llu accesses\n", path,
			(unsigned long long)a->n);
		goto out;
	}
	if (read_part(f, path, a->addrs, sizeof(*a->addrs), a->n, "addrs") ||
	    read_part(f, path, a->sizes, sizeof(*a->sizes), a->n, "sizes") ||
	    read_part(f, path, a->writes, 1, a->n, "writes"))
		goto out;
	for (uint64_t i = 0; i < a->n; i++)
		if (a->sizes[i] == 0 || a->sizes[i] > MEMSIM_BATCH_MAX_SIZE ||
		    a->addrs[i] > UINT64_MAX - (a->sizes[i] - 1)) {
			fprintf(stderr,
				PROG ": %s: access %llu: %u bytes at 0x%llx (1 to %u bytes, "
				     "below 2^64)\n",
				path, (unsigned long long)i, a->sizes[i],
				(unsigned long long)a->addrs[i], MEMSIM_BATCH_MAX_SIZE);
			goto out;
		}
	rc = 0;
out:
	fclose(f);
	return rc;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The report on one line: whitespace outside strings dropped. */
static void
print_compact(const char *s)
{
	int in_string = 0;

	for (; *s; s++) {
		if (in_string) {
			putchar(*s);
			if (*s == '\\' && s[1])
				putchar(*++s);
			else if (*s == '"')
				in_string = 0;
		} else if (*s == '"') {
			in_string = 1;
			putchar(*s);
		} else if (*s != ' ' && *s != '\n' && *s != '\t' && *s != '\r') {
			putchar(*s);
		}
	}
}

int
main(int argc, char **argv)
{
	struct accesses a;
	struct memsim_hierarchy *h;
	struct memsim_trace *t;
	char err[512], *report;
	int batch = 0;
	double t0, secs;

	if (argc == 4 && strcmp(argv[3], "--batch") == 0)
		batch = 1;
	else if (argc != 3)
		return usage(argc == 4 ? "the third argument can only be --batch"
				       : "expected FILE and SPEC");
	h = memsim_hierarchy_create(argv[2], err, sizeof(err));
	if (!h) {
		fprintf(stderr, PROG ": %s\n", err);
		return 2;
	}
	if (read_accesses(argv[1], &a)) {
		memsim_hierarchy_destroy(h);
		free(a.addrs), free(a.sizes), free(a.writes);
		return 1;
	}
	t = memsim_trace_create(h, NULL, err, sizeof(err));
	if (!t) {
		fprintf(stderr, PROG ": %s\n", err);
		return 1;
	}
	t0 = now();
	if (batch) {
		if (memsim_access_batch(t, (size_t)a.n, a.addrs, a.sizes, a.writes, 0, 0)) {
			fprintf(stderr, PROG ": memsim_access_batch refused the accesses\n");
			return 1;
		}
	} else {
		for (uint64_t i = 0; i < a.n; i++) {
			const void *p = (const void *)(uintptr_t)a.addrs[i];

			if (a.writes[i])
				memsim_store(t, p, a.sizes[i]);
			else
				memsim_load(t, p, a.sizes[i]);
		}
	}
	secs = now() - t0;
	if (memsim_trace_finish(t, err, sizeof(err))) {
		fprintf(stderr, PROG ": %s\n", err);
		return 1;
	}
	report = memsim_report_json(h);
	if (!report) {
		fprintf(stderr, PROG ": out of memory for the report\n");
		return 1;
	}
	printf("{\"accesses\": %llu, \"seconds\": %.9f, \"rate\": %.6g, \"report\": ",
	       (unsigned long long)a.n, secs, secs > 0 ? (double)a.n / secs : 0.0);
	print_compact(report);
	printf("}\n");
	memsim_free(report);
	memsim_trace_destroy(t);
	memsim_hierarchy_destroy(h);
	free(a.addrs), free(a.sizes), free(a.writes);
	return fflush(stdout) ? 1 : 0;
}
