/*
 * Dinero IV's binary trace format (traces/dinbin.c), from hand-written files: each record
 * decodes as Dinero IV's tracein_binary() reads it (size as given, no rounding, padding
 * ignored, type 3 a read); the same accesses written as din text (4-byte aligned) and as
 * lackey text (any size) replay to the same counters under several hierarchies, flushed and
 * not; and a partial last record, a size of 0 or a type past 3 are errors naming the file,
 * the record and its byte offset. The format is never sniffed.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/spec.h"
#include "tests/counters.h"
#include "tests/unit.h"
#include "traces/reader.h"
#include "traces/replay.h"

#define TMPDIR_NAME "dinbin"
#include "tests/tmpdir.h"

struct rec {
	uint32_t addr;
	uint16_t size;
	uint8_t type, pad;
};

static void
path_in_tmp(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

static void
put_record(FILE *f, const struct rec *r)
{
	uint8_t b[8] = { (uint8_t)r->addr,
			 (uint8_t)(r->addr >> 8),
			 (uint8_t)(r->addr >> 16),
			 (uint8_t)(r->addr >> 24),
			 (uint8_t)r->size,
			 (uint8_t)(r->size >> 8),
			 r->type,
			 r->pad };

	assert_int_equal(fwrite(b, 1, 8, f), 8);
}

/* Writes n records, then `tail` stray bytes (a partial record). */
static void
write_dinbin(const char *path, const struct rec *recs, size_t n, size_t tail)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		put_record(f, &recs[i]);
	for (size_t i = 0; i < tail; i++)
		fputc(0x11, f);
	fclose(f);
}

/* Reads every event of path as dinbin into out (at most max); -1 with err on failure. */
static long
read_all(const char *path, struct cache_ref *out, size_t max, char *err, size_t errlen)
{
	struct trace_reader *r = trace_reader_open(path, TRACE_FORMAT_DINBIN, err, errlen);
	size_t n = 0;
	long got;

	if (!r)
		return -1;
	/* Odd batches: a batch's end falls anywhere in the buffer. */
	while (n < max && (got = trace_reader_read(r, out + n, max - n < 3 ? max - n : 3)) > 0)
		n += (size_t)got;
	if (n < max && got < 0) {
		snprintf(err, errlen, "%s", trace_reader_error(r));
		trace_reader_close(r);
		return -1;
	}
	trace_reader_close(r);
	return (long)n;
}

static void
test_records(void **state)
{
	static const struct rec recs[] = {
		{ 0x1000, 4, 0, 0 },          /* read */
		{ 0x101f, 8, 1, 0xaa },       /* write, unaligned, padding ignored */
		{ 0x7fe, 2, 2, 0 },           /* instruction fetch */
		{ 0xffffffff, 0xffff, 3, 0 }, /* misc: a read; the largest address and size */
		{ 0x80000000, 1, 0, 0xff },
	};
	struct cache_ref got[8];
	char path[512], err[512];
	enum trace_format f;

	(void)state;
	path_in_tmp(path, sizeof(path), "a.dinbin");
	write_dinbin(path, recs, 5, 0);
	assert_int_equal(read_all(path, got, 8, err, sizeof(err)), 5);
	assert_true(got[0].kind == TRACE_EV_LOAD && got[0].addr == 0x1000 && got[0].size == 4);
	assert_true(got[1].kind == TRACE_EV_STORE && got[1].addr == 0x101f && got[1].size == 8);
	assert_true(got[2].kind == TRACE_EV_IFETCH && got[2].addr == 0x7fe && got[2].size == 2);
	assert_true(got[3].kind == TRACE_EV_LOAD && got[3].addr == 0xffffffff &&
		    got[3].size == 0xffff);
	assert_true(got[4].kind == TRACE_EV_LOAD && got[4].addr == 0x80000000 && got[4].size == 1);
	for (int i = 0; i < 5; i++)
		assert_int_equal(got[i].count, 1);
	/* An empty file is an empty trace, as Dinero IV reads it. */
	write_dinbin(path, recs, 0, 0);
	assert_int_equal(read_all(path, got, 8, err, sizeof(err)), 0);
	assert_true(trace_format_parse("dinbin", &f) && f == TRACE_FORMAT_DINBIN);
	assert_string_equal(trace_format_name(TRACE_FORMAT_DINBIN), "dinbin");
}

static void
test_errors(void **state)
{
	static const struct {
		struct rec bad; /* the third record */
		size_t tail;    /* stray bytes after three records, or 0 */
		const char *msg;
	} cases[] = {
		{ { 0x40, 4, 4, 0 }, 0, ": record 3 (byte 16): access type 4 is not supported" },
		{ { 0x40, 4, 5, 0 }, 0, ": record 3 (byte 16): access type 5 is not supported" },
		{ { 0x40, 4, 200, 0 },
		  0,
		  ": record 3 (byte 16): access type 200 is not supported" },
		{ { 0x40, 0, 0, 0 }, 0, ": record 3 (byte 16): size 0" },
		{ { 0x40, 4, 1, 0 }, 1, ": truncated record 4 at byte 24: 1 of 8 bytes" },
		{ { 0x40, 4, 1, 0 }, 7, ": truncated record 4 at byte 24: 7 of 8 bytes" },
		{ .msg = NULL },
	};
	struct cache_ref got[8];
	char path[512], err[512];

	(void)state;
	path_in_tmp(path, sizeof(path), "bad.dinbin");
	for (int i = 0; cases[i].msg; i++) {
		struct rec recs[3] = { { 0x10, 4, 0, 0 }, { 0x20, 4, 1, 0 }, cases[i].bad };

		write_dinbin(path, recs, 3, cases[i].tail);
		assert_int_equal(read_all(path, got, 8, err, sizeof(err)), -1);
		if (!strstr(err, cases[i].msg) || strncmp(err, path, strlen(path)))
			fail_msg("case %d: '%s' lacks '%s'", i, err, cases[i].msg);
	}
	/* No magic: never sniffed, and the message says how to ask for it. */
	write_dinbin(path, (const struct rec[]){ { 0x1000, 4, 0, 0 } }, 1, 0);
	assert_null(trace_reader_open(path, TRACE_FORMAT_AUTO, err, sizeof(err)));
	assert_non_null(strstr(err, "cannot tell the trace format"));
	assert_non_null(strstr(err, "dinbin for Dinero IV's binary format"));
}

static uint64_t
lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 11;
}

#define NREC 20000

/* n accesses over a few KiB around four streams; sizes 4 at multiples of 4 when aligned, else
 * 1 to 80 bytes anywhere (some straddle lines). Types 0-3. */
static void
make_records(struct rec *recs, size_t n, bool aligned)
{
	uint64_t s = aligned ? 1 : 2;

	for (size_t i = 0; i < n; i++) {
		uint32_t base = 0x10000u * (uint32_t)(lcg(&s) % 4);
		uint32_t off = (uint32_t)(lcg(&s) % 12288);

		recs[i].type = (uint8_t)(lcg(&s) % 4);
		recs[i].pad = (uint8_t)lcg(&s);
		recs[i].addr = aligned ? (base + off) & ~3u : base + off;
		recs[i].size = aligned ? 4 : (uint16_t)(1 + lcg(&s) % 80);
	}
}

static void
write_text(const char *path, const struct rec *recs, size_t n, bool lackey)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	for (size_t i = 0; i < n; i++) {
		const struct rec *r = &recs[i];

		if (!lackey)
			fprintf(f, "%u %x\n", r->type, r->addr);
		else if (r->type == 2)
			fprintf(f, "I  %08x,%u\n", r->addr, r->size);
		else
			fprintf(f, " %c %08x,%u\n", r->type == 1 ? 'S' : 'L', r->addr, r->size);
	}
	fclose(f);
}

static void
expect_same_replay(const char *text, enum trace_format text_format, const char *bin)
{
	static const char *const specs[] = {
		"L1=1K:2:32,L2=4K:4:64",
		"I1=512:2:32,L1=1K:4:32:fifo,L2=8K:8:64:incl",
		"L1=2K:4:64:plru:wt:nwa,L2=8K:4:64",
		"L1=1K:2:64:wv,L2=8K:4:64:excl",
		"L1=1K:1:16,L2=4K:2:64:random,L3=16K:8:64",
		NULL,
	};
	char err[512];

	for (int i = 0; specs[i]; i++)
		for (int flush = 0; flush < 2; flush++) {
			struct replay_result a, b;
			struct spec spec;

			assert_int_equal(spec_parse(specs[i], &spec, err, sizeof(err)), 0);
			if (replay_file(text, text_format, &spec, flush, &a, err, sizeof(err)) ||
			    replay_file(bin, TRACE_FORMAT_DINBIN, &spec, flush, &b, err,
					sizeof(err)))
				fail_msg("%s: %s", specs[i], err);
			if (!same_counters(a.cache, b.cache))
				fail_msg("%s%s: %s and %s differ", specs[i],
					 flush ? "" : " (no flush)", text, bin);
			assert_int_equal(a.accesses, NREC);
			assert_int_equal(b.records, NREC);
			replay_result_finish(&a);
			replay_result_finish(&b);
		}
}

static void
test_same_as_text(void **state)
{
	struct rec *recs = calloc(NREC, sizeof(*recs));
	char din[512], lackey[512], bin[512];

	(void)state;
	assert_non_null(recs);
	path_in_tmp(din, sizeof(din), "t.din");
	path_in_tmp(lackey, sizeof(lackey), "t.lackey");
	path_in_tmp(bin, sizeof(bin), "t.dinbin");
	make_records(recs, NREC, true);
	write_text(din, recs, NREC, false);
	write_dinbin(bin, recs, NREC, 0);
	expect_same_replay(din, TRACE_FORMAT_DIN, bin);
	make_records(recs, NREC, false);
	write_text(lackey, recs, NREC, true);
	write_dinbin(bin, recs, NREC, 0);
	expect_same_replay(lackey, TRACE_FORMAT_LACKEY, bin);
	free(recs);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_same_as_text),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
