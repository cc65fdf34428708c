/*
 * The DRAM-byte strategies and the reading of PAPI's probe results.
 *
 * Notes:
 * - Names were checked against libpfm4 4.13 (Debian 12, what PAPI 7.0 there uses) by encoding
 *   them with LIBPFM_ENCODE_INACTIVE=1: skx_unc_imc0..5, LONGEST_LAT_CACHE:MISS (nhm, wsm,
 *   ivb, hsw, bdw, skl, skx, clx, icl, icx, spr, glm, tmt; Sandy Bridge calls it
 *   LAST_LEVEL_CACHE_MISSES and falls to perf-llc), the Zen 2/3/4 fill events and the perf::
 *   generic events.
 *   icx_unc_imc, spr_unc_imc and gnr_unc_imc (0..11 each) are newer than 4.13; their names
 *   are those of upstream libpfm4's tables. On a libpfm4 without them they are simply absent.
 * - Intel client parts have no memory-controller PMU in libpfm4 (4.13 has C-box uncores on
 *   Sandy/Ivy Bridge and the Nehalem/Westmere QMC, nothing after), so PAPI cannot reach the
 *   kernel's client uncore_imc counters: clients fall to LONGEST_LAT_CACHE:MISS.
 * - One CAS command moves 64 bytes: DDR4 bursts 8 x 64 bits, a DDR5 subchannel 16 x 32 bits.
 * - The choice never needs multiplexing: a core strategy uses at most
 *   PAPI_EVENTS_CORE_COUNTERS events, an uncore one at most PAPI_EVENTS_UNCORE_COUNTERS per
 *   channel box, and the software events take no counter.
 */

#include "measure/papi_events.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define IMC_CAVEAT                                                                                 \
	"system-wide: counts every read and write CAS on the memory controllers of CPU 0's "       \
	"socket, whoever caused it (other processes and the kernel too); traffic to another "      \
	"socket's memory is not counted"

/* clang-format off */
static const struct papi_strategy strategies[] = {
	{ "skx-imc", "memory-controller CAS commands, Intel Skylake-SP / Cascade Lake "
		     "(skx_unc_imc0..5)",
	  PAPI_CLASS_INTEL_SERVER, true, "skx_unc_imc", 6,
	  { "UNC_M_CAS_COUNT:RD", NULL }, { "UNC_M_CAS_COUNT:WR", NULL }, 64, IMC_CAVEAT },
	{ "icx-imc", "memory-controller CAS commands, Intel Ice Lake-SP (icx_unc_imc0..11)",
	  PAPI_CLASS_INTEL_SERVER, true, "icx_unc_imc", 12,
	  { "UNC_M_CAS_COUNT:RD", NULL }, { "UNC_M_CAS_COUNT:WR", NULL }, 64, IMC_CAVEAT },
	{ "spr-imc", "memory-controller CAS commands, Intel Sapphire Rapids (spr_unc_imc0..11)",
	  PAPI_CLASS_INTEL_SERVER, true, "spr_unc_imc", 12,
	  { "UNC_M_CAS_COUNT:RD", NULL }, { "UNC_M_CAS_COUNT:WR", NULL }, 64, IMC_CAVEAT },
	{ "gnr-imc", "memory-controller CAS commands of both DDR5 subchannels, Intel Granite "
		     "Rapids (gnr_unc_imc0..11)",
	  PAPI_CLASS_INTEL_SERVER, true, "gnr_unc_imc", 12,
	  { "UNC_M_CAS_COUNT_SCH0:RD", "UNC_M_CAS_COUNT_SCH1:RD", NULL },
	  { "UNC_M_CAS_COUNT_SCH0:WR", "UNC_M_CAS_COUNT_SCH1:WR", NULL }, 64, IMC_CAVEAT },
	{ "intel-llc-miss", "last-level-cache misses of this thread's demand requests, any Intel "
			    "core (LONGEST_LAT_CACHE:MISS x line)",
	  PAPI_CLASS_INTEL, false, NULL, 0, { "LONGEST_LAT_CACHE:MISS", NULL }, { NULL }, 0,
	  "counts demand loads, RFOs and code reads that miss the last-level cache, counted as "
	  "line reads; fills by the L2 hardware prefetchers and all write-backs of dirty lines "
	  "are left out, and a miss served by another socket's cache counts as DRAM" },
	{ "zen4-dc-fill", "demand L1D fills from DRAM or IO, near and far node, AMD Zen 4 "
			  "(DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM x line)",
	  PAPI_CLASS_AMD_ZEN, false, NULL, 0,
	  { "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:DRAM_IO_NEAR",
	    "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:DRAM_IO_FAR", NULL }, { NULL }, 0,
	  "counts this thread's demand data-cache fills from DRAM (and memory-mapped IO); "
	  "hardware-prefetch fills, instruction fetches and write-backs are left out" },
	{ "zen3-dc-fill", "demand L1D fills from DRAM or IO, local and remote node, AMD Zen 3 "
			  "(DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM x line)",
	  PAPI_CLASS_AMD_ZEN, false, NULL, 0,
	  { "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL",
	    "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_RMT", NULL }, { NULL }, 0,
	  "counts this thread's demand data-cache fills from DRAM (and memory-mapped IO); "
	  "hardware-prefetch fills, instruction fetches and write-backs are left out" },
	{ "zen2-dc-refill", "demand L1D refills from local and remote DRAM, AMD Zen 2 "
			    "(DATA_CACHE_REFILLS_FROM_SYSTEM x line)",
	  PAPI_CLASS_AMD_ZEN, false, NULL, 0,
	  { "DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_LCL_DRAM",
	    "DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_RMT_DRAM", NULL }, { NULL }, 0,
	  "counts this thread's demand data-cache refills from DRAM; hardware-prefetch fills, "
	  "instruction fetches and write-backs are left out" },
	{ "perf-llc", "Linux's generic last-level-cache load and store misses "
		      "(perf::LLC-LOAD-MISSES + perf::LLC-STORE-MISSES x line)",
	  PAPI_CLASS_ANY, false, NULL, 0,
	  { "perf::LLC-LOAD-MISSES", "perf::LLC-STORE-MISSES", NULL }, { NULL }, 0,
	  "the kernel maps these per CPU model (often demand misses only); a store miss counts as "
	  "a line read (read for ownership), write-backs and most prefetch fills are left out" },
	{ "papi-l3-tcm", "PAPI's preset for L3 total cache misses (PAPI_L3_TCM x line)",
	  PAPI_CLASS_ANY, false, NULL, 0, { "PAPI_L3_TCM", NULL }, { NULL }, 0,
	  "PAPI defines the preset per CPU; counted as line reads, write-backs are left out" },
	{ "none", "no DRAM-byte estimate", PAPI_CLASS_ANY, false, NULL, 0, { NULL }, { NULL }, 0,
	  "no strategy's events could be counted here, so PAPI gives no DRAM bytes" },
};
/* clang-format on */

const struct papi_strategy *
papi_strategies(size_t *n)
{
	*n = sizeof(strategies) / sizeof(strategies[0]);
	return strategies;
}

uint64_t
papi_strategy_bytes(const struct papi_strategy *s, uint64_t line_bytes)
{
	return s->bytes_per_count ? s->bytes_per_count : line_bytes;
}

static size_t
count_names(const char *const *names)
{
	size_t n = 0;

	while (names[n])
		n++;
	return n;
}

/* The concrete name of event of s on channel ch (uncore) or as is (core). */
static void
event_name(const struct papi_strategy *s, unsigned ch, const char *event, char *buf, size_t len)
{
	if (s->pmu)
		snprintf(buf, len, "%s%u::%s", s->pmu, ch, event);
	else
		snprintf(buf, len, "%s", event);
}

size_t
papi_candidates(char (*names)[PAPI_EVENTS_NAME_LEN], size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < sizeof(strategies) / sizeof(strategies[0]); i++) {
		const struct papi_strategy *s = &strategies[i];
		unsigned channels = s->pmu ? s->channels : 1;

		for (unsigned ch = 0; ch < channels; ch++) {
			const char *const *lists[] = { s->read_events, s->write_events };

			for (int k = 0; k < 2; k++)
				for (const char *const *e = lists[k]; *e && n < max; e++)
					event_name(s, ch, *e, names[n++], PAPI_EVENTS_NAME_LEN);
		}
	}
	return n;
}

static bool
is_available(const char *name, const char *const *available, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(available[i], name) == 0)
			return true;
	return false;
}

/* Adds the events of s on channel ch (write ones if write) to out; false if one is missing,
 * and then out is left as it was. */
static bool
add_events(const struct papi_strategy *s, unsigned ch, bool write, const char *const *available,
	   size_t n, struct papi_choice *out)
{
	const char *const *events = write ? s->write_events : s->read_events;
	size_t first = out->n_events;

	for (const char *const *e = events; *e; e++) {
		struct papi_chosen_event *c = &out->events[out->n_events];

		event_name(s, ch, *e, c->name, sizeof(c->name));
		c->write = write;
		if (!is_available(c->name, available, n)) {
			out->n_events = first;
			return false;
		}
		out->n_events++;
	}
	return true;
}

/* Fills out with s's events if they are available and fit the counters; false otherwise. */
static bool
try_strategy(const struct papi_strategy *s, const char *const *available, size_t n,
	     struct papi_choice *out)
{
	size_t per_box = count_names(s->read_events) + count_names(s->write_events);
	bool have[PAPI_EVENTS_MAX_CHANNELS] = { false };

	memset(out, 0, sizeof(*out));
	out->strategy = s;
	if (!s->pmu) {
		if (per_box > PAPI_EVENTS_CORE_COUNTERS)
			return false;
		return add_events(s, 0, false, available, n, out) &&
		       add_events(s, 0, true, available, n, out);
	}
	if (per_box > PAPI_EVENTS_UNCORE_COUNTERS || s->channels > PAPI_EVENTS_MAX_CHANNELS ||
	    s->channels * per_box > PAPI_EVENTS_MAX_CHOSEN)
		return false;
	/* A channel counts only with all its events, so reads and writes cover the same boxes. */
	for (unsigned ch = 0; ch < s->channels; ch++) {
		size_t first = out->n_events;

		if (add_events(s, ch, false, available, n, out) &&
		    add_events(s, ch, true, available, n, out))
			have[ch] = true;
		out->n_events = first;
	}
	for (int write = 0; write < 2; write++)
		for (unsigned ch = 0; ch < s->channels; ch++)
			if (have[ch])
				add_events(s, ch, write, available, n, out);
	for (unsigned ch = 0; ch < s->channels; ch++)
		out->channels += have[ch];
	return out->channels > 0;
}

void
papi_choose(const char *const *available, size_t n, struct papi_choice *out)
{
	size_t count = sizeof(strategies) / sizeof(strategies[0]);

	for (size_t i = 0; i < count; i++)
		if (try_strategy(&strategies[i], available, n, out))
			return;
	/* Unreachable: "none" has no events and always fits. */
	memset(out, 0, sizeof(*out));
	out->strategy = &strategies[count - 1];
}

const char *
papi_status_str(enum papi_status s)
{
	static const char *const names[] = {
		[PAPI_STATUS_COUNTED] = "counted",
		[PAPI_STATUS_NO_PMU] = "no-pmu",
		[PAPI_STATUS_NO_PERMISSION] = "no-permission",
		[PAPI_STATUS_COMPONENT_DISABLED] = "component-disabled",
		[PAPI_STATUS_INIT_FAILED] = "init-failed",
		[PAPI_STATUS_ERROR] = "error",
		[PAPI_STATUS_NOT_BUILT] = "not-built",
	};

	if ((unsigned)s >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[s];
}

static void append(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

static const char *
str_or(const char *s, const char *fallback)
{
	return s && *s ? s : fallback;
}

/* ", /proc/sys/kernel/perf_event_paranoid is N" in words. */
static void
append_paranoid(char *buf, size_t len, int paranoid)
{
	if (paranoid == PAPI_PARANOID_UNKNOWN)
		append(buf, len, "/proc/sys/kernel/perf_event_paranoid is unreadable");
	else
		append(buf, len, "/proc/sys/kernel/perf_event_paranoid is %d", paranoid);
}

static void
append_software(char *buf, size_t len, bool software_ok)
{
	if (software_ok)
		append(buf, len, "software events still counted");
	else
		append(buf, len,
		       "perf::TASK-CLOCK and perf::PAGE-FAULTS are missing too, so CPU "
		       "time comes from PAPI_get_virt_nsec() and page faults from getrusage()");
}

static void
classify_core(const struct papi_facts *f, struct papi_class *out)
{
	char *r = out->reason;
	size_t len = sizeof(out->reason);
	const char *cycles = str_or(f->cycles_error, "an unknown error");

	if (!f->init_ok) {
		out->status = PAPI_STATUS_INIT_FAILED;
		append(r, len, "PAPI_library_init failed with %s",
		       str_or(f->init_error, "an unknown error"));
		return;
	}
	if (f->core_disabled) {
		const char *why = str_or(f->core_reason, "no reason given");

		if (f->paranoid >= 3) {
			out->status = PAPI_STATUS_NO_PERMISSION;
			append(r, len, "PAPI's perf_event component is disabled (\"%s\"): ", why);
			append_paranoid(r, len, f->paranoid);
			append(r, len, "; set it to 2 or lower");
		} else if (!f->kernel_cpu_pmu) {
			out->status = PAPI_STATUS_NO_PMU;
			append(r, len,
			       "no hardware PMU: the kernel lists no CPU PMU in "
			       "/sys/bus/event_source/devices and PAPI's perf_event component is "
			       "disabled (\"%s\"), so adding perf::CYCLES failed with %s; ",
			       why, cycles);
			append_software(r, len, f->software_ok);
		} else {
			out->status = PAPI_STATUS_COMPONENT_DISABLED;
			append(r, len,
			       "PAPI's perf_event component is disabled (\"%s\") although the kernel "
			       "lists a CPU PMU; adding perf::CYCLES failed with %s; ",
			       why, cycles);
			append_software(r, len, f->software_ok);
		}
		return;
	}
	switch (f->cycles) {
	case PAPI_ADD_OK:
		out->status = PAPI_STATUS_COUNTED;
		append(r, len, "hardware counters work: perf::CYCLES was added");
		if (!f->software_ok)
			append(r, len,
			       "; perf::TASK-CLOCK or perf::PAGE-FAULTS could not be added, "
			       "so CPU time comes from PAPI_get_virt_nsec() and page faults from "
			       "getrusage()");
		return;
	case PAPI_ADD_NO_EVENT:
		out->status = PAPI_STATUS_NO_PMU;
		append(r, len, "no hardware PMU: adding perf::CYCLES failed with %s; ", cycles);
		append_software(r, len, f->software_ok);
		return;
	case PAPI_ADD_NO_PERMISSION:
		out->status = PAPI_STATUS_NO_PERMISSION;
		append(r, len, "adding perf::CYCLES failed with %s: ", cycles);
		append_paranoid(r, len, f->paranoid);
		if (f->root)
			append(r, len,
			       " and memsim runs as root, so a container or seccomp policy "
			       "blocks perf_event_open()");
		else if (f->paranoid > 2)
			append(r, len, " and memsim does not run as root; set it to 2 or lower");
		else
			append(r, len,
			       " and memsim does not run as root; a container or seccomp "
			       "policy may block perf_event_open()");
		return;
	case PAPI_ADD_OTHER:
	default:
		out->status = PAPI_STATUS_ERROR;
		append(r, len, "adding perf::CYCLES failed with %s", cycles);
		return;
	}
}

static void
classify_uncore(const struct papi_facts *f, struct papi_class *out)
{
	char *r = out->uncore_note;
	size_t len = sizeof(out->uncore_note);
	const char *why = str_or(f->uncore_reason, "no reason given");

	if (!f->init_ok) {
		append(r, len, "PAPI is not initialized");
		return;
	}
	if (!f->uncore_disabled) {
		append(r, len, "PAPI's perf_event_uncore component is enabled");
		return;
	}
	append(r, len, "PAPI's perf_event_uncore component is disabled (\"%s\")", why);
	/* PAPI 7 disables it with a reason naming perf_event_paranoid when the user lacks the
	 * privilege; "No uncore PMUs or events found" means there is nothing to count. */
	if (strstr(why, "paranoid") || strstr(why, "ermission")) {
		out->uncore_needs_root = true;
		append(r, len,
		       ": memory-controller counters need root or perf_event_paranoid <= 0 (");
		append_paranoid(r, len, f->paranoid);
		append(r, len, ")");
	}
}

void
papi_classify(const struct papi_facts *f, struct papi_class *out)
{
	memset(out, 0, sizeof(*out));
	classify_core(f, out);
	classify_uncore(f, out);
}
