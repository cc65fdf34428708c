/*
 * Replay on several threads, split by set (traces/replay.h, replay_file_split()).
 *
 * Notes:
 *  - Each thread reads and decodes the whole file with its own reader and simulates its
 *    slice of every level (cache_set_slice()): what is split is the simulation, not the
 *    decoding, so it pays where the model's misses cost more than reading the trace.
 *  - The readers are opened and the models built here, before any thread starts: opening
 *    reads the file's header, and progress reports (one line per process) come from the
 *    first reader alone.
 *  - Each slice is flushed on its own thread; the sum is taken after all have ended, slice 0
 *    first, so the counts do not depend on which thread ends first.
 */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/progress.h"
#include "sim/util.h"
#include "traces/replay.h"

/* One slice: its reader, its model, and how its run ended. */
struct slice {
	struct trace_reader *r;
	struct cache *cache;
	bool tiles_in_scratch, flush;
	uint64_t accesses;
	int rc;
	char err[512];
};

static void *
run_slice(void *arg)
{
	struct slice *s = arg;

	s->rc = replay_reader(s->r, s->cache, s->tiles_in_scratch, &s->accesses, s->err,
			      sizeof(s->err));
	if (!s->rc && s->flush)
		cache_flush(s->cache);
	return NULL;
}

/* Opens k readers of path and builds k slices of spec's model; returns 0, or -1 with err
 * (what was opened is left for free_slices()). */
static int
open_slices(struct slice *sl, unsigned k, const char *path, enum trace_format format,
	    const struct spec *spec, bool flush, char *err, size_t errlen)
{
	for (unsigned i = 0; i < k; i++) {
		sl[i].tiles_in_scratch = spec->tiles_in_scratch;
		sl[i].flush = flush;
		sl[i].r = trace_reader_open(path, format, err, errlen);
		if (!sl[i].r)
			return -1;
		if (i)
			trace_reader_quiet(sl[i].r);
		sl[i].cache = cache_create(&spec->cache);
		if (!sl[i].cache) {
			snprintf(err, errlen, "cannot allocate %u cache models (%.1f MiB each)", k,
				 (double)cache_model_bytes(&spec->cache) / 1048576.0);
			return -1;
		}
		cache_set_slice(sl[i].cache, k, i);
	}
	return 0;
}

static void
free_slices(struct slice *sl, unsigned k)
{
	for (unsigned i = 0; i < k; i++) {
		if (sl[i].r)
			trace_reader_close(sl[i].r);
		cache_destroy(sl[i].cache);
	}
	free(sl);
}

/* Runs slices 1 .. k-1 on threads of their own and slice 0 on this one; returns 0, or -1
 * with the first failed slice's message in err. */
static int
run_slices(struct slice *sl, unsigned k, char *err, size_t errlen)
{
	pthread_t *tid = xzalloc(k * sizeof(*tid));
	unsigned started = 1;
	int rc = 0;

	for (; started < k; started++) {
		int e = pthread_create(&tid[started], NULL, run_slice, &sl[started]);

		if (e) {
			snprintf(err, errlen, "cannot start replay thread %u of %u: %s",
				 started + 1, k, strerror(e));
			rc = -1;
			break;
		}
	}
	if (!rc)
		run_slice(&sl[0]);
	for (unsigned i = 1; i < started; i++)
		pthread_join(tid[i], NULL);
	free(tid);
	for (unsigned i = 0; i < k && !rc; i++)
		if (sl[i].rc) {
			snprintf(err, errlen, "%s", sl[i].err);
			rc = -1;
		}
	return rc;
}

/* The threads path can use, up to want: cache_slices_max(), and 1 for input that only one
 * reader can read. */
static unsigned
plan_threads(const char *path, const struct spec *spec, unsigned want, char *why, size_t whylen)
{
	struct stat st;
	unsigned k = cache_slices_max(&spec->cache, want, why, whylen);

	if (k > 1 && (strcmp(path, "-") == 0 || stat(path, &st) || !S_ISREG(st.st_mode))) {
		snprintf(why, whylen,
			 "the trace is not a regular file (each thread reads it): one thread");
		return 1;
	}
	return k;
}

int
replay_file_split(const char *path, enum trace_format format, const struct spec *spec, bool flush,
		  unsigned threads, struct replay_result *out, char *err, size_t errlen)
{
	char why[sizeof(out->threads_why)];
	unsigned k = plan_threads(path, spec, threads ? threads : 1, why, sizeof(why));
	struct slice *sl;
	double t0;

	if (k == 1) {
		int rc = replay_file(path, format, spec, flush, out, err, errlen);

		if (!rc)
			snprintf(out->threads_why, sizeof(out->threads_why), "%s", why);
		return rc;
	}
	memset(out, 0, sizeof(*out));
	sl = xzalloc(k * sizeof(*sl));
	if (open_slices(sl, k, path, format, spec, flush, err, errlen)) {
		free_slices(sl, k);
		return -1;
	}
	spec_format(spec, out->spec_text, sizeof(out->spec_text));
	progress_begin("replay");
	t0 = now_seconds();
	if (run_slices(sl, k, err, errlen)) {
		progress_end();
		free_slices(sl, k);
		return -1;
	}
	for (unsigned i = 1; i < k; i++)
		if (cache_add_slice(sl[0].cache, sl[i].cache)) {
			snprintf(err, errlen,
				 "internal: replay thread %u saw other arrays or phases", i + 1);
			progress_end();
			free_slices(sl, k);
			return -1;
		}
	out->seconds = now_seconds() - t0;
	progress_end();
	out->cache = sl[0].cache;
	sl[0].cache = NULL;
	out->accesses = sl[0].accesses;
	out->format = trace_reader_format(sl[0].r);
	out->records = trace_reader_records(sl[0].r);
	out->skipped = trace_reader_skipped(sl[0].r);
	out->tool_version = xstrdup(trace_reader_tool_version(sl[0].r));
	out->recorded_command = xstrdup(trace_reader_command(sl[0].r));
	out->threads = k;
	snprintf(out->threads_why, sizeof(out->threads_why), "%s", why);
	free_slices(sl, k);
	return 0;
}
