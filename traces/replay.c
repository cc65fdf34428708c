#include "traces/replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/progress.h"
#include "base/util.h"
#include "traces/replay_record.h"

static int
declare_array(struct trace_reader *r, struct cache *c, unsigned i, bool tiles_in_scratch, char *err,
	      size_t errlen)
{
	const struct trace_array *a = trace_reader_array(r, i);
	bool scratch = a->space == TRACE_SPACE_SCRATCH ||
		       (a->space == TRACE_SPACE_TILE && tiles_in_scratch);

	if (cache_add_array(c, a->name, a->base, a->bytes, scratch) < 0) {
		snprintf(err, errlen, "trace declares more than %d arrays", CACHE_MAX_ARRAYS);
		return -1;
	}
	return 0;
}

/* replay_reader(), recording into rec where it is given. */
static int
replay_events(struct trace_reader *r, struct cache *c, bool tiles_in_scratch,
	      struct replay_recorder *rec, uint64_t *accesses, char *err, size_t errlen)
{
	const struct cache_cpu_stats *cpu = cache_cpu(c);
	uint64_t before = cpu->ops[0] + cpu->ops[1] + cpu->ops[2];
	int *phase_map = NULL;
	unsigned mapped = 0;
	int rc = -1;

	for (unsigned i = 0; i < trace_reader_array_count(r); i++)
		if (declare_array(r, c, i, tiles_in_scratch, err, errlen))
			goto out;
	for (;;) {
		struct cache_ref ctl;
		long got = rec ? replay_recorder_simulate(rec, r, c, &ctl, err, errlen)
			       : trace_reader_simulate(r, c, &ctl);

		if (got < 0) {
			if (!rec)
				snprintf(err, errlen, "%s", trace_reader_error(r));
			goto out;
		}
		if (got == 0)
			break;
		if (ctl.kind == TRACE_EV_PHASE) {
			unsigned np = trace_reader_phase_count(r);

			if (mapped < np) {
				phase_map = xrealloc(phase_map, np * sizeof(*phase_map));
				for (; mapped < np; mapped++) {
					phase_map[mapped] =
						cache_add_phase(c, trace_reader_phase(r, mapped));
					if (phase_map[mapped] < 0) {
						snprintf(err, errlen, "more than %d phases",
							 CACHE_MAX_PHASES);
						goto out;
					}
				}
			}
			cache_set_phase(c, phase_map[ctl.addr]);
		} else if (declare_array(r, c, (unsigned)ctl.addr, tiles_in_scratch, err, errlen)) {
			goto out;
		}
	}
	rc = 0;
out:
	*accesses += cpu->ops[0] + cpu->ops[1] + cpu->ops[2] - before;
	free(phase_map);
	return rc;
}

int
replay_reader(struct trace_reader *r, struct cache *c, bool tiles_in_scratch, uint64_t *accesses,
	      char *err, size_t errlen)
{
	return replay_events(r, c, tiles_in_scratch, NULL, accesses, err, errlen);
}

/* Opens the recording of a replay of r into rec; returns 0, or -1 with err. */
static int
record_open(struct replay_recorder *rec, const struct replay_record *to,
	    const struct trace_reader *r, char *err, size_t errlen)
{
	char why[4400];

	rec->w = mtrace_writer_open(to->path, to->command ? to->command : "", why, sizeof(why));
	if (!rec->w) {
		snprintf(err, errlen, "recording: %s", why);
		return -1;
	}
	if (replay_recorder_sync(rec, r, err, errlen)) {
		mtrace_writer_discard(rec->w);
		return -1;
	}
	return 0;
}

/* Ends the recording of a replay that ok says succeeded: put in place, or, failed, removed
 * (saying so after the message in err). Returns 0, or -1 with err. */
static int
record_close(struct replay_recorder *rec, const struct trace_reader *r, bool ok, char *err,
	     size_t errlen)
{
	char why[4400];
	size_t n;

	if (ok && replay_recorder_sync(rec, r, err, errlen))
		ok = false;
	if (!ok) {
		n = strlen(err);
		if (mtrace_writer_discard(rec->w) && n < errlen)
			snprintf(err + n, errlen - n, " (the incomplete recording was removed)");
		return -1;
	}
	if (mtrace_writer_close(rec->w, why, sizeof(why)) == 0)
		return 0;
	snprintf(err, errlen, "recording: %s", why);
	return -1;
}

int
replay_file(const char *path, enum trace_format format, const struct spec *spec, bool flush,
	    struct replay_result *out, char *err, size_t errlen)
{
	return replay_file_record(path, format, spec, flush, NULL, out, err, errlen);
}

int
replay_file_record(const char *path, enum trace_format format, const struct spec *spec, bool flush,
		   const struct replay_record *to, struct replay_result *out, char *err,
		   size_t errlen)
{
	struct replay_recorder rec = { 0 };
	struct trace_reader *r;
	double t0;
	int rc;

	memset(out, 0, sizeof(*out));
	r = trace_reader_open(path, format, err, errlen);
	if (!r)
		return -1;
	out->cache = cache_create(&spec->cache);
	if (!out->cache) {
		if (!cache_config_validate(&spec->cache, err, errlen))
			snprintf(err, errlen, "cannot allocate the cache model (%.1f MiB)",
				 (double)cache_model_bytes(&spec->cache) / 1048576.0);
		trace_reader_close(r);
		return -1;
	}
	spec_format(spec, out->spec_text, sizeof(out->spec_text));
	if (to && record_open(&rec, to, r, err, errlen)) {
		trace_reader_close(r);
		replay_result_finish(out);
		return -1;
	}
	progress_begin("replay");
	t0 = now_seconds();
	rc = replay_events(r, out->cache, spec->tiles_in_scratch, to ? &rec : NULL, &out->accesses,
			   err, errlen);
	out->seconds = now_seconds() - t0;
	progress_end();
	if (to && record_close(&rec, r, rc == 0, err, errlen))
		rc = -1;
	if (rc) {
		trace_reader_close(r);
		replay_result_finish(out);
		return -1;
	}
	if (flush)
		cache_flush(out->cache);
	cache_sample_scale(out->cache); /* set sampling's estimate; nothing otherwise */
	out->format = trace_reader_format(r);
	out->records = trace_reader_records(r);
	out->skipped = trace_reader_skipped(r);
	out->tool_version = xstrdup(trace_reader_tool_version(r));
	out->recorded_command = xstrdup(trace_reader_command(r));
	out->threads = 1;
	trace_reader_close(r);
	return 0;
}

void
replay_result_finish(struct replay_result *res)
{
	cache_destroy(res->cache);
	free(res->tool_version);
	free(res->recorded_command);
	memset(res, 0, sizeof(*res));
}
