/*
 * Writes the memsim-format seeds of the memsim fuzz harness with the real writer
 * (traces/mtrace.c), so the seeds hold every record kind the writer emits:
 *   gen-mtrace-seeds DIR     writes DIR/<name>.mtr
 * The files are in the tree (tests/fuzz/seeds/memsim/); rerun this after a format change.
 */

#include <stdio.h>
#include <stdlib.h>

#include "traces/mtrace.h"

static struct mtrace_writer *
start(const char *dir, const char *name)
{
	char path[4096], err[512];
	struct mtrace_writer *w;

	snprintf(path, sizeof(path), "%s/%s.mtr", dir, name);
	w = mtrace_writer_open(path, "gen-mtrace-seeds", err, sizeof(err));
	if (!w) {
		fprintf(stderr, "gen-mtrace-seeds: %s\n", err);
		exit(1);
	}
	return w;
}

static void
finish(struct mtrace_writer *w)
{
	char err[512];

	if (mtrace_writer_close(w, err, sizeof(err))) {
		fprintf(stderr, "gen-mtrace-seeds: %s\n", err);
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	struct mtrace_writer *w;
	int p0, p1;

	if (argc != 2) {
		fprintf(stderr, "usage: gen-mtrace-seeds DIR\n");
		return 2;
	}

	/* Header tables, short and long records, a size change, repeats, a fetch, and an array
	 * and a phase declared after the header. */
	w = start(argv[1], "mixed");
	mtrace_writer_array(w, "Q", 0x10000, 4096, TRACE_SPACE_DRAM);
	mtrace_writer_array(w, "S", 0x20000, 1024, TRACE_SPACE_SCRATCH);
	mtrace_writer_array(w, "T", 0x30000, 1024, TRACE_SPACE_TILE);
	p0 = mtrace_writer_phase(w, "load");
	mtrace_writer_set_phase(w, p0);
	for (int i = 0; i < 32; i++)
		mtrace_writer_access(w, TRACE_EV_LOAD, 0x10000 + 4 * (uint64_t)i, 4, 1);
	mtrace_writer_access(w, TRACE_EV_STORE, 0x20000, 8, 1);
	mtrace_writer_access(w, TRACE_EV_STORE, 0x30010, 8, 3);
	mtrace_writer_access(w, TRACE_EV_IFETCH, 0x400000, 4, 1);
	mtrace_writer_array(w, "late", 0x50000, 256, TRACE_SPACE_DRAM);
	p1 = mtrace_writer_phase(w, "compute");
	mtrace_writer_set_phase(w, p1);
	mtrace_writer_access(w, TRACE_EV_LOAD, 0x5003e, 4, 1); /* straddles a 64-byte line */
	mtrace_writer_access(w, TRACE_EV_LOAD, 0x7fff0000, 16, 1);
	mtrace_writer_set_phase(w, p0);
	mtrace_writer_access(w, TRACE_EV_STORE, 0x10000, 4, 1);
	finish(w);

	/* A stream of loads and stores: the fused loop's bread and butter. */
	w = start(argv[1], "stream");
	for (int i = 0; i < 256; i++) {
		mtrace_writer_access(w, TRACE_EV_LOAD, 0x100000 + 4 * (uint64_t)i, 4, 1);
		if (i % 8 == 0)
			mtrace_writer_access(w, TRACE_EV_STORE, 0x200000 + 4 * (uint64_t)i, 4, 1);
	}
	finish(w);

	/* A column walk: far jumps of one slot, and the other slots interleaved. */
	w = start(argv[1], "column");
	for (int i = 0; i < 64; i++) {
		mtrace_writer_access(w, TRACE_EV_LOAD, 0x1000000 + 4096 * (uint64_t)i, 4, 1);
		mtrace_writer_access(w, TRACE_EV_LOAD, 0x2000000 + 8 * (uint64_t)i, 8, 1);
		mtrace_writer_access(w, TRACE_EV_STORE, 0x3000000 + 8 * (uint64_t)i, 8, 1);
	}
	finish(w);

	/* Nothing but the header and the end record. */
	w = start(argv[1], "empty");
	finish(w);

	/* The top of the address space and back. */
	w = start(argv[1], "high");
	mtrace_writer_access(w, TRACE_EV_LOAD, UINT64_MAX - 4096 - 63, 8, 1);
	mtrace_writer_access(w, TRACE_EV_LOAD, 0, 1, 1);
	mtrace_writer_access(w, TRACE_EV_STORE, UINT64_C(1) << 63, 2, 65535);
	finish(w);
	return 0;
}
