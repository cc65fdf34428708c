/*
 * count.c: a kernel of your own through libmemsim. It copies array a into b one cache line at a
 * time, through a 64-byte scratch tile, on a hierarchy from a spec, and prints what the
 * hierarchy counted: in all, per level, per array and per phase.
 *
 *   cc -std=c11 count.c $(pkg-config --cflags --libs memsim) -o count
 *   ./count [SPEC [RECORDING [REPORT.json]]]
 *
 * SPEC is a --cache spec or preset [L1=256B:2:64]; RECORDING, where given, records every access
 * for `memsim replay`; REPORT.json receives the report `memsim run --json` would write.
 */

#include <memsim/memsim.h>
#include <stdio.h>
#include <stdlib.h>

#define LINE 64
#define LINES 4

static void
print_stats(const char *what, const char *name, const struct memsim_stats *s)
{
	printf("%s %s: dram read %llu write %llu rfo %llu flush %llu, scratch read %llu write %llu\n",
	       what, name, (unsigned long long)s->dram.read_bytes,
	       (unsigned long long)s->dram.write_bytes, (unsigned long long)s->dram.rfo_bytes,
	       (unsigned long long)s->dram.flush_write_bytes,
	       (unsigned long long)s->cpu.scratch_read_bytes,
	       (unsigned long long)s->cpu.scratch_write_bytes);
	for (unsigned i = 0; i < s->levels; i++) {
		const struct memsim_level_stats *l = &s->level[i];

		printf("  %s: reads %llu writes %llu hits %llu misses %llu fills %llu "
		       "evictions %llu writebacks %llu\n",
		       l->name, (unsigned long long)l->reads, (unsigned long long)l->writes,
		       (unsigned long long)l->hits, (unsigned long long)l->misses,
		       (unsigned long long)l->fills, (unsigned long long)l->evictions,
		       (unsigned long long)l->writebacks);
	}
}

/* The kernel: a is read whole, then copied line by line into b through the tile. Each store to
 * b covers a whole line, which a write-allocate cache allocates without fetching it. */
static void
kernel(struct memsim_trace *t, const char *a, char *b, char *tile)
{
	TR_PHASE(t, "read");
	TR_LOAD_SPAN(t, a, LINES * LINE);
	TR_PHASE(t, "copy");
	for (int i = 0; i < LINES; i++) {
		TR_LOAD_SPAN(t, a + i * LINE, LINE);
		TR_STORE_SPAN(t, tile, LINE);
		TR_LOAD_SPAN(t, tile, LINE);
		TR_STORE_SPAN(t, b + i * LINE, LINE);
	}
}

int
main(int argc, char **argv)
{
	/* 128-byte aligned: line i of a and of b falls in set i % 2 of the default L1. */
	static _Alignas(128) char a[LINES * LINE], b[LINES * LINE], tile[LINE];
	const char *spec = argc > 1 ? argv[1] : "L1=256B:2:64";
	struct memsim_hierarchy *h;
	struct memsim_trace *t;
	struct memsim_stats s;
	char err[512], text[1024];
	int rc = 0;

	h = memsim_hierarchy_create(spec, err, sizeof(err));
	if (!h) {
		fprintf(stderr, "count: %s\n", err);
		return 2;
	}
	t = memsim_trace_create(h, argc > 2 ? argv[2] : NULL, err, sizeof(err));
	if (!t) {
		fprintf(stderr, "count: %s\n", err);
		memsim_hierarchy_destroy(h);
		return 1;
	}
	if (TR_ARRAY(t, "a", a, sizeof(a), MEMSIM_SPACE_DRAM) ||
	    TR_ARRAY(t, "b", b, sizeof(b), MEMSIM_SPACE_DRAM) ||
	    TR_ARRAY(t, "tile", tile, sizeof(tile), MEMSIM_SPACE_SCRATCH)) {
		fprintf(stderr, "count: cannot declare the arrays\n");
		rc = 1;
	}
	kernel(t, a, b, tile);
	if (memsim_trace_finish(t, err, sizeof(err))) { /* the counters are final after it */
		fprintf(stderr, "count: %s\n", err);
		rc = 1;
	}
	memsim_trace_destroy(t);

	printf("memsim %s, cache %s\n", memsim_version(),
	       memsim_hierarchy_spec(h, text, sizeof(text)));
	memsim_stats_total(h, &s);
	printf("loads %llu (%llu bytes), stores %llu (%llu bytes)\n",
	       (unsigned long long)s.cpu.loads, (unsigned long long)s.cpu.load_bytes,
	       (unsigned long long)s.cpu.stores, (unsigned long long)s.cpu.store_bytes);
	print_stats("total", "", &s);
	for (unsigned i = 0; i < memsim_stats_arrays(h); i++)
		if (memsim_stats_array(h, i, &s) == 0)
			print_stats("array", memsim_stats_array_name(h, i), &s);
	for (unsigned i = 0; i < memsim_stats_phases(h); i++)
		if (memsim_stats_phase(h, i, &s) == 0)
			print_stats("phase", memsim_stats_phase_name(h, i), &s);

	if (argc > 3) {
		char *json = memsim_report_json(h);
		FILE *f = fopen(argv[3], "w");

		if (!json || !f || fputs(json, f) == EOF || fclose(f) != 0) {
			fprintf(stderr, "count: %s: cannot write the report\n", argv[3]);
			rc = 1;
		} else {
			f = NULL;
		}
		if (f)
			fclose(f);
		memsim_free(json);
	}
	memsim_hierarchy_destroy(h);
	return rc;
}
