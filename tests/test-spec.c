/*
 * Cache specs: what parses and to what, every rejected spec with the part its message must
 * name, the presets, and the host preset read from fake sysfs trees in tests/data/sysfs and
 * from a stand-in sysconf().
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
#include "tests/unit.h"

#ifndef TEST_DATA_DIR
#error "TEST_DATA_DIR must point at tests/data"
#endif

struct good_case {
	const char *spec;
	const char *canonical; /* spec_format() of the result */
};

/* clang-format off */
static const struct good_case good[] = {
	{ "L1=32K:8:64,L2=1M:16:64",
	  "L1=32K:8:64:lru:wb:wa:nine,L2=1M:16:64:lru:wb:wa:nine,tiles=dram" },
	{ "l1=32k:8:64B", "L1=32K:8:64:lru:wb:wa:nine,tiles=dram" },
	{ "L1=32KiB:8:64,L2=1M:16:64:plru:wt:excl",
	  "L1=32K:8:64:lru:wb:wa:nine,L2=1M:16:64:plru:wt:wa:excl,tiles=dram" },
	{ "L1=1K:full:32:fifo:nwa", "L1=1K:full:32:fifo:wb:nwa:nine,tiles=dram" },
	{ "L1=1K:32:32", "L1=1K:full:32:lru:wb:wa:nine,tiles=dram" },
	{ "L1=4K:1:64:random:wv", "L1=4K:1:64:random:wb:wv:nine,tiles=dram" },
	{ "L1=32K:8:64,L2=256K:4:64,L3=6M:12:64:incl,L4=64M:16:64:quietwb",
	  "L1=32K:8:64:lru:wb:wa:nine,L2=256K:4:64:lru:wb:wa:nine,L3=6M:12:64:lru:wb:wa:incl,"
	  "L4=64M:16:64:lru:wb:wa:nine:quietwb,tiles=dram" },
	{ "I1=32K:8:64,L1=32K:8:64,tiles=scratch",
	  "I1=32K:8:64:lru:wb:wa:nine,L1=32K:8:64:lru:wb:wa:nine,tiles=scratch" },
	{ "none", "none,tiles=dram" },
	{ "lab", "none,tiles=scratch" },
	{ "h100", "L1=22M:22:128:lru:wb:wv:nine,tiles=scratch" },
	{ "h100-50m", "L1=50M:25:128:lru:wb:wv:nine,tiles=scratch" },
	{ "callgrind", "I1=32K:8:64:lru:wb:wa:nine,L1=32K:8:64:lru:wt:wa:nine,L2=1M:16:64:lru:wb:wa:nine,tiles=dram" },
	{ "cachegrind", "I1=32K:8:64:lru:wb:wa:nine:straddle=once,L1=32K:8:64:lru:wb:wa:nine:"
			"straddle=once,L2=1M:16:64:lru:wb:wa:nine:quietwb:straddle=once,tiles=dram" },
	{ "L1=32K:8:64:straddle=line,L2=1M:16:64:straddle=once",
	  "L1=32K:8:64:lru:wb:wa:nine,L2=1M:16:64:lru:wb:wa:nine:straddle=once,tiles=dram" },
	{ "i5-8250u", "L1=32K:8:64:lru:wb:wa:nine,L2=256K:4:64:lru:wb:wa:nine,"
		      "L3=6M:12:64:lru:wb:wa:incl,tiles=dram" },
	{ NULL, NULL },
};

struct bad_case {
	const char *spec;
	const char *message; /* a substring the one-line message must contain */
};

static const struct bad_case bad[] = {
	{ "", "empty cache spec" },
	{ "L1=48K:8:64", "L1: 96 sets" },                       /* not a power of two */
	{ "L1=32K:8:48", "L1: line size 48 is not a power of two" },
	{ "L1=64:1:128", "L1: line (128 B) is larger than the cache (64 B)" },
	{ "L1=32K:8:64:lfu", "L1: unknown policy word 'lfu'" },
	{ "L1=32K:8:64:lru:fifo", "L1: 'lru' and 'fifo' both given" },
	{ "L1=32K:8:64:wb:wt", "L1: 'wb' and 'wt' both given" },
	{ "L1=32K:8:64:straddle=once:straddle=line", "L1: 'straddle=once' and 'straddle=line' both given" },
	{ "L1=0:8:64", "L1: size is zero" },
	{ "L1=32K:0:64", "L1: associativity is zero" },
	{ "L1=32K:8:0", "L1: line size 0 is not a power of two" },
	{ "L1=99999999999999999999K:8:64", "L1: size '99999999999999999999K' overflows" },
	{ "L1=17179869184G:8:64", "L1: size '17179869184G' overflows" },
	{ "L1=32K:99999999999:64", "L1: associativity '99999999999' is too large" },
	{ "L1=32X:8:64", "L1: size '32X' is not a size" },
	{ "L1=32K:eight:64", "L1: associativity 'eight'" },
	{ "L1=32K:8", "L1: expected size:assoc:line" },
	/* Empty items and fields: strtok_r() used to skip them (found by fuzz-spec). */
	{ "L1=32K::8:64", "L1: empty field" },
	{ "L1=:32K:8:64", "L1: empty field" },
	{ "L1=32K:8:64:", "L1: empty field" },
	{ "L1=", "L1: empty field" },
	{ "L1=32K:8:64,,L2=1M:16:64", "has an empty item" },
	{ ",L1=32K:8:64", "has an empty item" },
	{ "L1=32K:8:64,", "has an empty item" },
	{ ",", "has an empty item" },
	{ "L1=32K:24:64", "L1: 24 ways do not divide the 512 lines" },
	{ "L1=1K:6:64:plru", "L1: 6 ways do not divide" },
	{ "L1=384:3:64:plru", "L1: plru needs a power-of-two number of ways" },
	{ "L2=1M:16:64", "L2 given before L1" },
	{ "L1=32K:8:64,L1=32K:8:64", "L1 given twice" },
	{ "L1=32K:8:64,L3=1M:16:64", "L3 given before L2" },
	{ "L5=1M:16:64", "L5: at most 4 data levels" },
	{ "X1=1M:16:64", "unknown cache level 'X1'" },
	{ "L1=32K:8:64:incl", "L1: 'incl' needs a level above it" },
	{ "L1=32K:8:64:quietwb", "L1: 'quietwb' needs a level above it" },
	{ "L1=32K:8:64,L2=1M:16:128:excl", "L2: 'excl' needs the same line size as L1" },
	{ "L1=32K:8:64:wt,L2=1M:16:64:excl", "L2: 'excl' below a write-through L1" },
	{ "L1=32K:8:128,L2=1M:16:64:incl", "L2: 'incl' needs lines at least as large as L1's" },
	{ "I1=32K:8:64", "I1 needs an L1 beside it" },
	{ "I1=32K:8:64,I1=32K:8:64,L1=32K:8:64", "only one instruction cache" },
	{ "foo", "unknown cache spec or preset 'foo'" },
	{ "lab,L1=32K:8:64", "preset 'lab' cannot be combined" },
	{ "none,L1=32K:8:64", "'none' means no cache levels" },
	{ "L1=32K:8:64,tiles=sram", "tiles: 'sram' is not 'scratch' or 'dram'" },
	{ "L1=64G:1:64", "more than memsim simulates" },
	{ "tiles=dram", "names no level" },
	{ NULL, NULL },
};
/* clang-format on */

static void
test_good_specs(void **state)
{
	(void)state;
	for (const struct good_case *g = good; g->spec; g++) {
		struct spec s;
		char err[512], buf[1024];

		if (spec_parse(g->spec, &s, err, sizeof(err)))
			fail_msg("'%s' rejected: %s", g->spec, err);
		spec_format(&s, buf, sizeof(buf));
		if (strcmp(buf, g->canonical) != 0)
			fail_msg("'%s' became '%s', expected '%s'", g->spec, buf, g->canonical);
	}
}

static void
test_bad_specs(void **state)
{
	(void)state;
	for (const struct bad_case *b = bad; b->spec; b++) {
		struct spec s;
		char err[512] = "";

		if (spec_parse(b->spec, &s, err, sizeof(err)) == 0)
			fail_msg("'%s' accepted", b->spec);
		if (!strstr(err, b->message))
			fail_msg("'%s': message '%s' does not contain '%s'", b->spec, err,
				 b->message);
		if (strchr(err, '\n'))
			fail_msg("'%s': message is more than one line", b->spec);
	}
}

/* The canonical form parses back to itself. */
static void
test_round_trip(void **state)
{
	(void)state;
	for (const struct good_case *g = good; g->spec; g++) {
		struct spec a, b;
		char err[512], buf[1024], buf2[1024];

		assert_int_equal(spec_parse(g->spec, &a, err, sizeof(err)), 0);
		spec_format(&a, buf, sizeof(buf));
		if (spec_parse(buf, &b, err, sizeof(err)))
			fail_msg("canonical '%s' rejected: %s", buf, err);
		spec_format(&b, buf2, sizeof(buf2));
		assert_string_equal(buf, buf2);
	}
}

static void
test_host_sysfs(void **state)
{
	struct spec s;
	char err[512], buf[1024];

	(void)state;
	/* A server part whose 260 MiB L3 has 212992 sets: modelled with 2^18 sets x 16 ways. */
	assert_int_equal(spec_from_sysfs(TEST_DATA_DIR "/sysfs/xeon", &s, err, sizeof(err)), 0);
	spec_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "I1=32K:8:64:lru:wb:wa:nine,L1=48K:12:64:lru:wb:wa:nine,"
				 "L2=2M:16:64:lru:wb:wa:nine,L3=256M:16:64:lru:wb:wa:nine,"
				 "tiles=dram");
	assert_non_null(strstr(s.note, "L3: 212992 sets is not a power of two"));
	assert_non_null(strstr(s.note, "262144 sets x 16 ways (256M of 260M)"));
	assert_int_equal(cache_config_validate(&s.cache, err, sizeof(err)), 0);

	assert_int_equal(spec_from_sysfs(TEST_DATA_DIR "/sysfs/client", &s, err, sizeof(err)), 0);
	spec_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "I1=32K:8:64:lru:wb:wa:nine,L1=32K:8:64:lru:wb:wa:nine,"
				 "L2=256K:4:64:lru:wb:wa:nine,L3=6M:12:64:lru:wb:wa:nine,"
				 "tiles=dram");
	assert_string_equal(s.note, "");

	assert_int_not_equal(spec_from_sysfs(TEST_DATA_DIR "/sysfs/broken", &s, err, sizeof(err)),
			     0);
	assert_non_null(strstr(err, "index0 is missing or has unreadable fields"));
	assert_int_not_equal(
		spec_from_sysfs(TEST_DATA_DIR "/sysfs/none-here", &s, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "cannot read"));
}

/* sysconf() as glibc answers it on an AMD EPYC VM without cache sysfs: L1d 48 KiB 12-way,
 * L2 1 MiB 8-way, and an L3 of 508 MiB whose way count cpuid's leaf 0x80000006 leaves to a
 * leaf the VM does not have (glibc says 0). */
static long
sysconf_epyc_vm(int name)
{
	static const struct {
		int name;
		long value;
	} answers[] = {
		{ _SC_LEVEL1_DCACHE_SIZE, 49152 },    { _SC_LEVEL1_DCACHE_ASSOC, 12 },
		{ _SC_LEVEL1_DCACHE_LINESIZE, 64 },   { _SC_LEVEL2_CACHE_SIZE, 1048576 },
		{ _SC_LEVEL2_CACHE_ASSOC, 8 },        { _SC_LEVEL2_CACHE_LINESIZE, 64 },
		{ _SC_LEVEL3_CACHE_SIZE, 532676608 }, { _SC_LEVEL3_CACHE_ASSOC, 0 },
		{ _SC_LEVEL3_CACHE_LINESIZE, 64 },
	};

	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++)
		if (answers[i].name == name)
			return answers[i].value;
	return 0;
}

/* A C library that knows no cache (glibc on many non-x86 machines answers 0). */
static long
sysconf_nothing(int name)
{
	(void)name;
	return 0;
}

/* An L1 of 64 KiB, fully associative by its way count (glibc gives the lines for AMD's
 * "fully associative" code), and nothing below. */
static long
sysconf_l1_full(int name)
{
	if (name == _SC_LEVEL1_DCACHE_SIZE)
		return 65536;
	if (name == _SC_LEVEL1_DCACHE_ASSOC)
		return 1024;
	if (name == _SC_LEVEL1_DCACHE_LINESIZE)
		return 64;
	return -1;
}

static void
test_host_sysconf(void **state)
{
	struct spec s;
	char err[512], buf[1024];

	(void)state;
	assert_int_equal(spec_from_sysconf(sysconf_epyc_vm, &s, err, sizeof(err)), 0);
	spec_format(&s, buf, sizeof(buf));
	/* 508 MiB over 16 assumed ways is 520192 sets: 2^19 sets x 15 ways */
	assert_string_equal(buf, "L1=48K:12:64:lru:wb:wa:nine,L2=1M:8:64:lru:wb:wa:nine,"
				 "L3=480M:15:64:lru:wb:wa:nine,tiles=dram");
	assert_non_null(strstr(s.note, "L3: no associativity reported; modelled as 16 ways"));
	assert_non_null(strstr(s.note, "L3: 520192 sets is not a power of two"));
	assert_non_null(strstr(s.source, "sysconf"));
	assert_int_equal(cache_config_validate(&s.cache, err, sizeof(err)), 0);

	assert_int_equal(spec_from_sysconf(sysconf_l1_full, &s, err, sizeof(err)), 0);
	spec_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "L1=64K:full:64:lru:wb:wa:nine,tiles=dram");

	assert_int_equal(spec_from_sysconf(sysconf_nothing, &s, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "sysconf() reports no data cache"));
}

/* Runs spec_parse("host") with MEMSIM_SYSFS_ROOT and MEMSIM_HOST_SOURCES set (NULL: unset). */
static int
parse_host_with(const char *root, const char *sources, struct spec *s, char *err, size_t n)
{
	int rc;

	if (root)
		setenv("MEMSIM_SYSFS_ROOT", root, 1);
	if (sources)
		setenv("MEMSIM_HOST_SOURCES", sources, 1);
	rc = spec_parse("host", s, err, n);
	unsetenv("MEMSIM_SYSFS_ROOT");
	unsetenv("MEMSIM_HOST_SOURCES");
	return rc;
}

/* The host preset as the commands meet it: sysfs under MEMSIM_SYSFS_ROOT first, naming its
 * source; without it, sysconf (whatever this machine's says: only that it was tried); with
 * neither, unavailable with both reasons. tests/data/sysfs holds no devices/ tree. */
static void
test_host_sources(void **state)
{
	char err[1024], buf[1024];
	struct spec s;

	(void)state;
	assert_int_equal(parse_host_with(TEST_DATA_DIR "/sysfs-root", NULL, &s, err, sizeof(err)),
			 0);
	spec_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "I1=32K:8:64:lru:wb:wa:nine,L1=32K:8:64:lru:wb:wa:nine,"
				 "L2=256K:4:64:lru:wb:wa:nine,L3=6M:12:64:lru:wb:wa:nine,"
				 "tiles=dram");
	assert_string_equal(s.preset, "host");
	assert_string_equal(s.source,
			    "sysfs, " TEST_DATA_DIR "/sysfs-root/devices/system/cpu/cpu0/cache");

	if (parse_host_with(TEST_DATA_DIR "/sysfs", NULL, &s, err, sizeof(err)) == 0) {
		assert_non_null(strstr(s.source, "sysconf"));
		assert_non_null(strstr(s.note, "no cache description in sysfs (cannot read"));
	} else {
		assert_non_null(strstr(err, "sysconf: sysconf() reports no data cache"));
	}
	assert_int_equal(parse_host_with(TEST_DATA_DIR "/sysfs", "sysfs", &s, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "host: this machine's caches are unknown here: sysfs: cannot "
				    "read " TEST_DATA_DIR "/sysfs/devices/system/cpu/cpu0/cache"));
	assert_non_null(strstr(err, "sysconf: not tried (MEMSIM_HOST_SOURCES)"));
	/* the other presets never look */
	setenv("MEMSIM_HOST_SOURCES", "none", 1);
	assert_int_equal(spec_parse("i5-8250u", &s, err, sizeof(err)), 0);
	unsetenv("MEMSIM_HOST_SOURCES");
}

static void
test_presets_listed(void **state)
{
	const char *want[] = { "host", "i5-8250u", "cachegrind", "callgrind",
			       "h100", "h100-50m", "lab" };

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct spec_preset *p = spec_presets;

		while (p->name && strcmp(p->name, want[i]) != 0)
			p++;
		assert_non_null(p->name);
		assert_non_null(p->source);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_specs),     cmocka_unit_test(test_bad_specs),
		cmocka_unit_test(test_round_trip),     cmocka_unit_test(test_host_sysfs),
		cmocka_unit_test(test_presets_listed), cmocka_unit_test(test_host_sysconf),
		cmocka_unit_test(test_host_sources),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
