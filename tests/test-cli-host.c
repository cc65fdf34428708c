/*
 * The host preset as a user meets it, in each of its situations, set up with the test knobs
 * MEMSIM_SYSFS_ROOT (where sysfs is read) and MEMSIM_HOST_SOURCES (which sources are asked):
 * read from sysfs, naming the source; nothing known, where `presets` lists the others and
 * says why host is missing, and every command that wants host says so in one line; and this
 * machine as it is, whatever it knows (tests/run.sh runs this program again with the sysfs
 * root pointed at an empty directory).
 */

#include "config.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit.h"

#define TMPDIR_NAME "cli-host"
#include "tests/tmpdir.h"
/* after tmpdir.h: it uses tmpdir */
#include "tests/cli-run.h"

#define FAKE_ROOT "MEMSIM_SYSFS_ROOT=" TEST_DATA_DIR "/sysfs-root"
/* tests/data/sysfs has no devices/ tree: sysfs knows nothing there */
#define NOTHING_KNOWN "MEMSIM_SYSFS_ROOT=" TEST_DATA_DIR "/sysfs MEMSIM_HOST_SOURCES=sysfs"
#define CLIENT_SPEC                                                                                \
	"I1=32K:8:64:lru:wb:wa:nine,L1=32K:8:64:lru:wb:wa:nine,L2=256K:4:64:lru:wb:wa:nine,"       \
	"L3=6M:12:64:lru:wb:wa:nine,tiles=dram"

/* The spec line under preset name in `memsim presets`' output text. */
static const char *
spec_line_of(const char *text, const char *name, char *buf, size_t n)
{
	char head[64];
	const char *p, *e;

	snprintf(head, sizeof(head), "%s\n", name);
	for (p = text; (p = strstr(p, head)); p++)
		if (p == text || p[-1] == '\n')
			break;
	if (!p || !(p = strstr(p, "  spec:   ")))
		return NULL;
	p += strlen("  spec:   ");
	e = strchr(p, '\n');
	snprintf(buf, n, "%.*s", (int)(e ? e - p : (long)strlen(p)), p);
	return buf;
}

static void
test_host_from_sysfs(void **state)
{
	struct result r;
	char buf[1024];
	cJSON *m;

	(void)state;
	memsim_env = FAKE_ROOT;
	r = memsim("presets");
	assert_int_equal(r.rc, 0);
	assert_string_equal(spec_line_of(r.out, "host", buf, sizeof(buf)), CLIENT_SPEC);
	assert_non_null(strstr(r.out, "  source: sysfs, " TEST_DATA_DIR
				      "/sysfs-root/devices/system/cpu/cpu0/cache\n"));
	result_free(&r);

	/* profile's default cache is host: its header and manifest name where it came from */
	r = memsim("profile --T 32 --kernel naive --min-time 0.001 --reps 1 --out prof");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "under host = " CLIENT_SPEC "\n"));
	assert_non_null(strstr(r.out, "caches read from sysfs, " TEST_DATA_DIR "/sysfs-root/"));
	result_free(&r);
	m = read_json("prof/manifest.json");
	assert_non_null(m);
	assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(
				       cJSON_GetObjectItem(m, "config"), "cache_source")),
			       "sysfs, "));
	cJSON_Delete(m);
	memsim_env = "";
}

/* Nothing knows the caches: host alone is unavailable, with both sources' reasons. */
static void
test_host_unknown(void **state)
{
	static const char *const others[] = { "i5-8250u", "cachegrind", "callgrind",
					      "h100",     "h100-50m",   "lab" };
	struct result r;
	char buf[1024];

	(void)state;
	memsim_env = NOTHING_KNOWN;
	r = memsim("presets");
	assert_int_equal(r.rc, 0);
	assert_non_null(spec_line_of(r.out, "host", buf, sizeof(buf)));
	assert_non_null(strstr(buf, "unavailable here: host: this machine's caches are unknown "
				    "here: sysfs: cannot read " TEST_DATA_DIR "/sysfs/devices/"));
	assert_non_null(strstr(buf, "sysconf: not tried (MEMSIM_HOST_SOURCES)"));
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		assert_non_null(spec_line_of(r.out, others[i], buf, sizeof(buf)));
		assert_null(strstr(buf, "unavailable"));
	}
	result_free(&r);

	expect_error("run --kernel naive --N 32 --cache host", 2,
		     "--cache: host: this machine's caches are unknown here");
	expect_error("profile --T 32 --out p", 2,
		     "the default --cache: host: this machine's caches are unknown here");
	expect_error("profile --T 32 --out p", 2, "give --cache with another preset");
	/* with a cache given, profile does not need host */
	r = memsim("profile --T 32 --kernel naive --min-time 0.001 --reps 1 --cache i5-8250u "
		   "--out p2");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	memsim_env = "";
}

/* This machine as it is: host either gives a spec with its source, or is unavailable with
 * the reason; a run under it works exactly when presets shows a spec. */
static void
test_host_this_machine(void **state)
{
	struct result r = memsim("presets");
	char buf[1024];
	bool known;

	(void)state;
	assert_int_equal(r.rc, 0);
	assert_non_null(spec_line_of(r.out, "host", buf, sizeof(buf)));
	known = strncmp(buf, "unavailable here: ", 18) != 0;
	print_message("# host: %s\n", buf);
	if (known)
		assert_true(strstr(r.out, "  source: sysfs, ") ||
			    strstr(r.out, "  source: sysconf (glibc"));
	result_free(&r);
	r = memsim("run --kernel naive --N 32 --cache host --trace-only");
	assert_int_equal(r.rc, known ? 0 : 2);
	result_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_from_sysfs),
		cmocka_unit_test(test_host_unknown),
		cmocka_unit_test(test_host_this_machine),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
