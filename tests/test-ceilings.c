/*
 * The ceilings module: array sizes against the LLC and the memory available (with the notes
 * that say what was shrunk), the JSON document read back, bad documents named by key, and
 * both measurements run small (positive numbers; no timing is asserted).
 */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "measure/ceilings.h"
#include "tests/unit.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

struct size_case {
	uint64_t llc, mem;
	bool quick;
	uint64_t bytes;
	const char *note; /* substring of the note; "" for an empty note */
};

static void
test_array_bytes(void **state)
{
	static const struct size_case cases[] = {
		/* this VM: 256 MiB L3 in the host preset, 23 GiB available */
		{ 256 * MiB, 23 * GiB, false, 1088 * MiB, "" },
		{ 6 * MiB, 16 * GiB, false, 51 * MiB / 2, "" },
		/* three arrays at most half the memory */
		{ 256 * MiB, 3 * GiB, false, 512 * MiB,
		  "memory is short: MemAvailable is 3.0 GiB" },
		/* quick: 256 MiB for the three */
		{ 256 * MiB, 23 * GiB, true, (256 * MiB / 3) & ~UINT64_C(4095),
		  "not a DRAM bandwidth" },
		{ 8 * MiB, 23 * GiB, true, 32 * MiB, "quick: arrays of 32.0 MiB (4.00x" },
		{ 0, 23 * GiB, false, 4096, "" },
		{ 0, 0, false, 0, NULL },
	};
	char note[512];

	(void)state;
	for (const struct size_case *c = cases; c->note; c++) {
		uint64_t b = ceilings_array_bytes(c->llc, c->mem, c->quick, note, sizeof(note));

		if (b != c->bytes)
			fail_msg("llc %llu mem %llu quick %d: %llu bytes, expected %llu",
				 (unsigned long long)c->llc, (unsigned long long)c->mem, c->quick,
				 (unsigned long long)b, (unsigned long long)c->bytes);
		if (c->note[0] ? !strstr(note, c->note) : note[0] != '\0')
			fail_msg("llc %llu quick %d: note '%s', expected '%s'",
				 (unsigned long long)c->llc, c->quick, note, c->note);
		assert_int_equal(b % 4096, 0);
		assert_true(b * 3 <= c->mem / 2 || b == 4096);
	}
	/* A NULL note is allowed. */
	assert_int_equal(ceilings_array_bytes(256 * MiB, 23 * GiB, false, NULL, 0), 1088 * MiB);
}

static struct ceilings
sample(void)
{
	struct ceilings c = { .cores = 2,
			      .quick = true,
			      .array_bytes = 89477120,
			      .bw_repetitions = 3,
			      .bw_threads = 2,
			      .one_core_bytes_per_s = 1.25e10,
			      .all_cores_bytes_per_s = 2.5e10,
			      .flops_threads = 2,
			      .one_core_flops_per_s = 9.5e10,
			      .all_cores_flops_per_s = 1.9e11,
			      .bw_one_core_spread = 0.01,
			      .bw_all_cores_spread = 0.02,
			      .flops_one_core_spread = 0.03,
			      .flops_all_cores_spread = 0.04,
			      .checked = true,
			      .consistent = true,
			      .rounds = 1 };

	snprintf(c.memsim_version, sizeof(c.memsim_version), "0.1.0");
	snprintf(c.date, sizeof(c.date), "2026-11-22T12:00:00Z");
	snprintf(c.cpu, sizeof(c.cpu), "Intel(R) Xeon(R) Processor");
	snprintf(c.bw_method, sizeof(c.bw_method), "triad");
	snprintf(c.flops_method, sizeof(c.flops_method), "fma");
	snprintf(c.isa, sizeof(c.isa), "avx2+fma");
	return c;
}

static void
test_json_round_trip(void **state)
{
	struct ceilings c = sample(), back;
	cJSON *o = ceilings_json(&c);
	char err[256];

	(void)state;
	assert_int_equal(ceilings_from_json(o, &back, err, sizeof(err)), 0);
	assert_string_equal(back.cpu, c.cpu);
	assert_string_equal(back.date, c.date);
	assert_string_equal(back.isa, c.isa);
	assert_string_equal(back.bw_method, "triad");
	assert_int_equal(back.cores, 2);
	assert_true(back.quick);
	assert_int_equal(back.array_bytes, c.array_bytes);
	assert_true(back.all_cores_bytes_per_s == c.all_cores_bytes_per_s);
	assert_true(back.one_core_flops_per_s == c.one_core_flops_per_s);
	assert_int_equal(back.flops_threads, 2);
	assert_true(back.bw_all_cores_spread == 0.02 && back.flops_one_core_spread == 0.03);
	assert_true(back.checked && back.consistent);
	assert_int_equal(back.rounds, 1);
	assert_string_equal(back.inconsistency, "");
	/* Exactly the documented keys. */
	{
		static const char *const top[] = { "memsim_version", "date",        "cpu",
						   "cores",          "quick",       "bandwidth",
						   "peak_flops",     "consistency", NULL };
		static const char *const bw[] = { "method",
						  "array_bytes",
						  "repetitions",
						  "one_core_bytes_per_s",
						  "all_cores_bytes_per_s",
						  "threads",
						  "one_core_spread",
						  "all_cores_spread",
						  NULL };
		static const char *const fl[] = { "method",
						  "isa",
						  "one_core_flops_per_s",
						  "all_cores_flops_per_s",
						  "threads",
						  "one_core_spread",
						  "all_cores_spread",
						  NULL };
		static const char *const ck[] = { "consistent", "rounds",     "why",
						  "slower_max", "spread_max", NULL };
		int n = 0;

		for (const char *const *k = top; *k; k++, n++)
			assert_non_null(cJSON_GetObjectItemCaseSensitive(o, *k));
		assert_int_equal(cJSON_GetArraySize(o), n);
		n = 0;
		for (const char *const *k = bw; *k; k++, n++)
			assert_non_null(cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItem(o, "bandwidth"), *k));
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "bandwidth")), n);
		n = 0;
		for (const char *const *k = fl; *k; k++, n++)
			assert_non_null(cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItem(o, "peak_flops"), *k));
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "peak_flops")), n);
		n = 0;
		for (const char *const *key = ck; *key; key++, n++)
			assert_non_null(cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItem(o, "consistency"), *key));
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "consistency")), n);
	}
	cJSON_Delete(o);
	/* An older memsim's document: no spreads, no consistency; read as unchecked. */
	c.checked = false;
	c.bw_one_core_spread = c.bw_all_cores_spread = -1;
	c.flops_one_core_spread = c.flops_all_cores_spread = -1;
	o = ceilings_json(&c);
	assert_null(cJSON_GetObjectItem(o, "consistency"));
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "bandwidth"), "one_core_spread"));
	assert_int_equal(ceilings_from_json(o, &back, err, sizeof(err)), 0);
	assert_false(back.checked);
	assert_true(back.bw_one_core_spread == -1 && back.flops_all_cores_spread == -1);
	cJSON_Delete(o);
}

static void
test_json_damaged(void **state)
{
	static const struct {
		const char *remove, *from; /* key removed from object `from` (NULL: top) */
		const char *message;
	} cases[] = {
		{ "cpu", NULL, "'cpu' is missing" },
		{ "quick", NULL, "'quick' is missing" },
		{ "array_bytes", "bandwidth", "'bandwidth.array_bytes' is missing" },
		{ "isa", "peak_flops", "'peak_flops.isa' is missing" },
		{ "peak_flops", NULL, "'peak_flops' is missing" },
		{ "consistent", "consistency", "'consistency.consistent' is missing" },
		{ "rounds", "consistency", "'consistency.rounds' is missing" },
		{ "why", "consistency", "'consistency.why' is missing" },
		{ NULL, NULL, NULL },
	};
	struct ceilings c = sample(), back;
	char err[256];

	(void)state;
	for (int i = 0; cases[i].remove; i++) {
		cJSON *o = ceilings_json(&c);
		cJSON *from = cases[i].from ? cJSON_GetObjectItem(o, cases[i].from) : o;

		cJSON_DeleteItemFromObject(from, cases[i].remove);
		assert_int_equal(ceilings_from_json(o, &back, err, sizeof(err)), -EINVAL);
		if (!strstr(err, cases[i].message))
			fail_msg("message '%s' lacks '%s'", err, cases[i].message);
		cJSON_Delete(o);
	}
	/* A string where a number goes. */
	{
		cJSON *o = ceilings_json(&c);

		cJSON_ReplaceItemInObject(o, "cores", cJSON_CreateString("two"));
		assert_int_equal(ceilings_from_json(o, &back, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "'cores'"));
		cJSON_Delete(o);
	}
	/* A spread that is there must be a number of at least 0. */
	{
		cJSON *o = ceilings_json(&c);

		cJSON_ReplaceItemInObject(cJSON_GetObjectItem(o, "peak_flops"), "all_cores_spread",
					  cJSON_CreateNumber(-0.5));
		assert_int_equal(ceilings_from_json(o, &back, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "'peak_flops.all_cores_spread'"));
		cJSON_Delete(o);
	}
}

/* The judgement on fed numbers: all cores slower than one by more than 5% (bandwidth or
 * FLOP/s), a series spread over 25%, each said; what holds says nothing. */
static void
test_consistent(void **state)
{
	static const struct {
		double bw1, bwn, fl1, fln, spread[4];
		const char *why; /* substrings, '|' between; "" when consistent */
	} cases[] = {
		/* a quiet 2-core machine */
		{ 12.5, 25, 95, 190, { 0.01, 0.02, 0.01, 0.03 }, "" },
		/* one core saturates memory: all cores a little slower is noise, not a fault */
		{ 29, 27.6, 95, 190, { 0, 0, 0, 0 }, "" },
		/* the audit's busy machine: 2 threads 22 GB/s against 29 on 1 */
		{ 29,
		  22,
		  95,
		  190,
		  { 0, 0, 0, 0 },
		  "2 threads stream slower than 1: 22.00 against 29.00 GB/s" },
		{ 12.5,
		  25,
		  95,
		  60,
		  { 0, 0, 0, 0 },
		  "2 threads compute slower than 1: 60.00 against 95.00 GFLOP/s" },
		{ 12.5,
		  25,
		  95,
		  190,
		  { 0, 0.4, 0, 0 },
		  "the triad on all cores spread 40% between repetitions (over 25%)" },
		{ 12.5,
		  25,
		  95,
		  190,
		  { 0.25, 0, 0, 0.26 },
		  "the FLOP loop on all cores spread 26%" },
		{ 29,
		  22,
		  95,
		  60,
		  { 0.3, 0, 0, 0 },
		  "stream slower|; 2 threads compute slower|; the triad on one core spread 30%" },
		/* unknown spreads (an older document) judge nothing */
		{ 12.5, 25, 95, 190, { -1, -1, -1, -1 }, "" },
		{ 0, 0, 0, 0, { 0, 0, 0, 0 }, NULL },
	};
	char why[512];

	(void)state;
	for (int i = 0; cases[i].why; i++) {
		struct ceilings c = sample();
		char want[512], *part, *save = NULL;
		bool ok;

		c.one_core_bytes_per_s = cases[i].bw1 * 1e9;
		c.all_cores_bytes_per_s = cases[i].bwn * 1e9;
		c.one_core_flops_per_s = cases[i].fl1 * 1e9;
		c.all_cores_flops_per_s = cases[i].fln * 1e9;
		c.bw_one_core_spread = cases[i].spread[0];
		c.bw_all_cores_spread = cases[i].spread[1];
		c.flops_one_core_spread = cases[i].spread[2];
		c.flops_all_cores_spread = cases[i].spread[3];
		ok = ceilings_consistent(&c, why, sizeof(why));
		if (ok != !cases[i].why[0] || (ok && why[0]))
			fail_msg("case %d: consistent %d, why '%s'", i, ok, why);
		snprintf(want, sizeof(want), "%s", cases[i].why);
		for (part = strtok_r(want, "|", &save); part; part = strtok_r(NULL, "|", &save))
			if (!strstr(why, part))
				fail_msg("case %d: '%s' lacks '%s'", i, why, part);
	}
	/* why may be NULL */
	{
		struct ceilings c = sample();

		c.all_cores_bytes_per_s = c.one_core_bytes_per_s / 2;
		assert_false(ceilings_consistent(&c, NULL, 0));
	}
}

/* The test knob's text: rounds of four or five numbers; the last stands for later rounds;
 * anything else refused with one line naming the round. */
static void
test_injected(void **state)
{
	static const struct {
		const char *text;
		unsigned round;
		double bw1, fln, spread; /* GB/s, GFLOP/s; bw1 0: refused */
		const char *message;
	} cases[] = {
		{ "29,22,95,190", 0, 29, 190, 0, NULL },
		{ "29,22,95,190,0.4", 0, 29, 190, 0.4, NULL },
		{ "29,22,95,190;12.5,25,95,180,0.01", 1, 12.5, 180, 0.01, NULL },
		{ "29,22,95,190;12.5,25,95,180", 5, 12.5, 180, 0, NULL },
		{ "29,22,95,190;12.5,25,95,180", 0, 29, 190, 0, NULL },
		{ "", 0, 0, 0, 0, "round 1 is not" },
		{ "29,22,95", 0, 0, 0, 0, "round 1 is not" },
		{ "29,22,95,190,0.1,7", 0, 0, 0, 0, "round 1" },
		{ "29,22,0,190", 0, 0, 0, 0, "round 1" },
		{ "29,22,95,190,-0.1", 0, 0, 0, 0, "round 1" },
		{ "29,22,95,190;", 0, 0, 0, 0, "round 2 is not" },
		{ "29,22,95,190;29,x,95,190", 0, 0, 0, 0, "round 2 is not" },
		{ "29,,95,190", 0, 0, 0, 0, "round 1" },
		{ "29,22,95,190 ", 0, 0, 0, 0, "round 1" },
		{ "nan,22,95,190", 0, 0, 0, 0, "round 1" },
		{ NULL, 0, 0, 0, 0, NULL },
	};
	char err[512];

	(void)state;
	for (int i = 0; cases[i].text; i++) {
		struct ceilings c = sample();
		int rc = ceilings_injected(cases[i].text, cases[i].round, &c, err, sizeof(err));

		if (cases[i].message) {
			if (rc != -EINVAL || !strstr(err, cases[i].message) ||
			    !strstr(err, "MEMSIM_TEST_CEILINGS") || strchr(err, '\n'))
				fail_msg("'%s': rc %d, '%s'", cases[i].text, rc, err);
			continue;
		}
		if (rc)
			fail_msg("'%s': %s", cases[i].text, err);
		assert_true(c.one_core_bytes_per_s == cases[i].bw1 * 1e9);
		assert_true(c.all_cores_flops_per_s == cases[i].fln * 1e9);
		assert_true(c.bw_one_core_spread == cases[i].spread);
		assert_true(c.flops_all_cores_spread == cases[i].spread);
	}
}

static void
test_measure_small(void **state)
{
	double one = 0, all = 0, spread[2] = { -1, -1 };
	char err[256];
	const char *isa = ceilings_isa();

	(void)state;
	assert_int_equal(ceilings_bandwidth(1 * MiB, 2, 2, &one, &all, spread, err, sizeof(err)),
			 0);
	assert_true(one > 0 && isfinite(one));
	assert_true(all > 0 && isfinite(all));
	assert_true(spread[0] >= 0 && spread[1] >= 0);
	/* an array that is not a whole number of pages or of thread slices */
	assert_int_equal(ceilings_bandwidth(12345 * 8, 1, 3, &one, &all, NULL, err, sizeof(err)),
			 0);
	assert_int_equal(ceilings_bandwidth(1 * MiB, 0, 2, &one, &all, NULL, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(ceilings_peak_flops(0.001, 2, 2, &one, &all, spread, err, sizeof(err)), 0);
	assert_true(one > 0 && isfinite(one));
	assert_true(all > 0 && isfinite(all));
	assert_true(spread[0] >= 0 && spread[1] >= 0);
	assert_int_equal(ceilings_peak_flops(0, 2, 2, &one, &all, NULL, err, sizeof(err)), -EINVAL);
	assert_true(strcmp(isa, "avx2+fma") == 0 || strcmp(isa, "sse2") == 0 ||
		    strcmp(isa, "c") == 0);
	assert_true(ceilings_cores() >= 1);
	assert_true(ceilings_mem_available() > 0);
	{
		char cpu[256];

		assert_true(strlen(ceilings_cpu_model(cpu, sizeof(cpu))) > 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_array_bytes),  cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_json_damaged), cmocka_unit_test(test_consistent),
		cmocka_unit_test(test_injected),     cmocka_unit_test(test_measure_small),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
