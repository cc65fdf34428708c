/*
 * Readers of Valgrind's output files (measure/vgout.c) on hand-written files whose sums were
 * worked out by hand, and every way a file can be damaged; running a child (measure/spawn.c).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/spawn.h"
#include "measure/vgout.h"
#include "tests/unit.h"

#define TMPDIR_NAME "vgout"
#include "tests/tmpdir.h"

#define CG_GOOD TEST_DATA_DIR "/valgrind/cachegrind.out"
#define CLG_GOOD TEST_DATA_DIR "/valgrind/callgrind.out.1"
#define REGION "Client Request: memsim-kernel"

static bool
kernel_fn(const char *object, const char *fn, void *arg)
{
	(void)object;
	(void)arg;
	return strncmp(fn, "attn_", 5) == 0 && strstr(fn, "_native") != NULL;
}

static uint64_t
count(const struct vg_counts *c, const char *name)
{
	uint64_t v = UINT64_MAX;

	assert_true(vg_counts_get(c, name, &v));
	return v;
}

static void
test_cachegrind_good(void **state)
{
	struct vg_counts c;
	char err[512];

	(void)state;
	assert_int_equal(vg_cachegrind_read(CG_GOOD, kernel_fn, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(c.n, 9);
	assert_int_equal(c.functions, 2); /* attn_naive_native in k.c and in tile.h */
	assert_int_equal(count(&c, "Ir"), 160);
	assert_int_equal(count(&c, "D1mr"), 6);
	assert_int_equal(count(&c, "D1mw"), 2);
	assert_int_equal(count(&c, "DLmr"), 3);
	assert_int_equal(count(&c, "DLmw"), 1);
	/* Without a filter: the summary. */
	assert_int_equal(vg_cachegrind_read(CG_GOOD, NULL, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(count(&c, "D1mr"), 11);
	assert_int_equal(count(&c, "DLmw"), 6);
}

static void
test_callgrind_good(void **state)
{
	struct vg_counts c, tot;
	char err[512];

	(void)state;
	assert_int_equal(
		vg_callgrind_read(CLG_GOOD, REGION, kernel_fn, NULL, &c, &tot, err, sizeof(err)),
		0);
	/* attn_run_native and attn_flash2_native (defined on a cfn= line), without the call's
	 * inclusive cost after calls= and without expf. */
	assert_int_equal(count(&c, "Ir"), 966);
	assert_int_equal(count(&c, "Dr"), 302);
	assert_int_equal(count(&c, "D1mr"), 30);
	assert_int_equal(count(&c, "DLmr"), 5);
	assert_int_equal(count(&c, "DLdmr"), 1);
	assert_int_equal(count(&c, "DLdmw"), 1);
	assert_int_equal(count(&tot, "Ir"), 1006);
	assert_int_equal(count(&tot, "D1mr"), 31);
	assert_int_equal(
		vg_callgrind_read(CLG_GOOD, REGION, NULL, NULL, &c, NULL, err, sizeof(err)), 0);
	assert_int_equal(count(&c, "Ir"), 1006);
	/* Another region's dump is refused. */
	assert_int_equal(vg_callgrind_read(CLG_GOOD, "Program termination", NULL, NULL, &c, NULL,
					   err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "not of 'Program termination'"));
}

/* Writes the good file with line `drop` left out and `add` inserted before line `at` (1-based;
 * 0: none), or cut after `cut` bytes (0: whole), then expects msg from the reader. */
static void
expect_damage(const char *good, bool callgrind, int drop, int at, const char *add, long cut,
	      const char *msg)
{
	char path[700], line[1024], err[1024];
	FILE *in = fopen(good, "r"), *out;
	struct vg_counts c;
	int n = 0, rc;
	long written = 0;

	snprintf(path, sizeof(path), "%s/damaged.out", tmpdir);
	assert_non_null(in);
	out = fopen(path, "w");
	assert_non_null(out);
	while (fgets(line, sizeof(line), in)) {
		n++;
		if (n == at)
			written += fprintf(out, "%s\n", add);
		if (n == drop)
			continue;
		if (cut && written + (long)strlen(line) > cut) {
			fwrite(line, 1, (size_t)(cut - written), out);
			break;
		}
		written += fprintf(out, "%s", line);
	}
	fclose(in);
	fclose(out);
	if (callgrind)
		rc = vg_callgrind_read(path, REGION, kernel_fn, NULL, &c, NULL, err, sizeof(err));
	else
		rc = vg_cachegrind_read(path, kernel_fn, NULL, &c, err, sizeof(err));
	if (rc != -1 || !strstr(err, msg))
		fail_msg("damaged %s (drop %d, add '%s' at %d, cut %ld): rc %d, '%s' lacks '%s'",
			 good, drop, add ? add : "", at, cut, rc, err, msg);
	printf("# %s\n", err);
}

static void
test_cachegrind_damaged(void **state)
{
	(void)state;
	expect_damage(CG_GOOD, false, 15, 0, NULL, 0, "truncated (no 'summary:'");
	expect_damage(CG_GOOD, false, 0, 0, NULL, 380, "truncated");
	expect_damage(CG_GOOD, false, 9, 0, NULL, 0, "the Ir counts add up to 140");
	expect_damage(CG_GOOD, false, 0, 9, "12 1 x 3", 0, "damaged.out:9: 'x 3' is not a count");
	expect_damage(CG_GOOD, false, 0, 9, "12 1 2 3 4 5 6 7 8 9 10", 0,
		      "more counts than the 9 events");
	expect_damage(CG_GOOD, false, 5, 0, NULL, 0, "cost line before 'events:'");
	expect_damage(CG_GOOD, false, 7, 0, NULL, 0, "damaged.out:7: cost line outside a function");
	expect_damage(CG_GOOD, false, 0, 6, "garbage here", 0, "unexpected line 'garbage here'");
	expect_damage(CG_GOOD, false, 0, 6, "events: A B", 0, "a second 'events:' line");
	expect_damage(CLG_GOOD, false, 0, 0, NULL, 0, "unexpected line 'part: 1'");
}

static void
test_callgrind_damaged(void **state)
{
	(void)state;
	expect_damage(CLG_GOOD, true, 32, 0, NULL, 0, "truncated (no 'totals:' line)");
	expect_damage(CLG_GOOD, true, 11, 0, NULL, 0, "cost line before 'events:'");
	expect_damage(CLG_GOOD, true, 16, 0, NULL, 0, "cost line outside a function");
	expect_damage(CLG_GOOD, true, 8, 0, NULL, 0, "a dump of '(no trigger)'");
	expect_damage(CLG_GOOD, true, 22, 0, NULL, 0, "the functions' Ir costs add up to 106");
	expect_damage(CLG_GOOD, true, 0, 22, "+2 7 y", 0, "'y' is not a count");
	expect_damage(CLG_GOOD, true, 0, 16, "fn=(9x) bad", 0, "bad compressed name");
	expect_damage(CG_GOOD, true, 0, 0, NULL, 0, "no 'totals:' line");
}

static void
test_missing_file(void **state)
{
	struct vg_counts c;
	char err[512];

	(void)state;
	assert_int_equal(
		vg_cachegrind_read("/nonexistent/cachegrind.out", NULL, NULL, &c, err, sizeof(err)),
		-1);
	assert_non_null(strstr(err, "cannot read /nonexistent/cachegrind.out"));
	assert_int_equal(vg_cachegrind_read(CG_GOOD, kernel_fn, NULL, &c, err, sizeof(err)), 0);
}

static bool
no_fn(const char *object, const char *fn, void *arg)
{
	(void)object;
	(void)fn;
	(void)arg;
	return false;
}

#define CLG_OBJECTS TEST_DATA_DIR "/valgrind/callgrind-objects.out.1"

/* Keeps the functions of the object named by arg, or those named "run" where arg is NULL. */
static bool
object_fn(const char *object, const char *fn, void *arg)
{
	if (!arg)
		return strcmp(fn, "run") == 0;
	return object && strcmp(object, arg) == 0;
}

/* Two functions named "run" in two objects, a callee in a third named by "cob=" just before
 * its "cfn=": each is counted in its own object (sums worked out by hand). */
static void
test_callgrind_objects(void **state)
{
	struct vg_counts c;
	char err[512];

	(void)state;
	assert_int_equal(vg_callgrind_read(CLG_OBJECTS, REGION, object_fn, "/lib/k-native.so", &c,
					   NULL, err, sizeof(err)),
			 0);
	assert_int_equal(c.functions, 1);
	assert_int_equal(count(&c, "Ir"), 100);
	assert_int_equal(count(&c, "Dr"), 40);
	assert_int_equal(count(&c, "D1mr"), 8);
	assert_int_equal(vg_callgrind_read(CLG_OBJECTS, REGION, object_fn, "/bin/memsim", &c, NULL,
					   err, sizeof(err)),
			 0);
	assert_int_equal(c.functions, 2);
	assert_int_equal(count(&c, "Ir"), 12);
	assert_int_equal(count(&c, "D1mr"), 2);
	assert_int_equal(vg_callgrind_read(CLG_OBJECTS, REGION, object_fn, "/lib/libc.so.6", &c,
					   NULL, err, sizeof(err)),
			 0);
	assert_int_equal(count(&c, "Ir"), 2);
	assert_int_equal(count(&c, "D1mr"), 0);
	/* By name alone, both functions named run. */
	assert_int_equal(
		vg_callgrind_read(CLG_OBJECTS, REGION, object_fn, NULL, &c, NULL, err, sizeof(err)),
		0);
	assert_int_equal(c.functions, 2);
	assert_int_equal(count(&c, "Ir"), 105);
	assert_int_equal(count(&c, "D1mr"), 9);
}

static void
test_no_kernel_function(void **state)
{
	struct vg_counts c;
	char err[512];

	(void)state;
	assert_int_equal(vg_cachegrind_read(CG_GOOD, no_fn, NULL, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "none of the functions asked for"));
	assert_int_equal(
		vg_callgrind_read(CLG_GOOD, REGION, no_fn, NULL, &c, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "none of the functions asked for"));
}

static void
test_spawn(void **state)
{
	char path[512], err[512], words[256], log[700];
	char *fails[] = { "/bin/sh", "-c",
			  "echo '==1== valgrind line' >&2; echo 'the program said why' >&2; "
			  "echo '==1== trailer' >&2; exit 3",
			  NULL };
	char *missing[] = { "/nonexistent/tool", NULL };

	(void)state;
	assert_true(spawn_find("sh", path, sizeof(path)));
	assert_true(access(path, X_OK) == 0);
	assert_false(spawn_find("memsim-no-such-tool", path, sizeof(path)));
	assert_false(spawn_find("/nonexistent/tool", path, sizeof(path)));
	snprintf(log, sizeof(log), "%s/spawn.log", tmpdir);
	assert_int_equal(spawn_wait(fails, NULL, log, err, sizeof(err)), 3);
	assert_string_equal(spawn_last_line(log, words, sizeof(words)), "the program said why");
	assert_int_equal(spawn_wait(missing, NULL, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot run /nonexistent/tool"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cachegrind_good),
		cmocka_unit_test(test_callgrind_good),
		cmocka_unit_test(test_callgrind_objects),
		cmocka_unit_test(test_cachegrind_damaged),
		cmocka_unit_test(test_callgrind_damaged),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_no_kernel_function),
		cmocka_unit_test(test_spawn),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
