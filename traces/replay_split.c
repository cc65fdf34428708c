/*
 * Replay on several threads, split by set (traces/replay.h, replay_file_split()), two ways,
 * whichever is faster (docs/speed.md, "How memsim replay --threads splits a trace"):
 *  - memsim's binary format from a regular file: each thread reads and decodes the whole file
 *    with its own reader and simulates its slice of every level (cache_set_slice()). Its
 *    fused loop decodes and simulates in one pass, and a repeat record's accesses in other
 *    slices are counted, not decoded byte by byte, so the decoding each thread repeats is
 *    cheap beside one reader handing out every access.
 *  - text formats and pipes: one reader decodes once into a feed (sim/drive/feed.h) and each
 *    slice thread simulates its chunks' accesses. Parsing text costs more than simulating,
 *    so parsing it on every thread costs more than handing it out.
 *  - Either way each slice is flushed on its own thread and the sum is taken after all have
 *    ended, slice 0 first, so the counts do not depend on which thread ends first.
 */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/progress.h"
#include "base/util.h"
#include "sim/drive/feed.h"
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

/* Opens k - 1 more readers of path (sl[0].r is open) and builds k slices of spec's model;
 * returns 0, or -1 with err (what was opened is left for free_slices()). */
static int
open_slices(struct slice *sl, unsigned k, const char *path, enum trace_format format,
	    const struct spec *spec, bool flush, char *err, size_t errlen)
{
	for (unsigned i = 0; i < k; i++) {
		sl[i].tiles_in_scratch = spec->tiles_in_scratch;
		sl[i].flush = flush;
		if (i)
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
		cache_prefault(sl[i].cache);
	}
	return 0;
}

static void
free_slices(struct slice *sl, unsigned k)
{
	for (unsigned i = 0; i < k; i++) {
		if (sl[i].r && i) /* reader 0 is replay_file_split()'s */
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

/* The rest of replay_file_split() for decoding on every thread, r open on path. */
static int
split_each(struct trace_reader *r, const char *path, enum trace_format format,
	   const struct spec *spec, bool flush, unsigned k, struct replay_result *out, char *err,
	   size_t errlen)
{
	struct slice *sl = xzalloc(k * sizeof(*sl));
	double t0;

	sl[0].r = r;
	if (open_slices(sl, k, path, format, spec, flush, err, errlen)) {
		free_slices(sl, k);
		return -1;
	}
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
	free_slices(sl, k);
	return 0;
}

/* The rest of replay_file_split() for one reader feeding the threads. */
static int
split_feed(struct trace_reader *r, const struct spec *spec, bool flush, unsigned k,
	   struct replay_result *out, char *err, size_t errlen)
{
	struct cache_feed *f = cache_feed_start(&spec->cache, k, false, err, errlen);
	double t0;

	if (!f)
		return -1;
	progress_begin("replay");
	t0 = now_seconds();
	if (replay_reader(r, cache_feed_model(f), spec->tiles_in_scratch, &out->accesses, err,
			  errlen)) {
		progress_end();
		cache_feed_abort(f);
		return -1;
	}
	if (cache_feed_finish(f, flush, &out->cache, err, errlen)) {
		progress_end();
		return -1;
	}
	out->seconds = now_seconds() - t0;
	progress_end();
	return 0;
}

int
replay_file_split(const char *path, enum trace_format format, const struct spec *spec, bool flush,
		  unsigned threads, struct replay_result *out, char *err, size_t errlen)
{
	char why[sizeof(out->threads_why)];
	unsigned k = cache_slices_max(&spec->cache, threads ? threads : 1, why, sizeof(why));
	struct trace_reader *r;
	struct stat st;
	int rc;

	if (k == 1) {
		rc = replay_file(path, format, spec, flush, out, err, errlen);
		if (!rc)
			snprintf(out->threads_why, sizeof(out->threads_why), "%s", why);
		return rc;
	}
	memset(out, 0, sizeof(*out));
	r = trace_reader_open(path, format, err, errlen);
	if (!r)
		return -1;
	spec_format(spec, out->spec_text, sizeof(out->spec_text));
	if (trace_reader_format(r) == TRACE_FORMAT_MEMSIM && strcmp(path, "-") != 0 &&
	    stat(path, &st) == 0 && S_ISREG(st.st_mode))
		rc = split_each(r, path, trace_reader_format(r), spec, flush, k, out, err, errlen);
	else
		rc = split_feed(r, spec, flush, k, out, err, errlen);
	if (rc) {
		trace_reader_close(r);
		return -1;
	}
	out->format = trace_reader_format(r);
	out->records = trace_reader_records(r);
	out->skipped = trace_reader_skipped(r);
	out->tool_version = xstrdup(trace_reader_tool_version(r));
	out->recorded_command = xstrdup(trace_reader_command(r));
	out->threads = k;
	snprintf(out->threads_why, sizeof(out->threads_why), "%s", why);
	trace_reader_close(r);
	return 0;
}
