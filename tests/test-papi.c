/*
 * The PAPI part: the strategy table and papi_choose() on fake availability lists (an Intel
 * server, an Intel client, AMD Zen 2 and 3, generic perf events, no PMU), papi_classify() on
 * fake probe facts with the words each message must contain, and one real papi_measure() of a
 * busy function, whose assertions hold here (no PMU) and on a machine with counters.
 */

#include "config.h"

#include <cJSON.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/papi_count.h"
#include "measure/papi_events.h"
#include "tests/unit.h"

/* clang-format off */
static const char *const skx_server[] = {
	"skx_unc_imc0::UNC_M_CAS_COUNT:RD", "skx_unc_imc0::UNC_M_CAS_COUNT:WR",
	"skx_unc_imc1::UNC_M_CAS_COUNT:RD", "skx_unc_imc1::UNC_M_CAS_COUNT:WR",
	"skx_unc_imc2::UNC_M_CAS_COUNT:RD", "skx_unc_imc2::UNC_M_CAS_COUNT:WR",
	"skx_unc_imc3::UNC_M_CAS_COUNT:RD", "skx_unc_imc3::UNC_M_CAS_COUNT:WR",
	"skx_unc_imc4::UNC_M_CAS_COUNT:RD", "skx_unc_imc4::UNC_M_CAS_COUNT:WR",
	"skx_unc_imc5::UNC_M_CAS_COUNT:RD", "skx_unc_imc5::UNC_M_CAS_COUNT:WR",
	"LONGEST_LAT_CACHE:MISS", "perf::LLC-LOAD-MISSES", "perf::LLC-STORE-MISSES",
	"PAPI_L3_TCM", "perf::CYCLES", "perf::TASK-CLOCK", "perf::PAGE-FAULTS", NULL,
};

/* Two populated channels, and one whose write event is missing: it does not count. */
static const char *const skx_partial[] = {
	"skx_unc_imc0::UNC_M_CAS_COUNT:RD", "skx_unc_imc0::UNC_M_CAS_COUNT:WR",
	"skx_unc_imc2::UNC_M_CAS_COUNT:RD",
	"skx_unc_imc3::UNC_M_CAS_COUNT:RD", "skx_unc_imc3::UNC_M_CAS_COUNT:WR",
	"LONGEST_LAT_CACHE:MISS", NULL,
};

/* Skylake client: core events only, no uncore memory controller in libpfm4. */
static const char *const skl_client[] = {
	"LONGEST_LAT_CACHE:MISS", "LONGEST_LAT_CACHE:REFERENCE", "perf::LLC-LOAD-MISSES",
	"perf::LLC-STORE-MISSES", "PAPI_L3_TCM", "perf::CYCLES", "perf::TASK-CLOCK",
	"perf::PAGE-FAULTS", "perf::CPU-CLOCK", NULL,
};

static const char *const zen2[] = {
	"DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_LCL_DRAM",
	"DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_RMT_DRAM",
	"perf::CYCLES", "perf::TASK-CLOCK", "perf::PAGE-FAULTS", NULL,
};

static const char *const zen3[] = {
	"DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL",
	"DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_RMT",
	"perf::LLC-LOAD-MISSES", "perf::CYCLES", "perf::TASK-CLOCK", NULL,
};

static const char *const generic[] = {
	"perf::LLC-LOAD-MISSES", "perf::LLC-STORE-MISSES", "PAPI_L3_TCM", "perf::CYCLES", NULL,
};

/* Half a generic pair is not enough; the preset remains. */
static const char *const preset_only[] = { "perf::LLC-LOAD-MISSES", "PAPI_L3_TCM", NULL };

static const char *const no_pmu[] = {
	"perf::TASK-CLOCK", "perf::PAGE-FAULTS", "perf::CPU-CLOCK", NULL,
};

static const char *const nothing[] = { NULL };

struct want_event {
	size_t index;
	const char *name;
	bool write;
};

struct choose_case {
	const char *what;
	const char *const *available;
	const char *id;
	unsigned channels;
	size_t n_events;
	struct want_event events[4];
};

static const struct choose_case choose_cases[] = {
	{ "Intel server (SKX), 6 channels", skx_server, "skx-imc", 6, 12,
	  { { 0, "skx_unc_imc0::UNC_M_CAS_COUNT:RD", false },
	    { 5, "skx_unc_imc5::UNC_M_CAS_COUNT:RD", false },
	    { 6, "skx_unc_imc0::UNC_M_CAS_COUNT:WR", true },
	    { 11, "skx_unc_imc5::UNC_M_CAS_COUNT:WR", true } } },
	{ "Intel server, channels 0 and 3 complete", skx_partial, "skx-imc", 2, 4,
	  { { 0, "skx_unc_imc0::UNC_M_CAS_COUNT:RD", false },
	    { 1, "skx_unc_imc3::UNC_M_CAS_COUNT:RD", false },
	    { 2, "skx_unc_imc0::UNC_M_CAS_COUNT:WR", true },
	    { 3, "skx_unc_imc3::UNC_M_CAS_COUNT:WR", true } } },
	{ "Intel client (Skylake)", skl_client, "intel-llc-miss", 0, 1,
	  { { 0, "LONGEST_LAT_CACHE:MISS", false } } },
	{ "AMD Zen 2", zen2, "zen2-dc-refill", 0, 2,
	  { { 0, "DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_LCL_DRAM", false },
	    { 1, "DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_RMT_DRAM", false } } },
	{ "AMD Zen 3", zen3, "zen3-dc-fill", 0, 2,
	  { { 0, "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL", false },
	    { 1, "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_RMT", false } } },
	{ "generic perf events", generic, "perf-llc", 0, 2,
	  { { 0, "perf::LLC-LOAD-MISSES", false }, { 1, "perf::LLC-STORE-MISSES", false } } },
	{ "PAPI preset only", preset_only, "papi-l3-tcm", 0, 1, { { 0, "PAPI_L3_TCM", false } } },
	{ "no PMU: software events only", no_pmu, "none", 0, 0, { { 0, NULL, false } } },
	{ "nothing at all", nothing, "none", 0, 0, { { 0, NULL, false } } },
	{ NULL, NULL, NULL, 0, 0, { { 0, NULL, false } } },
};
/* clang-format on */

static size_t
count(const char *const *names)
{
	size_t n = 0;

	while (names[n])
		n++;
	return n;
}

/* No choice needs multiplexing: at most PAPI_EVENTS_CORE_COUNTERS core events, and at most
 * PAPI_EVENTS_UNCORE_COUNTERS events on one uncore box (the name before "::"). */
static void
assert_fits(const char *what, const struct papi_choice *c)
{
	size_t core = 0;

	for (size_t i = 0; i < c->n_events; i++) {
		const char *sep = strstr(c->events[i].name, "::");
		size_t same = 0;

		if (!c->strategy->uncore) {
			core++;
			continue;
		}
		assert_non_null(sep);
		for (size_t j = 0; j < c->n_events; j++)
			same += strncmp(c->events[j].name, c->events[i].name,
					(size_t)(sep - c->events[i].name) + 2) == 0;
		if (same > PAPI_EVENTS_UNCORE_COUNTERS)
			fail_msg("%s: %zu events on one uncore box", what, same);
	}
	if (core > PAPI_EVENTS_CORE_COUNTERS)
		fail_msg("%s: %zu core events", what, core);
}

static void
test_choose(void **state)
{
	(void)state;
	for (const struct choose_case *t = choose_cases; t->what; t++) {
		struct papi_choice c;

		papi_choose(t->available, count(t->available), &c);
		if (strcmp(c.strategy->id, t->id) != 0)
			fail_msg("%s: chose %s, expected %s", t->what, c.strategy->id, t->id);
		if (c.n_events != t->n_events || c.channels != t->channels)
			fail_msg("%s: %zu events on %u channels, expected %zu on %u", t->what,
				 c.n_events, c.channels, t->n_events, t->channels);
		for (const struct want_event *w = t->events; w < t->events + 4 && w->name; w++) {
			if (strcmp(c.events[w->index].name, w->name) != 0 ||
			    c.events[w->index].write != w->write)
				fail_msg("%s: event %zu is %s (%s), expected %s", t->what, w->index,
					 c.events[w->index].name,
					 c.events[w->index].write ? "write" : "read", w->name);
		}
		assert_fits(t->what, &c);
	}
}

/* Every strategy fits without multiplexing even with all its events present, ids are unique,
 * each says what it leaves out, and the last one is "none". */
static void
test_table(void **state)
{
	static char names[PAPI_EVENTS_MAX_CANDIDATES][PAPI_EVENTS_NAME_LEN];
	const char *all[PAPI_EVENTS_MAX_CANDIDATES];
	size_t n, n_names;
	const struct papi_strategy *s = papi_strategies(&n);

	(void)state;
	n_names = papi_candidates(names, PAPI_EVENTS_MAX_CANDIDATES);
	assert_true(n_names > 100);
	assert_true(n_names < PAPI_EVENTS_MAX_CANDIDATES); /* none cut off */
	for (size_t i = 0; i < n_names; i++)
		all[i] = names[i];
	for (size_t i = 0; i < n; i++) {
		const char *only[PAPI_EVENTS_MAX_CANDIDATES];
		size_t k = 0;
		char prefix[64];
		struct papi_choice c;

		assert_non_null(s[i].description);
		assert_true(strlen(s[i].leaves_out) > 20);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(s[i].id, s[j].id);
		/* This strategy's own names alone choose it, with every channel. */
		snprintf(prefix, sizeof(prefix), "%s", s[i].pmu ? s[i].pmu : "");
		for (size_t j = 0; j < n_names; j++) {
			bool mine = s[i].pmu ? strncmp(all[j], prefix, strlen(prefix)) == 0 : false;

			for (int kind = 0; kind < 2 && !s[i].pmu; kind++) {
				const char *const *ev = kind ? s[i].write_events : s[i].read_events;

				for (; *ev; ev++)
					mine = mine || strcmp(*ev, all[j]) == 0;
			}
			if (mine)
				only[k++] = all[j];
		}
		papi_choose(only, k, &c);
		assert_string_equal(c.strategy->id, s[i].id);
		if (s[i].pmu)
			assert_int_equal(c.channels, s[i].channels);
		assert_fits(s[i].id, &c);
	}
	assert_string_equal(s[n - 1].id, "none");
	assert_null(s[n - 1].read_events[0]);
	/* With everything available the first strategy wins. */
	{
		struct papi_choice c;

		papi_choose(all, n_names, &c);
		assert_string_equal(c.strategy->id, s[0].id);
		assert_fits("all", &c);
	}
	assert_int_equal(papi_strategy_bytes(&s[0], 128), 64);
	assert_int_equal(papi_strategy_bytes(&s[n - 1], 128), 128);
}

struct classify_case {
	const char *what;
	struct papi_facts facts;
	enum papi_status status;
	const char *reason_has[3];
	bool uncore_needs_root;
	const char *uncore_has;
};

#define NO_DEFAULT_PMU "Error libpfm4 no default PMU found"
#define NO_UNCORE "No uncore PMUs or events found"
#define UNCORE_PERM                                                                                \
	"Insufficient permissions for uncore access.  Set /proc/sys/kernel/perf_event_paranoid "   \
	"to 0 or run as root."
#define ENOEVNT "PAPI_ENOEVNT (Event does not exist)"
#define EPERM_TEXT "PAPI_EPERM (Permission level does not permit operation)"

/* clang-format off */
static const struct classify_case classify_cases[] = {
	{ "VM without PMU, libpfm4 without a default PMU (this VM)",
	  { .init_ok = true, .core_disabled = true, .core_reason = NO_DEFAULT_PMU,
	    .uncore_disabled = true, .uncore_reason = NO_UNCORE, .cycles = PAPI_ADD_NO_EVENT,
	    .cycles_error = ENOEVNT, .paranoid = 2, .root = true },
	  PAPI_STATUS_NO_PMU,
	  { "PAPI_ENOEVNT (Event does not exist)", "\"" NO_DEFAULT_PMU "\"", "getrusage()" },
	  false, "\"" NO_UNCORE "\"" },
	{ "VM without PMU, CPU model known to libpfm4",
	  { .init_ok = true, .uncore_disabled = true, .uncore_reason = NO_UNCORE,
	    .cycles = PAPI_ADD_NO_EVENT, .cycles_error = ENOEVNT, .paranoid = 2,
	    .software_ok = true },
	  PAPI_STATUS_NO_PMU,
	  { "no hardware PMU: adding perf::CYCLES failed with PAPI_ENOEVNT (Event does not "
	    "exist); software events still counted" },
	  false, NO_UNCORE },
	{ "EPERM, paranoid 2, not root",
	  { .init_ok = true, .uncore_disabled = true, .uncore_reason = UNCORE_PERM,
	    .cycles = PAPI_ADD_NO_PERMISSION, .cycles_error = EPERM_TEXT, .paranoid = 2,
	    .kernel_cpu_pmu = true, .software_ok = true },
	  PAPI_STATUS_NO_PERMISSION,
	  { "PAPI_EPERM", "/proc/sys/kernel/perf_event_paranoid is 2", "does not run as root" },
	  true, "need root" },
	{ "EPERM as root",
	  { .init_ok = true, .cycles = PAPI_ADD_NO_PERMISSION, .cycles_error = EPERM_TEXT,
	    .paranoid = -1, .root = true, .kernel_cpu_pmu = true },
	  PAPI_STATUS_NO_PERMISSION, { "PAPI_EPERM", "perf_event_paranoid is -1", "seccomp" },
	  false, "enabled" },
	{ "component disabled by paranoid=3",
	  { .init_ok = true, .core_disabled = true,
	    .core_reason = "perf_event support disabled by Linux with paranoid=3",
	    .uncore_disabled = true, .uncore_reason = UNCORE_PERM, .cycles = PAPI_ADD_NO_EVENT,
	    .cycles_error = ENOEVNT, .paranoid = 3, .kernel_cpu_pmu = true },
	  PAPI_STATUS_NO_PERMISSION,
	  { "\"perf_event support disabled by Linux with paranoid=3\"",
	    "/proc/sys/kernel/perf_event_paranoid is 3", "set it to 2 or lower" },
	  true, "perf_event_paranoid <= 0 (/proc/sys/kernel/perf_event_paranoid is 3)" },
	{ "component disabled, kernel has a PMU (libpfm4 does not know the CPU)",
	  { .init_ok = true, .core_disabled = true, .core_reason = NO_DEFAULT_PMU,
	    .uncore_disabled = true, .uncore_reason = NO_UNCORE, .cycles = PAPI_ADD_NO_EVENT,
	    .cycles_error = ENOEVNT, .paranoid = 2, .root = true, .kernel_cpu_pmu = true },
	  PAPI_STATUS_COMPONENT_DISABLED,
	  { "perf_event component is disabled", "\"" NO_DEFAULT_PMU "\"",
	    "although the kernel lists a CPU PMU" },
	  false, NO_UNCORE },
	{ "init failure",
	  { .init_ok = false, .init_error = "PAPI_ECMP (Not supported by component)",
	    .paranoid = 2 },
	  PAPI_STATUS_INIT_FAILED, { "PAPI_library_init failed with PAPI_ECMP" }, false,
	  "not initialized" },
	{ "counted, uncore needs root",
	  { .init_ok = true, .uncore_disabled = true, .uncore_reason = UNCORE_PERM,
	    .cycles = PAPI_ADD_OK, .paranoid = 2, .kernel_cpu_pmu = true, .software_ok = true },
	  PAPI_STATUS_COUNTED, { "perf::CYCLES was added" }, true,
	  "\"" UNCORE_PERM "\"): memory-controller counters need root" },
	{ "counted, uncore enabled",
	  { .init_ok = true, .cycles = PAPI_ADD_OK, .paranoid = 0, .root = true,
	    .kernel_cpu_pmu = true, .software_ok = true },
	  PAPI_STATUS_COUNTED, { "hardware counters work" }, false, "enabled" },
	{ "other add error",
	  { .init_ok = true, .uncore_disabled = true, .uncore_reason = NO_UNCORE,
	    .cycles = PAPI_ADD_OTHER,
	    .cycles_error = "PAPI_ECNFLCT (Event exists, but cannot be counted due to counter "
			    "resource limitations)",
	    .paranoid = 2, .kernel_cpu_pmu = true, .software_ok = true },
	  PAPI_STATUS_ERROR, { "adding perf::CYCLES failed with PAPI_ECNFLCT" }, false,
	  NO_UNCORE },
	{ NULL, { 0 }, 0, { NULL }, false, NULL },
};
/* clang-format on */

static void
test_classify(void **state)
{
	(void)state;
	for (const struct classify_case *t = classify_cases; t->what; t++) {
		struct papi_class c;

		papi_classify(&t->facts, &c);
		if (c.status != t->status)
			fail_msg("%s: %s, expected %s (%s)", t->what, papi_status_str(c.status),
				 papi_status_str(t->status), c.reason);
		for (int i = 0; i < 3 && t->reason_has[i]; i++)
			if (!strstr(c.reason, t->reason_has[i]))
				fail_msg("%s: reason '%s' lacks '%s'", t->what, c.reason,
					 t->reason_has[i]);
		if (strchr(c.reason, '\n') || strchr(c.uncore_note, '\n'))
			fail_msg("%s: more than one line", t->what);
		if (c.uncore_needs_root != t->uncore_needs_root)
			fail_msg("%s: uncore_needs_root %d", t->what, c.uncore_needs_root);
		if (!strstr(c.uncore_note, t->uncore_has))
			fail_msg("%s: uncore note '%s' lacks '%s'", t->what, c.uncore_note,
				 t->uncore_has);
	}
}

static void
test_status_str(void **state)
{
	static const char *const want[] = { "counted",       "no-pmu",
					    "no-permission", "component-disabled",
					    "init-failed",   "error",
					    "not-built" };

	(void)state;
	for (int s = PAPI_STATUS_COUNTED; s <= PAPI_STATUS_NOT_BUILT; s++)
		assert_string_equal(papi_status_str((enum papi_status)s), want[s]);
}

struct busy {
	size_t bytes;
	unsigned long sum;
	bool ran;
};

/* Touches fresh pages (page faults) and computes on them (CPU time). */
static void
busy(void *arg)
{
	struct busy *b = arg;
	volatile unsigned char *p = malloc(b->bytes);

	assert_non_null(p);
	for (int round = 0; round < 4; round++)
		for (size_t i = 0; i < b->bytes; i += 64)
			p[i] = (unsigned char)(p[i] + i + (size_t)round);
	for (size_t i = 0; i < b->bytes; i += 64)
		b->sum += p[i];
	free((void *)p);
	b->ran = true;
}

static bool
kernel_lists_cpu_pmu(void)
{
	return access("/sys/bus/event_source/devices/cpu", F_OK) == 0 ||
	       access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0;
}

#if HAVE_PAPI

static void
check_json(const struct papi_report *r)
{
	cJSON *o = cJSON_CreateObject();
	const char *keys[] = { "status",        "reason",          "strategy",
			       "events",        "dram_read_bytes", "dram_write_bytes",
			       "task_clock_ns", "page_faults",     "seconds",
			       "papi_version" };

	papi_report_json(r, o);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!cJSON_GetObjectItemCaseSensitive(o, keys[i]))
			fail_msg("JSON lacks '%s'", keys[i]);
	assert_string_equal(cJSON_GetObjectItem(o, "status")->valuestring,
			    papi_status_str(r->status));
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(o, "task_clock_ns")));
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(o, "seconds")));
	assert_true(cJSON_IsString(cJSON_GetObjectItem(o, "papi_version")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "dram_read_bytes")) ==
		    !r->dram_read_counted);
	cJSON_Delete(o);
}

static void
test_measure(void **state)
{
	struct papi_report *r = calloc(1, sizeof(*r));
	struct busy b = { 32u << 20, 0, false };
	char line[512];

	(void)state;
	assert_non_null(r);
	for (int call = 0; call < 2; call++) { /* PAPI initializes once */
		assert_int_equal(papi_measure(busy, &b, 64, r), 0);
		assert_true(b.ran);
		assert_true(r->ran);
		assert_true(r->seconds > 0);
		assert_true(r->task_clock_ns > 0);
		assert_true(r->page_faults > 0);
		/* Through PAPI either way: its perf:: events, or its process clock. */
		assert_true(r->software_source == PAPI_SOURCE_PAPI ||
			    r->software_source == PAPI_SOURCE_VIRT);
		assert_non_null(r->strategy);
		assert_true(r->papi_version[0] != '\0');
		switch (r->status) {
		case PAPI_STATUS_NO_PMU:
			assert_non_null(strstr(r->reason, "PAPI_ENOEVNT (Event does not exist)"));
			assert_false(r->dram_read_counted);
			break;
		case PAPI_STATUS_COUNTED:
			if (r->dram_read_counted) {
				uint64_t sum = 0;

				for (size_t i = 0; i < r->n_events; i++)
					if (strncmp(r->events[i].name, "perf::", 6) != 0)
						sum += r->events[i].value;
				assert_true(sum > 0);
				assert_true(r->dram_read_bytes > 0);
			}
			break;
		case PAPI_STATUS_NO_PERMISSION:
			assert_non_null(strstr(r->reason, "/proc/sys/kernel/perf_event_paranoid"));
			break;
		case PAPI_STATUS_COMPONENT_DISABLED:
			assert_non_null(strstr(r->reason, "perf_event component is disabled (\""));
			break;
		default:
			fail_msg("status %s: %s", papi_status_str(r->status), r->reason);
		}
		/* A kernel without a CPU PMU (this VM) cannot count hardware events. */
		if (!kernel_lists_cpu_pmu())
			assert_int_equal(r->status, PAPI_STATUS_NO_PMU);
		check_json(r);
		papi_report_line(r, line, sizeof(line));
		assert_non_null(strstr(line, papi_status_str(r->status)));
		b.ran = false;
	}
	free(r);
}

#else

static void
test_measure(void **state)
{
	struct papi_report *r = calloc(1, sizeof(*r));
	struct busy b = { 1u << 20, 0, false };

	(void)state;
	assert_non_null(r);
	assert_int_equal(papi_measure(busy, &b, 64, r), -ENOTSUP);
	assert_false(b.ran);
	assert_int_equal(r->status, PAPI_STATUS_NOT_BUILT);
	assert_string_equal(r->reason, PAPI_COUNT_NOT_BUILT);
	(void)kernel_lists_cpu_pmu;
	free(r);
}

#endif

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_choose),   cmocka_unit_test(test_table),
		cmocka_unit_test(test_classify), cmocka_unit_test(test_status_str),
		cmocka_unit_test(test_measure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
