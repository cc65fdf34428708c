/*
 * `memsim run --record FILE` through the real binary (issue 19 item 4).
 *
 * Every built-in kernel, computing and trace-only, recorded under cache A (tiles in scratch, a
 * 4-way LRU L1) and replayed:
 *  - the recorded run prints the counters of the same run without --record, field for field
 *    (the recording is a pass of its own, with no model);
 *  - replayed under A, under B (tiles in memory, 2-way random, write-validate) and under lab
 *    (no cache, tiles in scratch) it gives `memsim run`'s counters under that cache, every
 *    one: every level, DRAM, the processor's loads and stores, per array, per phase, scratch.
 *    A recording holds the tile arrays' accesses with their space, so tiles that were scratch
 *    under A are memory under B.
 * Then the recording's header (the command, the kernel's arrays and phases), --record - into a
 * pipe, --sample-sets (the recording is whole), and the failures: an empty name, --record -
 * with --json -, a directory, a missing directory, /dev/full, a file size limit (the torn file
 * removed), and a truncated recording refused by replay.
 *
 * `memsim replay IN --record OUT` (issue 45 item 1) converts din, Dinero IV binary, lackey (with
 * straddling and repeated accesses) and memsim traces (a kernel's, with arrays, phases and
 * tiles): under five caches, flushed and not, recording changes nothing in the replay's report,
 * and a replay of OUT reports every counter and the text table as the replay of IN did. A
 * garbled or truncated IN leaves no OUT (the file there before stays as it was). A version-1
 * memsim trace (issue 45 item 2) replays as the run it recorded, and converts to version 2.
 */

#include "config.h"

#include <cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/slurp.h"
#include "tests/unit.h"

#define TMPDIR_NAME "cli-record"
#include "tests/tmpdir.h"

#include "tests/cli-run.h"

#define CACHE_A "L1=4K:4:64,L2=16K:8:64,tiles=scratch"
#define CACHE_B "L1=2K:2:128:random:wb:wv"
#define CONFIG "--N 80 --d 16 --Br 16 --Bc 32"

/* The report fields both `run --json` and `replay --json` write. */
static const char *const shared_fields[] = {
	"cpu", "dram", "levels", "arrays", "phases", "scratch"
};

/* Whether x and y are equal; names the first difference at path. */
static bool
same_json(const char *path, const cJSON *x, const cJSON *y)
{
	char sub[512];

	if (!x || !y || x->type != y->type) {
		print_message("# %s: present or typed differently\n", path);
		return false;
	}
	if (cJSON_IsObject(x) || cJSON_IsArray(x)) {
		const cJSON *a = x->child, *b = y->child;

		if (cJSON_GetArraySize(x) != cJSON_GetArraySize(y)) {
			print_message("# %s: %d against %d members\n", path, cJSON_GetArraySize(x),
				      cJSON_GetArraySize(y));
			return false;
		}
		for (; a && b; a = a->next, b = b->next) {
			snprintf(sub, sizeof(sub), "%s.%s", path, a->string ? a->string : "[]");
			if (a->string && strcmp(a->string, b->string ? b->string : "")) {
				print_message("# %s: against %s\n", sub, b->string);
				return false;
			}
			if (!same_json(sub, a, b))
				return false;
		}
		return true;
	}
	if (!cJSON_Compare(x, y, true)) {
		print_message("# %s differs\n", path);
		return false;
	}
	return true;
}

/* The shared fields of tmpdir's JSON files x and y are equal. */
static void
expect_same_reports(const char *x, const char *y)
{
	cJSON *a = read_json(x), *b = read_json(y);

	assert_non_null(a);
	assert_non_null(b);
	for (size_t i = 0; i < sizeof(shared_fields) / sizeof(shared_fields[0]); i++) {
		const char *f = shared_fields[i];

		if (!same_json(f, cJSON_GetObjectItem(a, f), cJSON_GetObjectItem(b, f)))
			fail_msg("%s and %s differ in %s", x, y, f);
	}
	cJSON_Delete(a);
	cJSON_Delete(b);
}

static void
test_record_replay_kernels(void **state)
{
	/* causal where the kernel has a mask (proj has none, and refuses --causal) */
	static const char *const kernels[] = { "naive --causal", "flash1 --causal",
					       "flash2 --causal", "proj" };
	static const char *const modes[] = { "", "--trace-only" };

	(void)state;
	for (size_t k = 0; k < 4; k++)
		for (size_t m = 0; m < 2; m++) {
			const char *kn = kernels[k], *mode = modes[m];

			print_message("# %s %s\n", kn, mode);
			expect_ok("run --kernel %s " CONFIG " %s --cache " CACHE_A
			   " --record f.mt --json a.json",
			   kn, mode);
			expect_ok("run --kernel %s " CONFIG " %s --cache " CACHE_A " --json l.json", kn,
			   mode);
			expect_same_reports("a.json", "l.json");
			expect_ok("replay f.mt --cache " CACHE_A " --json r.json");
			expect_same_reports("l.json", "r.json");
			/* Tiles scratch when recorded, memory here: as a run under B. */
			expect_ok("run --kernel %s " CONFIG " %s --cache " CACHE_B " --json lb.json", kn,
			   mode);
			expect_ok("replay f.mt --cache " CACHE_B " --json rb.json");
			expect_same_reports("lb.json", "rb.json");
			/* Recorded under B (tiles in memory), replayed with tiles in scratch. */
			expect_ok("run --kernel %s " CONFIG " %s --cache " CACHE_B
			   " --record fb.mt >/dev/null",
			   kn, mode);
			expect_ok("run --kernel %s " CONFIG " %s --cache lab --json ll.json", kn, mode);
			expect_ok("replay fb.mt --cache lab --json rl.json");
			expect_same_reports("ll.json", "rl.json");
		}
	assert_int_equal(sh("rm -f ./*.mt ./*.json"), 0);
}

static void
test_record_header(void **state)
{
	cJSON *r, *tr, *arrays, *phases;
	const char *cmd;

	(void)state;
	expect_ok("run --kernel flash2 --N 64 --d 16 --cache " CACHE_B " --record h.mt >/dev/null");
	expect_ok("replay h.mt --cache " CACHE_B " --json r.json");
	r = read_json("r.json");
	assert_non_null(r);
	tr = cJSON_GetObjectItem(r, "trace");
	cmd = cJSON_GetStringValue(cJSON_GetObjectItem(tr, "recorded_command"));
	assert_non_null(cmd);
	assert_string_equal(cmd, "memsim run --kernel flash2 --N 64 --d 16 --cache " CACHE_B
				 " --record h.mt");
	arrays = cJSON_GetObjectItem(r, "arrays");
	phases = cJSON_GetObjectItem(r, "phases");
	assert_non_null(cJSON_GetObjectItem(arrays, "Q"));
	assert_non_null(cJSON_GetObjectItem(arrays, "O"));
	assert_non_null(cJSON_GetObjectItem(arrays, "Q_tile"));
	assert_true(cJSON_GetArraySize(phases) > 1);
	cJSON_Delete(r);
	assert_int_equal(sh("rm -f h.mt r.json"), 0);
}

static void
test_record_stdout(void **state)
{
	struct result r;

	(void)state;
	/* The trace on stdout, the text report on stderr. */
	r = shell("{ %s run --kernel proj --N 64 --d 16 --cache lab --record - --json a.json "
		  "| %s replay - --cache %s --json p.json >/dev/null; }",
		  MEMSIM_BIN, MEMSIM_BIN, CACHE_B);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "memsim run: proj"));
	result_free(&r);
	expect_ok("run --kernel proj --N 64 --d 16 --cache " CACHE_B " --json l.json");
	expect_same_reports("l.json", "p.json");
	assert_int_equal(sh("rm -f a.json l.json p.json"), 0);
}

static void
test_record_sampled(void **state)
{
	(void)state;
	/* The live run is an estimate; the recording has every access all the same. */
	expect_ok("run --kernel flash1 --N 64 --d 16 --cache " CACHE_B
	   " --sample-sets 2 --record s.mt >/dev/null");
	expect_ok("run --kernel flash1 --N 64 --d 16 --cache " CACHE_B " --json l.json");
	expect_ok("replay s.mt --cache " CACHE_B " --json r.json");
	expect_same_reports("l.json", "r.json");
	assert_int_equal(sh("rm -f s.mt l.json r.json"), 0);
}

static void
test_record_errors(void **state)
{
	const char *run = "run --kernel flash2 --N 256 --d 32 --cache L1=4K:4:64";
	char args[512];
	struct result r;

	(void)state;
	snprintf(args, sizeof(args), "%s --record ''", run);
	expect_error(args, 2, "--record: the file name is empty");
	snprintf(args, sizeof(args), "%s --record - --json -", run);
	expect_error(args, 2, "--record - and --json - both want stdout");
	assert_int_equal(sh("mkdir -p dir"), 0);
	snprintf(args, sizeof(args), "%s --record dir >/dev/null", run);
	expect_error(args, 1, "recording: cannot create dir: Is a directory");
	snprintf(args, sizeof(args), "%s --record nodir/f.mt >/dev/null", run);
	expect_error(args, 1, "recording: cannot create nodir/f.mt");
	snprintf(args, sizeof(args), "%s --record /dev/full >/dev/null", run);
	expect_error(args, 1, "recording: writing /dev/full: No space left on device");
	/* A file size limit (the recording is 25 MB): SIGXFSZ ignored, the torn file removed. */
	r = shell("ulimit -f 64 && %s %s --record big.mt >/dev/null", MEMSIM_BIN, run);
	assert_int_equal(r.rc, 1);
	assert_true(one_line_with(r.err, "recording: writing big.mt: File too large (the "
					 "incomplete recording was removed)"));
	result_free(&r);
	assert_int_equal(sh("test ! -e big.mt"), 0);
	/* A recording cut short some other way: replay refuses it. */
	snprintf(args, sizeof(args), "%s --record whole.mt >/dev/null", run);
	r = memsim("%s", args);
	assert_int_equal(r.rc, 0);
	result_free(&r);
	assert_int_equal(sh("head -c 3000 whole.mt >cut.mt"), 0);
	expect_error("replay cut.mt --cache lab", 1, "cut.mt: truncated after record");
	assert_int_equal(sh("rm -rf dir whole.mt cut.mt"), 0);
}

/* Writes tmpdir/conv.lackey and tmpdir/conv.dinbin: pseudo-random accesses of 1 to 64 bytes,
 * some straddling lines, some repeated back to back (the same straddling access twice,
 * which a count would touch in another order), every kind. */
static void
write_conversion_inputs(void)
{
	char lpath[1200], bpath[1200];
	FILE *l, *b;
	uint64_t s = 7;

	snprintf(lpath, sizeof(lpath), "%s/conv.lackey", tmpdir);
	snprintf(bpath, sizeof(bpath), "%s/conv.dinbin", tmpdir);
	l = fopen(lpath, "w");
	b = fopen(bpath, "wb");
	assert_non_null(l);
	assert_non_null(b);
	for (int i = 0; i < 6000; i++) {
		unsigned addr, size, type, reps;

		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		addr = 0x10000u * (unsigned)((s >> 20) % 3) + (unsigned)((s >> 30) % 8192);
		size = 1 + (unsigned)((s >> 45) % 64);
		type = (unsigned)((s >> 55) % 3);
		reps = (s >> 60) % 4 == 0 ? 2 : 1;
		for (unsigned k = 0; k < reps; k++) {
			uint8_t rec[8] = { (uint8_t)addr,         (uint8_t)(addr >> 8),
					   (uint8_t)(addr >> 16), (uint8_t)(addr >> 24),
					   (uint8_t)size,         0,
					   (uint8_t)type,         0 };

			if (type == 2)
				fprintf(l, "I  %08x,%u\n", addr, size);
			else
				fprintf(l, " %c %08x,%u\n", type ? 'S' : 'L', addr, size);
			assert_int_equal(fwrite(rec, 1, 8, b), 8);
		}
	}
	fclose(l);
	fclose(b);
}

static void
test_replay_record_converts(void **state)
{
	static const char *const inputs[] = {
		TEST_DATA_DIR "/dinero/t4_mixed.din",
		"conv.dinbin --format dinbin",
		"conv.lackey",
		"k.mt",
	};
	static const char *const caches[] = {
		CACHE_A,
		CACHE_B,
		"L1=64:1:64", /* one line: a straddling access repeated evicts itself */
		"I1=512:2:32,L1=1K:4:32:fifo,L2=8K:8:64:incl",
		"lab",
	};
	static const char *const flushes[] = { "", "--no-flush" };

	(void)state;
	write_conversion_inputs();
	expect_ok("run --kernel flash2 --causal " CONFIG " --trace-only --cache " CACHE_A
		  " --record k.mt >/dev/null");
	for (size_t i = 0; i < 4; i++)
		for (size_t c = 0; c < 5; c++)
			for (size_t f = 0; f < 2; f++) {
				const char *in = inputs[i], *cache = caches[c], *fl = flushes[f];

				print_message("# %s under %s %s\n", in, cache, fl);
				expect_ok("replay %s --cache %s %s --json l.json >l.txt", in, cache,
					  fl);
				expect_ok("replay %s --cache %s %s --record out.mt --json a.json "
					  ">a.txt",
					  in, cache, fl);
				expect_ok("replay out.mt --cache %s %s --json r.json >r.txt", cache,
					  fl);
				expect_same_reports("l.json", "a.json");
				expect_same_reports("l.json", "r.json");
				/* The text after its first line (the trace's name, format,
				 * records). */
				assert_int_equal(
					sh("tail -n +2 l.txt >l2 && tail -n +2 a.txt >a2 && "
					   "tail -n +2 r.txt >r2 && cmp -s l2 a2 && "
					   "cmp -s l2 r2"),
					0);
			}
	assert_int_equal(sh("rm -f ./*.mt ./*.json ./*.txt l2 a2 r2"), 0);
}

/* A version-1 recording (tests/data/mtrace/flash2-v1.mt, written by memsim before repeat
 * records) still replays, to the counters of `memsim run` of the kernel it recorded, and so
 * does its conversion to version 2, which is no larger. */
static void
test_replay_version1(void **state)
{
	static const char *const caches[] = { CACHE_A, CACHE_B, "L1=32K:8:64,L2=1M:16:64" };

	(void)state;
	for (size_t c = 0; c < 3; c++) {
		expect_ok("run --kernel flash2 --causal --N 24 --d 8 --Br 8 --Bc 8 --trace-only "
			  "--cache %s --json l.json >/dev/null",
			  caches[c]);
		expect_ok("replay " TEST_DATA_DIR "/mtrace/flash2-v1.mt --cache %s --json v1.json "
			  "--record v2.mt >/dev/null",
			  caches[c]);
		expect_ok("replay v2.mt --cache %s --json v2.json >/dev/null", caches[c]);
		expect_same_reports("l.json", "v1.json");
		expect_same_reports("l.json", "v2.json");
	}
	assert_int_equal(sh("test $(od -A n -t u1 -j 8 -N 1 v2.mt) = 2"), 0);
	assert_int_equal(sh("test $(wc -c <v2.mt) -le $(wc -c <" TEST_DATA_DIR
			    "/mtrace/flash2-v1.mt)"),
			 0);
	assert_int_equal(sh("rm -f ./*.mt ./*.json"), 0);
}

static void
test_replay_record_stdout(void **state)
{
	struct result r;

	(void)state;
	write_file("s.din", "0 100\n1 104\n2 2000\n0 100\n");
	/* The trace on stdout, the text report on stderr. */
	r = shell("{ %s replay s.din --cache " CACHE_B " --record - | %s replay - --cache " CACHE_B
		  " --json p.json >/dev/null; }",
		  MEMSIM_BIN, MEMSIM_BIN);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "trace s.din (din): 4 records, 4 accesses"));
	result_free(&r);
	expect_ok("replay s.din --cache " CACHE_B " --json l.json");
	expect_same_reports("l.json", "p.json");
	/* One thread records, with a note why when more were asked for. */
	r = memsim("replay s.din --cache " CACHE_B " --threads 2 --record t.mt --json t.json");
	assert_int_equal(r.rc, 0);
	assert_true(one_line_with(r.err, "note: --threads 2: 1 thread: --record: one thread "
					 "reads, records and simulates"));
	result_free(&r);
	expect_same_reports("l.json", "t.json");
	/* The recording's header holds the command that made it. */
	r = memsim("replay t.mt --cache lab --json h.json");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	{
		cJSON *h = read_json("h.json");
		const char *cmd = cJSON_GetStringValue(
			cJSON_GetObjectItem(cJSON_GetObjectItem(h, "trace"), "recorded_command"));

		assert_non_null(cmd);
		/* as the report's header gives it: options first (getopt_long's order) */
		assert_string_equal(cmd, "memsim replay --cache " CACHE_B
					 " --threads 2 --record t.mt --json t.json s.din");
		cJSON_Delete(h);
	}
	r = memsim("help replay");
	assert_non_null(strstr(r.out, "--record OUT"));
	result_free(&r);
	assert_int_equal(sh("rm -f s.din ./*.json t.mt"), 0);
}

static void
test_replay_record_errors(void **state)
{
	(void)state;
	write_file("ok.din", "0 100\n1 104\n");
	expect_error("replay ok.din --cache lab --record ''", 2,
		     "--record: the file name is empty");
	expect_error("replay ok.din --cache lab --record - --json -", 2,
		     "--record - and --json - both want stdout");
	expect_error("replay ok.din --cache lab --record nodir/f.mt", 1,
		     "recording: cannot create nodir/f.mt");
	expect_error("replay ok.din --cache lab --record /dev/full >/dev/null", 1,
		     "recording: writing /dev/full: No space left on device");
	/* A garbled or truncated trace: the file at OUT stays as it was, no temporary left. */
	write_file("old.mt", "the file that was there\n");
	write_file("bad.din", "0 100\n1 104\nx 108\n");
	expect_error("replay bad.din --cache lab --record old.mt", 1,
		     "bad.din:3: bad label in 'x 108' (expected 'LABEL ADDRESS') (the "
		     "incomplete recording was removed)");
	assert_int_equal(sh("printf '\\000\\001\\000\\000\\004\\000\\000\\000\\010' >cut.dinbin"),
			 0);
	expect_error("replay cut.dinbin --format dinbin --cache lab --record old.mt", 1,
		     "cut.dinbin: truncated record 2 at byte 8: 1 of 8 bytes (the incomplete "
		     "recording was removed)");
	expect_error("replay cut.dinbin --cache lab", 1,
		     "cut.dinbin: cannot tell the trace format; pass --format din|lackey|memsim, "
		     "or dinbin for Dinero IV's binary format, which has no magic to tell it by");
	assert_int_equal(sh("grep -qx 'the file that was there' old.mt"), 0);
	assert_int_equal(sh("test \"$(ls -a | grep -c old.mt)\" = 1"), 0);
	expect_error("replay bad.din --cache lab --record new.mt", 1, "bad.din:3: bad label");
	assert_int_equal(sh("test ! -e new.mt"), 0);
	assert_int_equal(sh("rm -f ok.din bad.din old.mt cut.dinbin"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_replay_kernels),
		cmocka_unit_test(test_record_header),
		cmocka_unit_test(test_record_stdout),
		cmocka_unit_test(test_record_sampled),
		cmocka_unit_test(test_record_errors),
		cmocka_unit_test(test_replay_record_converts),
		cmocka_unit_test(test_replay_version1),
		cmocka_unit_test(test_replay_record_stdout),
		cmocka_unit_test(test_replay_record_errors),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
