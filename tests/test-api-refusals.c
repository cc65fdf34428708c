/*
 * What libmemsim refuses (api/): a load or store whose range wraps past 2^64 counts nothing and
 * makes memsim_trace_finish() fail naming it, on every kind of hierarchy and while recording;
 * memsim_hierarchy_reset() refuses while a trace feeding the hierarchy is not finished (its
 * context holds the model), and works between traces; every public function given NULL
 * returns its error value, and a buffer of 0 bytes is never written.
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit.h"

#define MEMSIM_NO_TR_MACROS
#include "memsim/memsim.h"

#define TMPDIR_NAME "api-refusals"
#include "tests/tmpdir.h"

#define WRAP_AT UINT64_C(0xffffffffffffffc0)

static const void *
at(uint64_t addr)
{
	return (const void *)(uintptr_t)addr;
}

/* Hierarchies of no level first: there a wrapping access reaches no loop over lines. */
static const char *const specs[] = {
	"none", "lab", "L1=1K:2:64", "L1=32K:8:64,L2=1M:16:64", "L1=4K:4:64:wt:nwa", NULL
};

/* A trace on spec with its accesses: finish's message (or "" where it returned 0) in err. */
static struct memsim_hierarchy *
run_accesses(const char *spec, void (*accesses)(struct memsim_trace *t), char *err, size_t errlen)
{
	struct memsim_hierarchy *h = memsim_hierarchy_create(spec, err, errlen);
	struct memsim_trace *t;

	assert_non_null(h);
	t = memsim_trace_create(h, NULL, err, errlen);
	assert_non_null(t);
	accesses(t);
	err[0] = '\0';
	if (memsim_trace_finish(t, err, errlen) == 0)
		err[0] = '\0';
	assert_int_equal(memsim_trace_finish(t, err, errlen), 0); /* reported once */
	memsim_trace_destroy(t);
	return h;
}

static void
wrap_128(struct memsim_trace *t)
{
	memsim_load(t, at(0x1000), 8);
	memsim_load(t, at(WRAP_AT), 128);
	memsim_store(t, at(0x2000), 8);
	memsim_load(t, at(UINT64_MAX - 7), 8); /* ends at 2^64: taken */
	memsim_load(t, at(0x3000), 0);         /* nothing */
}

/* A span of SIZE_MAX bytes ends just before it starts, in the same line. */
static void
wrap_all(struct memsim_trace *t)
{
	memsim_store(t, at(0x2001), SIZE_MAX);
	memsim_load(t, at(0x1000), 8);
}

static void
test_wrapping_access_refused(void **state)
{
	(void)state;
	for (unsigned k = 0; specs[k]; k++) {
		char err[256];
		struct memsim_hierarchy *h = run_accesses(specs[k], wrap_128, err, sizeof(err));
		struct memsim_stats s;

		assert_string_equal(err,
				    "memsim_load of 128 bytes at 0xffffffffffffffc0 wraps past "
				    "address 2^64 (not counted)");
		assert_int_equal(memsim_stats_total(h, &s), 0);
		assert_int_equal(s.cpu.loads, 2);
		assert_int_equal(s.cpu.stores, 1);
		assert_int_equal(s.cpu.load_bytes, 16);
		assert_int_equal(s.cpu.store_bytes, 8);
		memsim_hierarchy_destroy(h);

		h = run_accesses(specs[k], wrap_all, err, sizeof(err));
		assert_string_equal(err,
				    "memsim_store of 18446744073709551615 bytes at 0x2001 wraps "
				    "past address 2^64 (not counted)");
		assert_int_equal(memsim_stats_total(h, &s), 0);
		assert_int_equal(s.cpu.loads + s.cpu.stores, 1);
		memsim_hierarchy_destroy(h);
	}
}

/* An array name declared twice on one trace (a plugin's run() declaring one of its arrays()
 * again): -EEXIST, the first declaration kept, and memsim_trace_finish() names it. Another
 * trace may declare the name afresh. */
static void
test_array_declared_twice(void **state)
{
	struct memsim_hierarchy *h = memsim_hierarchy_create("L1=4K:4:64", NULL, 0);
	struct memsim_trace *t = memsim_trace_create(h, NULL, NULL, 0);
	struct memsim_stats s;
	char err[256];

	(void)state;
	assert_int_equal(memsim_array(t, "A", at(0x10000), 4096, MEMSIM_SPACE_DRAM), 0);
	assert_int_equal(memsim_array(t, "A", at(0x20000), 4096, MEMSIM_SPACE_DRAM), -EEXIST);
	memsim_load(t, at(0x10000), 64);
	assert_int_equal(memsim_trace_finish(t, err, sizeof(err)), -1);
	assert_string_equal(err, "memsim_array: an array named 'A' was declared already (its "
				 "counts would be split in two)");
	assert_int_equal(memsim_stats_total(h, &s), 0);
	assert_int_equal(s.cpu.loads, 1);
	memsim_trace_destroy(t);
	t = memsim_trace_create(h, NULL, NULL, 0);
	assert_int_equal(memsim_array(t, "A", at(0x10000), 4096, MEMSIM_SPACE_DRAM), 0);
	assert_int_equal(memsim_trace_finish(t, err, sizeof(err)), 0);
	memsim_trace_destroy(t);
	memsim_hierarchy_destroy(h);
}

/* A trace that only records refuses the same, and the recording lacks the access. */
static void
test_wrapping_access_refused_recording(void **state)
{
	char err[256], path[600];
	struct memsim_trace *t;

	(void)state;
	snprintf(path, sizeof(path), "%s/wrap.mtr", tmpdir);
	t = memsim_trace_create(NULL, path, err, sizeof(err));
	assert_non_null(t);
	memsim_store(t, at(UINT64_MAX), 2);
	memsim_load(t, at(0x1000), 4);
	assert_int_equal(memsim_trace_finish(t, err, sizeof(err)), -1);
	assert_string_equal(err, "memsim_store of 2 bytes at 0xffffffffffffffff wraps past "
				 "address 2^64 (not counted)");
	memsim_trace_destroy(t);
	remove(path);
}

static void
load_count(struct memsim_hierarchy *h, uint64_t loads, uint64_t dram_read)
{
	struct memsim_stats s;

	assert_int_equal(memsim_stats_total(h, &s), 0);
	assert_int_equal(s.cpu.loads, loads);
	assert_int_equal(s.dram.read_bytes, dram_read);
}

static void
test_reset_with_live_trace(void **state)
{
	static _Alignas(64) char a[1 << 16];
	char err[256];
	struct memsim_hierarchy *h = memsim_hierarchy_create("L1=1K:2:64", err, sizeof(err));
	struct memsim_trace *t = memsim_trace_create(h, NULL, err, sizeof(err)), *u;

	(void)state;
	memsim_load(t, a, 64);
	/* Refused while t feeds h: t goes on counting into the same model. */
	errno = 0;
	assert_int_equal(memsim_hierarchy_reset(h), -1);
	assert_int_equal(errno, EBUSY);
	memsim_load(t, a + 4096, 64);
	assert_int_equal(memsim_trace_finish(t, err, sizeof(err)), 0);
	load_count(h, 2, 128);

	/* Finished, t holds nothing: reset empties h, and t (destroyed later) stays inert. */
	assert_int_equal(memsim_hierarchy_reset(h), 0);
	load_count(h, 0, 0);
	memsim_load(t, a, 64);
	assert_int_equal(memsim_array(t, "a", a, sizeof(a), MEMSIM_SPACE_DRAM), -EINVAL);
	u = memsim_trace_create(h, NULL, err, sizeof(err));
	assert_non_null(u);
	memsim_load(u, a, 64);
	memsim_trace_destroy(t);
	assert_int_equal(memsim_trace_finish(u, err, sizeof(err)), 0);
	load_count(h, 1, 64);

	/* A trace destroyed without its finish no longer holds the model either. */
	t = memsim_trace_create(h, NULL, err, sizeof(err));
	assert_int_equal(memsim_hierarchy_reset(h), -1);
	memsim_trace_destroy(t);
	memsim_trace_destroy(u);
	assert_int_equal(memsim_hierarchy_reset(h), 0);
	load_count(h, 0, 0);
	memsim_hierarchy_destroy(h);
}

/* Every public function with each pointer NULL in turn: its error value, no crash. */
static void
test_null_everywhere(void **state)
{
	char err[256] = "x", buf[64] = "x";
	struct memsim_hierarchy *h = memsim_hierarchy_create("lab", err, sizeof(err));
	struct memsim_trace *t = memsim_trace_create(h, NULL, err, sizeof(err));
	struct memsim_stats s;
	uint64_t addr = 0x1000;

	(void)state;
	assert_null(memsim_hierarchy_create(NULL, err, sizeof(err)));
	assert_string_equal(err, "no cache spec given");
	assert_null(memsim_hierarchy_create(NULL, NULL, 0));
	assert_null(memsim_hierarchy_create("bogus", NULL, sizeof(err)));
	memsim_hierarchy_destroy(NULL);
	assert_null(memsim_hierarchy_spec(NULL, buf, sizeof(buf)));
	assert_null(memsim_hierarchy_spec(h, NULL, sizeof(buf)));
	assert_int_equal(memsim_hierarchy_levels(NULL), 0);
	assert_int_equal(memsim_hierarchy_reset(NULL), -1);
	assert_int_equal(memsim_stats_total(NULL, &s), -1);
	assert_int_equal(memsim_stats_total(h, NULL), -1);
	assert_int_equal(memsim_stats_arrays(NULL), 0);
	assert_null(memsim_stats_array_name(NULL, 0));
	assert_int_equal(memsim_stats_phases(NULL), 0);
	assert_null(memsim_stats_phase_name(NULL, 0));
	assert_int_equal(memsim_stats_array(NULL, 0, &s), -1);
	assert_int_equal(memsim_stats_array(h, 0, NULL), -1);
	assert_int_equal(memsim_stats_phase(NULL, 0, &s), -1);
	assert_int_equal(memsim_stats_phase(h, 0, NULL), -1);
	assert_null(memsim_report_json(NULL));
	memsim_free(NULL);

	assert_null(memsim_trace_create(NULL, NULL, err, sizeof(err)));
	assert_null(memsim_trace_create(NULL, NULL, NULL, 64));
	assert_int_equal(memsim_trace_finish(NULL, err, sizeof(err)), -1);
	assert_string_equal(err, "no trace (NULL)");
	assert_int_equal(memsim_trace_finish(NULL, NULL, 64), -1);
	memsim_trace_destroy(NULL);
	assert_int_equal(memsim_array(NULL, "a", buf, 64, MEMSIM_SPACE_DRAM), -EINVAL);
	assert_int_equal(memsim_array(t, NULL, buf, 64, MEMSIM_SPACE_DRAM), -EINVAL);
	assert_int_equal(memsim_phase(NULL, "p"), -EINVAL);
	assert_int_equal(memsim_phase(t, NULL), -EINVAL);
	memsim_load(NULL, buf, 8);
	memsim_store(NULL, buf, 8);
	assert_int_equal(memsim_access_batch(NULL, 1, &addr, NULL, NULL, 8, 0), -1);

	/* None of it reached h, and t and h still work. */
	memsim_load(t, at(addr), 8);
	assert_int_equal(memsim_trace_finish(t, NULL, 0), 0);
	assert_int_equal(memsim_stats_total(h, &s), 0);
	assert_int_equal(s.cpu.loads, 1);
	assert_int_equal(memsim_stats_arrays(h), 1);
	memsim_trace_destroy(t);
	memsim_hierarchy_destroy(h);
}

/* A buffer of 0 bytes is never written; one byte gets the empty string. */
static void
test_spec_small_buffers(void **state)
{
	char err[8] = "", buf[4] = "abc";
	struct memsim_hierarchy *h = memsim_hierarchy_create("lab", err, sizeof(err));

	(void)state;
	assert_null(memsim_hierarchy_spec(h, buf, 0));
	assert_string_equal(buf, "abc");
	assert_ptr_equal(memsim_hierarchy_spec(h, buf, 1), buf);
	assert_string_equal(buf, "");
	assert_ptr_equal(memsim_hierarchy_spec(h, buf, sizeof(buf)), buf);
	assert_int_equal(strlen(buf), 3);
	/* err of 0 bytes: the message goes nowhere */
	strcpy(err, "abc");
	assert_null(memsim_hierarchy_create("bogus", err, 0));
	assert_null(memsim_trace_create(NULL, NULL, err, 0));
	assert_string_equal(err, "abc");
	memsim_hierarchy_destroy(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wrapping_access_refused),
		cmocka_unit_test(test_wrapping_access_refused_recording),
		cmocka_unit_test(test_array_declared_twice),
		cmocka_unit_test(test_reset_with_live_trace),
		cmocka_unit_test(test_null_everywhere),
		cmocka_unit_test(test_spec_small_buffers),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
