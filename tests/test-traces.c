/*
 * Trace formats: memsim's binary format round-trips events, arrays and phases exactly and
 * refuses every truncation; din and lackey text parse as Dinero IV and lackey mean them, and
 * garbled lines are errors naming file and line. Replaying a memsim trace (decoding fused
 * with the model's inline hit tests) gives the counters of one cache_access() per event.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/spec.h"
#include "tests/counters.h"
#include "tests/unit.h"
#include "traces/replay.h"

#define TMPDIR_NAME "traces"
#include "tests/tmpdir.h"
#include "traces/mtrace.h"
#include "traces/reader.h"

static void
path_in_tmp(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

static void
write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Reads every event; returns the count, or -1 with the message in err. */
static long
read_all(const char *path, enum trace_format fmt, struct cache_ref *out, size_t max, char *err,
	 size_t errlen)
{
	struct trace_reader *r = trace_reader_open(path, fmt, err, errlen);
	size_t n = 0;

	if (!r)
		return -1;
	for (;;) {
		/* Small, odd batches exercise the refills. */
		long got = trace_reader_read(r, out + n, max - n < 7 ? max - n : 7);

		if (got < 0) {
			snprintf(err, errlen, "%s", trace_reader_error(r));
			trace_reader_close(r);
			return -1;
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n == max)
			break;
	}
	trace_reader_close(r);
	return (long)n;
}

static uint64_t
lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 11;
}

#define NEV 200000

static struct cache_ref want[NEV + 16], got[NEV + 16];

/* Writes a trace with every record shape: short and long records, all slots, ifetches,
 * large and negative deltas, addresses near the top, counts, arrays and phases declared in
 * the header and mid-trace. Returns the number of events a reader should see. */
static size_t
write_sample(const char *path, size_t nacc)
{
	char err[256];
	struct mtrace_writer *w =
		mtrace_writer_open(path, "test-traces --sample", err, sizeof(err));
	uint64_t rng = 12345, stream[3] = { 0x10000, 0x7fff0000, 0xffffffffffff0000ULL };
	size_t n = 0;
	int ph;

	assert_non_null(w);
	assert_int_equal(mtrace_writer_array(w, "Q", 0x10000, 4096, TRACE_SPACE_DRAM), 0);
	assert_int_equal(mtrace_writer_array(w, "tile", 0x7fff0000, 256, TRACE_SPACE_TILE), 1);
	ph = mtrace_writer_phase(w, "scores");
	mtrace_writer_set_phase(w, ph);
	want[n++] = (struct cache_ref){ (uint64_t)ph, 0, TRACE_EV_PHASE, 1 };
	for (size_t i = 0; i < nacc; i++) {
		uint64_t r = lcg(&rng);
		unsigned s = r % 3;
		enum trace_event_kind kind = (enum trace_event_kind)((r >> 4) % 3);
		uint32_t size = 1u << ((r >> 8) % 4);
		uint32_t count = (r >> 12) % 16 == 0 ? 1 + (uint32_t)((r >> 16) % 300) : 1;

		if ((r >> 20) % 50 == 0)
			stream[s] -= (r >> 24) % 100000; /* a jump back */
		else
			stream[s] += size;
		if (i == nacc / 2) {
			int arr = mtrace_writer_array(w, "late", 0x5000, 64, TRACE_SPACE_SCRATCH);

			assert_int_equal(arr, 2);
			want[n++] = (struct cache_ref){ 2, 0, TRACE_EV_ARRAY, 1 };
			ph = mtrace_writer_phase(w, "softmax");
			mtrace_writer_set_phase(w, ph);
			want[n++] = (struct cache_ref){ (uint64_t)ph, 0, TRACE_EV_PHASE, 1 };
		}
		mtrace_writer_access(w, kind, stream[s], size, count);
		/* The writer merges exact repeats into one event. */
		if (n && want[n - 1].kind == kind && want[n - 1].addr == stream[s] &&
		    want[n - 1].size == size && want[n - 1].count + count <= 65535)
			want[n - 1].count = (uint16_t)(want[n - 1].count + count);
		else
			want[n++] = (struct cache_ref){ stream[s], size, (uint16_t)kind,
							(uint16_t)count };
	}
	assert_int_equal(mtrace_writer_close(w, err, sizeof(err)), 0);
	return n;
}

/* The format version in the header of the memsim trace at path: the 4 little-endian bytes
 * after the magic (traces/mtrace.h). */
static uint32_t
header_version(const char *path)
{
	unsigned char h[12];
	FILE *f = fopen(path, "rb");
	uint32_t v = 0;

	assert_non_null(f);
	assert_int_equal(fread(h, 1, sizeof(h), f), sizeof(h));
	fclose(f);
	assert_memory_equal(h, MTRACE_MAGIC, 8);
	for (int i = 3; i >= 0; i--)
		v = v << 8 | h[8 + i];
	return v;
}

static void
test_memsim_round_trip(void **state)
{
	char path[512], err[512];
	size_t n;
	long rn;
	struct trace_reader *r;

	(void)state;
	path_in_tmp(path, sizeof(path), "round.mtr");
	n = write_sample(path, NEV);
	rn = read_all(path, TRACE_FORMAT_AUTO, got, NEV + 16, err, sizeof(err));
	if (rn < 0)
		fail_msg("read failed: %s", err);
	assert_int_equal((size_t)rn, n);
	for (size_t i = 0; i < n; i++)
		if (memcmp(&want[i], &got[i], sizeof(got[i])) != 0)
			fail_msg("event %zu: got kind %u addr %llx size %u count %u, want kind %u "
				 "addr %llx size %u count %u",
				 i, got[i].kind, (unsigned long long)got[i].addr, got[i].size,
				 got[i].count, want[i].kind, (unsigned long long)want[i].addr,
				 want[i].size, want[i].count);
	r = trace_reader_open(path, TRACE_FORMAT_MEMSIM, err, sizeof(err));
	assert_non_null(r);
	assert_string_equal(trace_reader_command(r), "test-traces --sample");
	assert_int_equal(header_version(path), MTRACE_VERSION);
	assert_int_equal(trace_reader_array_count(r), 2); /* the header's; "late" comes later */
	assert_string_equal(trace_reader_array(r, 1)->name, "tile");
	assert_int_equal(trace_reader_array(r, 1)->space, TRACE_SPACE_TILE);
	assert_int_equal(trace_reader_array(r, 0)->bytes, 4096);
	assert_int_equal(trace_reader_phase_count(r), 1);
	while (trace_reader_read(r, got, 1000) > 0)
		;
	assert_int_equal(trace_reader_array_count(r), 3);
	assert_int_equal(trace_reader_array(r, 2)->space, TRACE_SPACE_SCRATCH);
	assert_string_equal(trace_reader_phase(r, 1), "softmax");
	trace_reader_close(r);
}

/* Writes a trace with locality: four streams wandering in 96 KiB, so accesses hit L1's most
 * recent slots, hit older slots and miss, with sizes from 1 to 100 bytes (some straddle lines),
 * repeats, instruction fetches, a mid-trace array and a phase switch. */
static void
write_local_sample(const char *path, size_t nacc)
{
	static const uint32_t sizes[] = { 4, 4, 4, 8, 1, 2, 16, 64, 100 };
	char err[256];
	struct mtrace_writer *w = mtrace_writer_open(path, "test-traces --local", err, sizeof(err));
	uint64_t rng = 777, stream[4] = { 0x100000, 0x104000, 0x108000, 0x110000 };
	uint32_t size[4] = { 4, 4, 4, 8 };

	assert_non_null(w);
	mtrace_writer_array(w, "A", 0x100000, 0x8000, TRACE_SPACE_DRAM);
	mtrace_writer_set_phase(w, mtrace_writer_phase(w, "one"));
	for (size_t i = 0; i < nacc; i++) {
		uint64_t r = lcg(&rng);
		unsigned s = r % 4;
		enum trace_event_kind kind = (r >> 4) % 8 == 0 ? TRACE_EV_STORE : TRACE_EV_LOAD;
		uint32_t count = (r >> 8) % 64 == 0 ? 1 + (uint32_t)((r >> 14) % 5) : 1;

		if ((r >> 20) % 200 == 0)
			size[s] = sizes[(r >> 28) % 9];
		if ((r >> 36) % 500 == 0)
			kind = TRACE_EV_IFETCH;
		if ((r >> 40) % 64 == 0)
			stream[s] = 0x100000 + (r >> 46) % 0x18000; /* a jump, any alignment */
		else
			stream[s] = 0x100000 +
				    (stream[s] + size[s] * ((r >> 48) % 3) - 0x100000) % 0x18000;
		if (i == nacc / 2) {
			mtrace_writer_array(w, "late", 0x108000, 0x1000, TRACE_SPACE_DRAM);
			mtrace_writer_set_phase(w, mtrace_writer_phase(w, "two"));
		}
		mtrace_writer_access(w, kind, stream[s], size[s], count);
	}
	assert_int_equal(mtrace_writer_close(w, err, sizeof(err)), 0);
}

/* One cache_access() per decoded event, with arrays and phases as replay_reader() maps them. */
static void
replay_by_event(const char *path, struct cache *c)
{
	char err[512];
	struct trace_reader *r = trace_reader_open(path, TRACE_FORMAT_MEMSIM, err, sizeof(err));
	unsigned arrays = 0, phases = 0;
	int map[16];
	long n;

	assert_non_null(r);
	for (; arrays < trace_reader_array_count(r); arrays++)
		cache_add_array(c, trace_reader_array(r, arrays)->name,
				trace_reader_array(r, arrays)->base,
				trace_reader_array(r, arrays)->bytes, false);
	while ((n = trace_reader_read(r, got, 1000)) > 0) {
		for (long i = 0; i < n; i++) {
			const struct cache_ref *e = &got[i];

			if (e->kind == TRACE_EV_PHASE) {
				for (; phases < trace_reader_phase_count(r); phases++)
					map[phases] =
						cache_add_phase(c, trace_reader_phase(r, phases));
				cache_set_phase(c, map[e->addr]);
			} else if (e->kind == TRACE_EV_ARRAY) {
				const struct trace_array *a = trace_reader_array(r, arrays++);

				cache_add_array(c, a->name, a->base, a->bytes, false);
			} else {
				cache_access(c, e->addr, e->size, (enum cache_op)e->kind, e->count);
			}
		}
	}
	assert_int_equal(n, 0);
	trace_reader_close(r);
}

/* Loops as kernels write them, in repeat records: bodies of 1 to 4 streams, steps within a
 * line and across lines, forward and back, stores, an access that straddles lines, a count,
 * an instruction fetch, a size change; and a body that walks 10 lines of one L1 set (of 8
 * ways, under the 4K specs), so a period evicts its own lines and never counts as the one
 * before. The events go into want[] too. */
static void
write_loop_sample(const char *path, size_t nacc)
{
	static const int64_t steps[] = { 4, 8, -4, 64, 256, 0, 4096 };
	char err[256];
	struct mtrace_writer *w = mtrace_writer_open(path, "test-traces --loops", err, sizeof(err));
	uint64_t rng = 99;
	size_t n = 0;

	assert_non_null(w);
	while (n < nacc) {
		uint64_t r = lcg(&rng);
		unsigned streams = 1 + (unsigned)(r % 4), iters = 2 + (unsigned)((r >> 8) % 200);
		bool one_set = (r >> 16) % 5 == 0;

		if (one_set)
			streams = 10;
		for (unsigned t = 0; t < iters; t++)
			for (unsigned s = 0; s < streams && n < nacc; s++, n++) {
				int64_t step = one_set ? 4 : steps[(s + (r >> 24)) % 7];
				uint64_t a = (one_set ? 0x200000 + s * 512 : (s + 1) * 0x1000000) +
					     (uint64_t)(step * t) + (r >> 44) % 64;
				uint32_t size = s == 2 && (r >> 30) % 3 == 0 ? 8 : 4, count = 1;
				enum trace_event_kind kind = s == 1 ? TRACE_EV_STORE : TRACE_EV_LOAD;

				if (s == 3 && (r >> 34) % 4 == 0)
					a += 62; /* straddles lines now and then */
				if (s == 0 && (r >> 36) % 4 == 0)
					count = 3;
				if (s == 3 && (r >> 38) % 4 == 0)
					kind = TRACE_EV_IFETCH;
				want[n] = (struct cache_ref){ a, size, (uint16_t)kind,
							      (uint16_t)count };
				mtrace_writer_ref(w, &want[n]);
			}
	}
	assert_int_equal(mtrace_writer_close(w, err, sizeof(err)), 0);
}

/* The fused replay of the trace at path against one cache_access() per event, under every
 * kind of L1 and L2. */
static void
check_fused_replay(const char *path)
{
	static const char *specs[] = {
		"L1=4K:8:64,L2=32K:16:64",
		"L1=4K:4:64:fifo,L2=32K:8:64",
		"L1=4K:8:64:random,L2=32K:8:64:random",
		"L1=4K:8:64:plru,L2=32K:8:64",
		"L1=4K:8:64:wt:nwa,L2=32K:8:64",
		"L1=4K:8:64:wv,L2=32K:8:64",
		"L1=3K:6:64,L2=24K:12:64:incl",
		"L1=2K:full:32,L2=32K:8:64:incl",
		"L1=4K:1:64,L2=8K:2:64:excl,L3=64K:8:64",
		"L1=8K:16:128,L2=64K:8:128:quietwb",
		"I1=2K:2:64,L1=4K:8:64,L2=32K:8:64",
		/* cache.c's plain path: three plain levels, one thrashing pair with dirty victims
		 * at both, and a plain L1 over a level of longer lines (not plain) */
		"L1=2K:4:64,L2=8K:4:64,L3=32K:8:64",
		"L1=1K:2:64,L2=4K:4:64",
		"L1=4K:8:64,L2=32K:8:128",
		NULL,
	};
	char err[512];

	for (int i = 0; specs[i]; i++) {
		struct spec spec;
		struct replay_result res;
		struct cache *ref;
		uint64_t sum = 0;

		assert_int_equal(spec_parse(specs[i], &spec, err, sizeof(err)), 0);
		if (replay_file(path, TRACE_FORMAT_MEMSIM, &spec, true, &res, err, sizeof(err)))
			fail_msg("%s: %s", specs[i], err);
		ref = cache_create(&spec.cache);
		replay_by_event(path, ref);
		cache_flush(ref);
		for (unsigned l = 0; l < cache_level_count(ref); l++)
			if (memcmp(cache_level_stats(ref, l), cache_level_stats(res.cache, l),
				   sizeof(struct cache_level_stats)))
				fail_msg("%s: level %u counters differ", specs[i], l);
		assert_memory_equal(cache_cpu(ref), cache_cpu(res.cache),
				    sizeof(struct cache_cpu_stats));
		assert_int_equal(cache_phase_count(ref), cache_phase_count(res.cache));
		assert_int_equal(cache_array_count(ref), cache_array_count(res.cache));
		for (unsigned p = 0; p < cache_phase_count(ref); p++) {
			for (unsigned a = 0; a < cache_array_count(ref); a++)
				assert_memory_equal(cache_phase_array_traffic(ref, p, a),
						    cache_phase_array_traffic(res.cache, p, a),
						    sizeof(struct cache_traffic));
			for (unsigned l = 0; l < cache_level_count(ref); l++)
				assert_memory_equal(cache_phase_level_stats(ref, p, l),
						    cache_phase_level_stats(res.cache, p, l),
						    sizeof(struct cache_level_stats));
		}
		/* The sample is meant to exercise hits off the most recent slot and misses. */
		sum = cache_level_stats(ref, 0)->read_misses +
		      cache_level_stats(ref, 0)->write_misses;
		assert_true(sum > NEV / 100);
		cache_destroy(ref);
		replay_result_finish(&res);
	}
}

static void
test_memsim_fused_replay(void **state)
{
	char path[512];

	(void)state;
	path_in_tmp(path, sizeof(path), "local.mtr");
	write_local_sample(path, NEV);
	check_fused_replay(path);
}

/* Garbled and truncated repeat records are one-line errors naming the record; version 1 has
 * none. Each case: header version, the bytes after the header, the message. */
static void
test_memsim_bad_repeats(void **state)
{
	static const struct {
		unsigned char version;
		unsigned char bytes[8];
		size_t len;
		const char *msg;
	} cases[] = {
		{ 2, { 0xe5, 0x00, 0x02 }, 3, "record 1 repeats 0 records 2 times" },
		{ 2, { 0xe5, 0x41, 0x02 }, 3, "record 1 repeats 65 records 2 times" },
		{ 2, { 0xe5, 0x01, 0x01, 0x08 }, 4, "record 1 repeats 1 records 1 times" },
		{ 2, { 0xe5, 0x02, 0x02, 0x09 }, 4, "record 3 is truncated" },
		{ 2, { 0xe5, 0x01 }, 2, "record 1 is truncated" },
		{ 2, { 0xe5, 0x01, 0x02, 0xe1, 0x00 }, 5, "in the body of repeat record 1" },
		/* slot 0 at 8, then down 4 bytes a period: 4, 0, then below 0 */
		{ 2, { 0x80, 0x10, 0xe5, 0x01, 0x03, 0x07 }, 6, "repeat record 2 wraps" },
		{ 1, { 0xe5, 0x01, 0x02, 0x09 }, 4, "has unknown control type 5" },
		{ 0, { 0 }, 0, NULL },
	};
	char path[512], err[512];

	(void)state;
	path_in_tmp(path, sizeof(path), "badrep.mtr");
	for (int i = 0; cases[i].msg; i++) {
		unsigned char head[16] = { 'M', 'E', 'M', 'S', 'I', 'M', 'T', 'R', cases[i].version };
		FILE *f = fopen(path, "wb");

		assert_non_null(f);
		fwrite(head, 1, sizeof(head), f);
		fwrite(cases[i].bytes, 1, cases[i].len, f);
		fclose(f);
		assert_true(read_all(path, TRACE_FORMAT_MEMSIM, got, NEV, err, sizeof(err)) < 0);
		if (!strstr(err, cases[i].msg) || strchr(err, '\n'))
			fail_msg("case %d: \"%s\" for \"%s\"", i, err, cases[i].msg);
	}
}

/* Loops go into repeat records (the file is a fraction of a byte an access), read back event
 * for event, and replay fused as event by event. */
static void
test_memsim_repeats(void **state)
{
	char path[512], err[512];
	struct trace_reader *r;
	long n, total = 0;

	(void)state;
	path_in_tmp(path, sizeof(path), "loops.mtr");
	write_loop_sample(path, NEV);
	assert_int_equal(header_version(path), 2);
	r = trace_reader_open(path, TRACE_FORMAT_MEMSIM, err, sizeof(err));
	assert_non_null(r);
	while (total < NEV && (n = trace_reader_read(r, got + total, 777)) > 0)
		total += n;
	assert_int_equal(total, NEV);
	assert_int_equal(trace_reader_read(r, got + total, 16), 0);
	assert_memory_equal(got, want, NEV * sizeof(*got));
	assert_true(trace_reader_records(r) < NEV * 2 / 3);
	trace_reader_close(r);
	check_fused_replay(path);
}

/* Every proper prefix of a trace is refused: a truncated file never passes for a whole one. */
static void
test_memsim_truncation(void **state)
{
	char path[512], cut[512], err[512];
	FILE *f;
	long size;
	char *bytes;

	(void)state;
	path_in_tmp(path, sizeof(path), "small.mtr");
	path_in_tmp(cut, sizeof(cut), "cut.mtr");
	write_sample(path, 300);
	f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	bytes = malloc((size_t)size);
	assert_int_equal(fread(bytes, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	for (long len = 0; len < size; len++) {
		f = fopen(cut, "wb");
		fwrite(bytes, 1, (size_t)len, f);
		fclose(f);
		if (read_all(cut, TRACE_FORMAT_MEMSIM, got, NEV, err, sizeof(err)) >= 0)
			fail_msg("a %ld-byte prefix of a %ld-byte trace was accepted", len, size);
		assert_non_null(strstr(err, cut));
	}
	/* Trailing garbage after the end record is refused too. */
	f = fopen(cut, "wb");
	fwrite(bytes, 1, (size_t)size, f);
	fputc(0, f);
	fclose(f);
	assert_true(read_all(cut, TRACE_FORMAT_MEMSIM, got, NEV, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "after the end record"));
	/* A wrong magic or version is named. */
	memcpy(bytes, "MEMSIMTX", 8);
	f = fopen(cut, "wb");
	fwrite(bytes, 1, (size_t)size, f);
	fclose(f);
	assert_true(read_all(cut, TRACE_FORMAT_MEMSIM, got, NEV, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "bad magic"));
	memcpy(bytes, "MEMSIMTR", 8);
	bytes[8] = 9;
	f = fopen(cut, "wb");
	fwrite(bytes, 1, (size_t)size, f);
	fclose(f);
	assert_true(read_all(cut, TRACE_FORMAT_MEMSIM, got, NEV, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "format version 9"));
	free(bytes);
}

/* Access sizes: a trace asking for more than TRACE_MAX_ACCESS_BYTES in one access is refused
 * at once, naming the record; the writer splits a longer access into pieces readers accept,
 * which replay to the counts of the one access. */
static void
test_memsim_access_sizes(void **state)
{
	/* Header (magic, version 1, two empty strings, no arrays, no phases), then one long load
	 * of slot 0 with a size field, then the end record (1 record, 1 access). */
	static const unsigned char head[] = { 'M', 'E', 'M', 'S', 'I', 'M', 'T', 'R',
					      1,   0,   0,   0,   0,   0,   0,   0 };
	static const unsigned char huge[] = { 0x84, 0x00, 0xff, 0xff, 0xff,
					      0xff, 0x0f, 0xe4, 0x01, 0x01 };
	char path[512], err[512];
	struct cache *live;
	struct spec spec;
	struct replay_result res;
	struct mtrace_writer *w;
	FILE *f;
	double t0;

	(void)state;
	path_in_tmp(path, sizeof(path), "huge.mtr");
	f = fopen(path, "wb");
	assert_non_null(f);
	fwrite(head, 1, sizeof(head), f);
	fwrite(huge, 1, sizeof(huge), f);
	fclose(f);
	t0 = now_seconds();
	assert_true(read_all(path, TRACE_FORMAT_MEMSIM, got, NEV, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "record 1 has size 4294967295"));
	assert_true(now_seconds() - t0 < 1);
	assert_int_equal(spec_parse("L1=32K:8:64,L2=1M:16:64", &spec, err, sizeof(err)), 0);
	assert_int_not_equal(
		replay_file(path, TRACE_FORMAT_MEMSIM, &spec, true, &res, err, sizeof(err)), 0);
	/* 3.5 MiB stores, twice: split by the writer, the same lines in the same order. */
	path_in_tmp(path, sizeof(path), "long.mtr");
	w = mtrace_writer_open(path, "test-traces --long", err, sizeof(err));
	assert_non_null(w);
	mtrace_writer_access(w, TRACE_EV_STORE, 0x10000, 7u << 19, 2);
	mtrace_writer_access(w, TRACE_EV_LOAD, 0x10000, 64, 1);
	assert_int_equal(mtrace_writer_close(w, err, sizeof(err)), 0);
	assert_int_equal(
		replay_file(path, TRACE_FORMAT_MEMSIM, &spec, true, &res, err, sizeof(err)), 0);
	live = cache_create(&spec.cache);
	cache_access(live, 0x10000, 7u << 19, CACHE_OP_STORE, 2);
	cache_access(live, 0x10000, 64, CACHE_OP_LOAD, 1);
	cache_flush(live);
	for (unsigned i = 0; i < cache_level_count(live); i++)
		assert_memory_equal(cache_level_stats(live, i), cache_level_stats(res.cache, i),
				    sizeof(struct cache_level_stats));
	assert_memory_equal(cache_dram(live), cache_dram(res.cache), sizeof(struct cache_traffic));
	assert_int_equal(cache_cpu(res.cache)->bytes[CACHE_OP_STORE], 7u << 20);
	cache_destroy(live);
	replay_result_finish(&res);
}

/* Phases: a trace may declare CACHE_MAX_PHASES; the writer and the reader refuse more, the
 * reader naming the trace; a replay keeps every phase apart. */
static void
test_memsim_phase_cap(void **state)
{
	char path[512], err[512], name[32];
	struct mtrace_writer *w;
	struct spec spec;
	struct replay_result res;
	FILE *f;

	(void)state;
	path_in_tmp(path, sizeof(path), "phases.mtr");
	w = mtrace_writer_open(path, "test-traces --phases", err, sizeof(err));
	assert_non_null(w);
	for (int i = 0; i < CACHE_MAX_PHASES; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		assert_int_equal(mtrace_writer_phase(w, name), i);
	}
	assert_int_equal(mtrace_writer_phase(w, "one too many"), -ENOSPC);
	for (int i = 0; i < CACHE_MAX_PHASES; i++) {
		mtrace_writer_set_phase(w, i);
		mtrace_writer_access(w, TRACE_EV_LOAD, 0x1000 + 64 * (uint64_t)i, 4, 1);
	}
	assert_int_equal(mtrace_writer_close(w, err, sizeof(err)), 0);
	assert_int_equal(spec_parse("L1=32K:8:64", &spec, err, sizeof(err)), 0);
	assert_int_equal(
		replay_file(path, TRACE_FORMAT_MEMSIM, &spec, true, &res, err, sizeof(err)), 0);
	/* (none), the 1024 phases, flush */
	assert_int_equal(cache_phase_count(res.cache), CACHE_MAX_PHASES + 2);
	assert_int_equal(cache_phase_traffic(res.cache, 1000)->read_bytes, 64);
	replay_result_finish(&res);
	/* A header that declares 2000 phases. */
	path_in_tmp(path, sizeof(path), "phases2.mtr");
	f = fopen(path, "wb");
	assert_non_null(f);
	fwrite("MEMSIMTR\x01\0\0\0\0\0\0\xd0\x0f", 1, 17, f);
	for (int i = 0; i < 2000; i++)
		fwrite("\x01x", 1, 2, f);
	fwrite("\xe4\0\0", 1, 3, f);
	fclose(f);
	assert_true(read_all(path, TRACE_FORMAT_MEMSIM, got, NEV, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "declares more than 1024 phases"));
}

static void
test_din(void **state)
{
	char path[512], err[512];
	long n;

	(void)state;
	path_in_tmp(path, sizeof(path), "a.din");
	write_text(path, "0 1000\n"
			 "1 0x101f   a comment\n"
			 "\n"
			 "2\t7FE\n"
			 "  0 abc\r\n"
			 "3 500\n"
			 "1 403"); /* no final newline */
	n = read_all(path, TRACE_FORMAT_AUTO, got, 16, err, sizeof(err));
	assert_int_equal(n, 6);
	/* Dinero IV: 4-byte references at the address rounded down to 4. */
	assert_true(got[0].kind == TRACE_EV_LOAD && got[0].addr == 0x1000 && got[0].size == 4);
	assert_true(got[1].kind == TRACE_EV_STORE && got[1].addr == 0x101c);
	assert_true(got[2].kind == TRACE_EV_IFETCH && got[2].addr == 0x7fc);
	assert_true(got[3].kind == TRACE_EV_LOAD && got[3].addr == 0xabc);
	assert_true(got[4].kind == TRACE_EV_LOAD && got[4].addr == 0x500); /* misc: a read */
	assert_true(got[5].kind == TRACE_EV_STORE && got[5].addr == 0x400);

	/* Lines of the usual shape are read without input_line() (din.c quick_line()); these sit
	 * on its edges: 0x and 0X, 16 digits with and without 0x, a lone 0, two spaces. */
	write_text(path, "1 0X1f\n"
			 "0 0\n"
			 "3 ffffffffffffffff\n"
			 "2 0x0000000000000010\n"
			 "0  0x20\n");
	n = read_all(path, TRACE_FORMAT_DIN, got, 16, err, sizeof(err));
	assert_int_equal(n, 5);
	assert_true(got[0].kind == TRACE_EV_STORE && got[0].addr == 0x1c);
	assert_true(got[1].kind == TRACE_EV_LOAD && got[1].addr == 0);
	assert_true(got[2].kind == TRACE_EV_LOAD && got[2].addr == UINT64_C(0xfffffffffffffffc));
	assert_true(got[3].kind == TRACE_EV_IFETCH && got[3].addr == 0x10);
	assert_true(got[4].kind == TRACE_EV_LOAD && got[4].addr == 0x20);

	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "0 1000\n1 zz\n", ":2: bad address" },
		{ "0 1000\n0\n", ":2: bad label" },
		{ "0 10\n0 20\n4 40\n", ":3: din label 4 is not supported" },
		{ "0 10 \nx 40\n", ":2: bad label" },
		{ "0 12345678901234567\n", ":1: bad address" },
		{ "0 10\n0 0x12345678901234567\n", ":2: bad address" },
		{ "0 10\n0 0x\n0 10\n", ":2: bad address" },
		{ "0 10\n0 1g\n", ":2: bad address" },
		{ "0 10\n0 10\n5 10\n", ":3: din label 5 is not supported" },
		{ "0 10\n-1 10\n", ":2: bad label" },
		{ NULL, NULL },
	};
	for (int i = 0; bad[i].text; i++) {
		write_text(path, bad[i].text);
		assert_true(read_all(path, TRACE_FORMAT_DIN, got, 16, err, sizeof(err)) < 0);
		if (!strstr(err, bad[i].msg) || !strstr(err, path))
			fail_msg("din '%s': message '%s' lacks '%s'", bad[i].text, err, bad[i].msg);
	}
}

/* A random din line into f: a label, a space, 1 to 16 hex digits in mixed case (0x or 0X at
 * times), a newline; now and then a comment, and with odds 1 in `bad_odds` a byte that is
 * wrong somewhere (the line's length changes often, so the fast path's guess misses too). */
static void
random_din_line(FILE *f, uint64_t *seed, unsigned bad_odds)
{
	static const char digits[] = "0123456789abcdefABCDEF";
	static const char wrong[] = "gG/:@`xX \t\r-+\x80\xb0\x01";
	char line[64];
	size_t n = 0, len;

	line[n++] = (char)('0' + lcg(seed) % 4);
	line[n++] = ' ';
	if (lcg(seed) % 4 == 0) {
		line[n++] = '0';
		line[n++] = lcg(seed) % 2 ? 'x' : 'X';
	}
	len = 1 + lcg(seed) % 16;
	for (size_t i = 0; i < len; i++)
		line[n++] = digits[lcg(seed) % (sizeof(digits) - 1)];
	if (lcg(seed) % 50 == 0)
		n += (size_t)sprintf(line + n, " comment");
	if (bad_odds && lcg(seed) % bad_odds == 0) {
		size_t at = lcg(seed) % (n + 1);

		if (at == n) /* one digit too many, or a label past 3 */
			line[lcg(seed) % 2 ? n++ : 0] = lcg(seed) % 2 ? '7' : 'a';
		else
			line[at] = wrong[lcg(seed) % (sizeof(wrong) - 1)];
	}
	line[n++] = '\n';
	fwrite(line, 1, n, f);
}

/* Reads path as din, and again with a tab before every line, which din.c's fast path for the
 * usual line refuses and the full parse skips: the same events, or the same message up to the
 * quoted line (that has the tab). */
static void
din_fast_equals_full(const char *path, const char *tabbed)
{
	static struct cache_ref full[NEV + 16];
	char err[512], err_full[512], *quote;
	long n, n_full;
	FILE *in = fopen(path, "r"), *out = fopen(tabbed, "w");
	int c, at_start = 1;

	assert_non_null(in);
	assert_non_null(out);
	while ((c = getc(in)) != EOF) {
		if (at_start)
			putc('\t', out);
		putc(c, out);
		at_start = c == '\n';
	}
	fclose(in);
	fclose(out);
	err[0] = err_full[0] = '\0';
	n = read_all(path, TRACE_FORMAT_DIN, got, NEV, err, sizeof(err));
	n_full = read_all(tabbed, TRACE_FORMAT_DIN, full, NEV, err_full, sizeof(err_full));
	assert_int_equal(n, n_full);
	if (n >= 0) {
		assert_memory_equal(got, full, (size_t)n * sizeof(got[0]));
		return;
	}
	if ((quote = strchr(err, '\'')))
		*quote = '\0';
	if ((quote = strchr(err_full, '\'')))
		*quote = '\0';
	/* The messages name different files: compare from the line number on. */
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err_full, tabbed));
	assert_string_equal(err + strlen(path), err_full + strlen(tabbed));
}

/* din.c's fast path for the usual line against the full parse, on random lines: long files of
 * good lines of every length (across the reader's 1 MiB refills), and many short files with a
 * wrong byte here and there, so that every place on a line is hit. */
static void
test_din_fast_path(void **state)
{
	char path[512], tabbed[512];
	uint64_t seed = 45;

	(void)state;
	path_in_tmp(path, sizeof(path), "fast.din");
	path_in_tmp(tabbed, sizeof(tabbed), "tabbed.din");
	for (int round = 0; round < 2; round++) {
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		for (int i = 0; i < NEV - 1000; i++)
			random_din_line(f, &seed, 0);
		fclose(f);
		din_fast_equals_full(path, tabbed);
	}
	for (int round = 0; round < 2000; round++) {
		FILE *f = fopen(path, "w");
		int lines = 1 + (int)(lcg(&seed) % 40);

		assert_non_null(f);
		for (int i = 0; i < lines; i++)
			random_din_line(f, &seed, 20);
		fclose(f);
		din_fast_equals_full(path, tabbed);
	}
}

static void
test_lackey(void **state)
{
	char path[512], err[512];
	long n;

	(void)state;
	path_in_tmp(path, sizeof(path), "a.lackey");
	write_text(path, "==123== Lackey, an example Valgrind tool\n"
			 "==123== Command: ./prog\n"
			 "I  0400d7d4,8\n"
			 " L 7ff000ff0,8\n"
			 " S 04012345,4\n"
			 " M 0601090,4\n"
			 "I  0400d7dc,3\n"
			 "==123== \n");
	n = read_all(path, TRACE_FORMAT_AUTO, got, 16, err, sizeof(err));
	if (n < 0)
		fail_msg("%s", err);
	assert_int_equal(n, 6);
	assert_true(got[0].kind == TRACE_EV_IFETCH && got[0].addr == 0x400d7d4 && got[0].size == 8);
	assert_true(got[1].kind == TRACE_EV_LOAD && got[1].addr == 0x7ff000ff0 && got[1].size == 8);
	assert_true(got[2].kind == TRACE_EV_STORE && got[2].addr == 0x4012345 && got[2].size == 4);
	/* M: a load, then a store to the same bytes. */
	assert_true(got[3].kind == TRACE_EV_LOAD && got[3].addr == 0x601090);
	assert_true(got[4].kind == TRACE_EV_STORE && got[4].addr == 0x601090);
	assert_true(got[5].kind == TRACE_EV_IFETCH && got[5].size == 3);

	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ " L 1000,8\n X 1000,8\n", ":2: not a lackey line" },
		{ " L 1000,8\n L 1000\n", ":2: bad address,size" },
		{ " L zz,8\n", ":1: bad address,size" },
		{ " L 1000,0\n", ":1: bad address,size" },
		{ " S ffffffffffffffff,8\n", ":1: bad address,size" },
		{ "hello\n", ":1: not a lackey line" },
		{ NULL, NULL },
	};
	for (int i = 0; bad[i].text; i++) {
		write_text(path, bad[i].text);
		assert_true(read_all(path, TRACE_FORMAT_LACKEY, got, 16, err, sizeof(err)) < 0);
		if (!strstr(err, bad[i].msg) || !strstr(err, path))
			fail_msg("lackey '%s': message '%s' lacks '%s'", bad[i].text, err,
				 bad[i].msg);
	}
}

/* A batch boundary that falls inside an 'M' line keeps the store for the next batch. */
static void
test_lackey_modify_split(void **state)
{
	char path[512], err[512];
	struct trace_reader *r;
	struct cache_ref one[1];

	(void)state;
	path_in_tmp(path, sizeof(path), "m.lackey");
	write_text(path, " M 100,4\n M 200,4\n");
	r = trace_reader_open(path, TRACE_FORMAT_LACKEY, err, sizeof(err));
	assert_non_null(r);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(trace_reader_read(r, one, 1), 1);
		assert_int_equal(one[0].kind, i % 2 ? TRACE_EV_STORE : TRACE_EV_LOAD);
		assert_int_equal(one[0].addr, i < 2 ? 0x100 : 0x200);
	}
	assert_int_equal(trace_reader_read(r, one, 1), 0);
	trace_reader_close(r);
}

/* The line limit, half the readers' 1 MiB buffer: a 512 KiB line is read and one byte more is
 * "line too long", whether a '\n' or the end of the file follows it. (A last line of exactly
 * 512 KiB was refused and lines of up to 1 MiB were read when their '\n' was in the buffer.) */
static void
test_long_lines(void **state)
{
	/* clang-format off */
	static const struct {
		size_t bytes; /* of the long line, without '\n' */
		bool newline;
		bool ok;
	} cases[] = {
		{ 512 * 1024, true, true },
		{ 512 * 1024, false, true },
		{ 512 * 1024 + 1, true, false },
		{ 512 * 1024 + 1, false, false },
		{ 1024 * 1024 - 1, true, false },
	};
	/* clang-format on */
	char path[512], err[512];

	(void)state;
	path_in_tmp(path, sizeof(path), "long.lackey");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		FILE *f = fopen(path, "w");
		long n;

		assert_non_null(f);
		/* A Valgrind message line: skipped, so only its length matters. */
		fputs(" L 100,4\n==", f);
		for (size_t k = 2; k < cases[i].bytes; k++)
			fputc('x', f);
		fputs(cases[i].newline ? "\n S 200,4\n" : "", f);
		fclose(f);
		n = read_all(path, TRACE_FORMAT_LACKEY, got, 16, err, sizeof(err));
		if (cases[i].ok && n != (cases[i].newline ? 2 : 1))
			fail_msg("a %zu-byte line: %ld events (%s)", cases[i].bytes, n,
				 n < 0 ? err : "");
		if (!cases[i].ok && (n >= 0 || !strstr(err, ":2: line too long")))
			fail_msg("a %zu-byte line: %ld events, '%s'", cases[i].bytes, n,
				 n < 0 ? err : "");
	}
}

static void
test_open_errors(void **state)
{
	char path[512], err[512];

	(void)state;
	assert_null(trace_reader_open("/nonexistent/t.din", TRACE_FORMAT_AUTO, err, sizeof(err)));
	assert_non_null(strstr(err, "cannot open trace /nonexistent/t.din"));
	path_in_tmp(path, sizeof(path), "empty");
	write_text(path, "");
	assert_null(trace_reader_open(path, TRACE_FORMAT_AUTO, err, sizeof(err)));
	assert_non_null(strstr(err, "empty trace"));
	write_text(path, "hello world\n");
	assert_null(trace_reader_open(path, TRACE_FORMAT_AUTO, err, sizeof(err)));
	assert_non_null(strstr(err, "cannot tell the trace format"));
	write_text(path, "0 100\n");
	assert_null(trace_reader_open(path, TRACE_FORMAT_MEMSIM, err, sizeof(err)));
	assert_non_null(strstr(err, "not a memsim trace"));
}

/* A trace whose declarations come at every point: in the header, between accesses, and a
 * phase declared after the last switch. */
static void
write_declarations(const char *path)
{
	char err[256];
	struct mtrace_writer *w = mtrace_writer_open(path, "test-traces --decl", err, sizeof(err));

	assert_non_null(w);
	mtrace_writer_array(w, "H", 0x1000, 0x1000, TRACE_SPACE_DRAM);
	mtrace_writer_phase(w, "head");
	for (uint64_t a = 0x1000; a < 0x3000; a += 24)
		mtrace_writer_access(w, a % 3 ? TRACE_EV_LOAD : TRACE_EV_STORE, a, 8, 1);
	mtrace_writer_array(w, "T", 0x2000, 0x800, TRACE_SPACE_TILE);
	mtrace_writer_phase(w, "mid");
	mtrace_writer_set_phase(w, 1);
	for (uint64_t a = 0x1800; a < 0x2800; a += 40)
		mtrace_writer_access(w, TRACE_EV_STORE, a, 16, 2);
	mtrace_writer_set_phase(w, 0);
	mtrace_writer_access(w, TRACE_EV_LOAD, 0x1000, 64, 1);
	mtrace_writer_phase(w, "tail");
	assert_int_equal(mtrace_writer_close(w, err, sizeof(err)), 0);
}

/* The phases a reader of path knows at its end. */
static unsigned
phases_at_end(const char *path)
{
	char err[512];
	struct trace_reader *r = trace_reader_open(path, TRACE_FORMAT_MEMSIM, err, sizeof(err));
	unsigned n;

	assert_non_null(r);
	while (trace_reader_read(r, got, 1000) > 0)
		;
	n = trace_reader_phase_count(r);
	trace_reader_close(r);
	return n;
}

/* replay_file_record() of memsim traces with arrays (a tile, a scratch one) and phases
 * declared in the header and mid-trace: a replay of the recording gives every counter of the
 * replay that made it, per array and phase too, and its reader knows the same phases. */
static void
test_replay_record(void **state)
{
	static const char *specs[] = {
		"L1=4K:8:64,L2=32K:16:64",
		"L1=1K:2:32:fifo,L2=8K:4:64,tiles=scratch",
		"L1=2K:4:64:plru:wt:nwa,L2=16K:8:64",
		NULL,
	};
	static const char *names[] = { "round.mtr", "local.mtr", "decl.mtr" };
	char path[512], out[512], err[4608];

	(void)state;
	path_in_tmp(out, sizeof(out), "recorded.mtr");
	for (int t = 0; t < 3; t++) {
		path_in_tmp(path, sizeof(path), names[t]);
		if (t == 0)
			write_sample(path, 20000);
		else if (t == 1)
			write_local_sample(path, 20000);
		else
			write_declarations(path);
		for (int i = 0; specs[i]; i++) {
			struct replay_record to = { out, "test-traces --record" };
			struct replay_result a, b;
			struct spec spec;

			assert_int_equal(spec_parse(specs[i], &spec, err, sizeof(err)), 0);
			if (replay_file_record(path, TRACE_FORMAT_AUTO, &spec, true, &to, &a, err,
					       sizeof(err)) ||
			    replay_file(out, TRACE_FORMAT_MEMSIM, &spec, true, &b, err,
					sizeof(err)))
				fail_msg("%s under %s: %s", names[t], specs[i], err);
			if (!same_counters(a.cache, b.cache))
				fail_msg("%s under %s: the recording replays otherwise", names[t],
					 specs[i]);
			assert_true(cache_phase_count(a.cache) > 1);
			assert_int_equal(a.accesses, b.accesses);
			assert_string_equal(b.recorded_command, "test-traces --record");
			replay_result_finish(&a);
			replay_result_finish(&b);
		}
		assert_int_equal(phases_at_end(out), phases_at_end(path));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memsim_round_trip),
		cmocka_unit_test(test_memsim_truncation),
		cmocka_unit_test(test_memsim_access_sizes),
		cmocka_unit_test(test_memsim_phase_cap),
		cmocka_unit_test(test_memsim_fused_replay),
		cmocka_unit_test(test_memsim_repeats),
		cmocka_unit_test(test_memsim_bad_repeats),
		cmocka_unit_test(test_replay_record),
		cmocka_unit_test(test_din),
		cmocka_unit_test(test_din_fast_path),
		cmocka_unit_test(test_lackey),
		cmocka_unit_test(test_lackey_modify_split),
		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_open_errors),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
