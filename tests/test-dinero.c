/*
 * memsim against Dinero IV itself: tests/data/dinero holds din traces and the counts the real
 * Dinero IV (release 7) printed for them under six hierarchies, with and without its final
 * copy-back (see SEMANTICS.md and COMMANDS.txt there). Every number must match exactly.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/spec.h"
#include "tests/unit.h"
#include "traces/replay.h"

#define DIR TEST_DATA_DIR "/dinero"

struct config {
	char name[32];
	char spec[256];
};

static void
test_dinero_golden(void **state)
{
	FILE *f = fopen(DIR "/expected.tsv", "r");
	char line[1024];
	struct config cfgs[32];
	unsigned ncfg = 0, rows = 0;

	(void)state;
	assert_non_null(f);
	/* First pass: the "# cN<TAB>spec" lines. */
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' && ncfg < 32 &&
		    sscanf(line, "# %31s %255s", cfgs[ncfg].name, cfgs[ncfg].spec) == 2)
			ncfg++;
	}
	assert_true(ncfg >= 12);
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		char trace[64], cname[32], level[8], path[512], err[512];
		unsigned long long v[7];
		const struct config *cfg = NULL;
		struct spec spec;
		struct replay_result res;
		const struct cache_level_stats *st;
		unsigned li;
		bool flush;

		if (line[0] == '#' || strncmp(line, "trace\t", 6) == 0)
			continue;
		if (sscanf(line, "%63s %31s %7s %llu %llu %llu %llu %llu %llu %llu", trace, cname,
			   level, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) != 10)
			fail_msg("bad row: %s", line);
		for (unsigned i = 0; i < ncfg; i++)
			if (strcmp(cfgs[i].name, cname) == 0)
				cfg = &cfgs[i];
		assert_non_null(cfg);
		flush = strstr(cname, "_noflush") == NULL;
		if (spec_parse(cfg->spec, &spec, err, sizeof(err)))
			fail_msg("%s: %s", cfg->spec, err);
		snprintf(path, sizeof(path), DIR "/%s.din", trace);
		if (replay_file(path, TRACE_FORMAT_DIN, &spec, flush, &res, err, sizeof(err)))
			fail_msg("%s: %s", path, err);
		li = (unsigned)(level[1] - '1');
		st = cache_level_stats(res.cache, li);
		{
			uint64_t line_bytes = cache_level_config(res.cache, li)->line_bytes;
			uint64_t got[7] = { st->reads,
					    st->writes,
					    st->read_misses,
					    st->write_misses,
					    st->writebacks,
					    st->fills * line_bytes,
					    st->writebacks * line_bytes };
			static const char *names[7] = { "reads",         "writes",
							"read_misses",   "write_misses",
							"copies_back",   "bytes_from_below",
							"bytes_to_below" };

			for (int k = 0; k < 7; k++)
				if (got[k] != v[k])
					fail_msg("%s %s %s: %s = %llu, Dinero IV says %llu", trace,
						 cname, level, names[k], (unsigned long long)got[k],
						 v[k]);
		}
		replay_result_finish(&res);
		rows++;
	}
	fclose(f);
	assert_true(rows >= 88);
	printf("# %u Dinero IV rows matched exactly\n", rows);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dinero_golden),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
