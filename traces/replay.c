#include "traces/replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/progress.h"
#include "base/util.h"

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

int
replay_reader(struct trace_reader *r, struct cache *c, bool tiles_in_scratch, uint64_t *accesses,
	      char *err, size_t errlen)
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
		long got = trace_reader_simulate(r, c, &ctl);

		if (got < 0) {
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
replay_file(const char *path, enum trace_format format, const struct spec *spec, bool flush,
	    struct replay_result *out, char *err, size_t errlen)
{
	struct trace_reader *r;
	double t0;

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
	progress_begin("replay");
	t0 = now_seconds();
	if (replay_reader(r, out->cache, spec->tiles_in_scratch, &out->accesses, err, errlen)) {
		progress_end();
		trace_reader_close(r);
		replay_result_finish(out);
		return -1;
	}
	out->seconds = now_seconds() - t0;
	progress_end();
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
