#pragma once

/*
 * Which PAPI events estimate DRAM bytes on this CPU, and what PAPI's own answers mean. Pure:
 * no PAPI call and no PAPI header, so the choice and the messages are tested with fake
 * availability lists and fake probe facts; measure/papi_count.c gathers the real ones.
 *
 * Event names are libpfm4's, as PAPI takes them: "pmu::EVENT:UMASK" for uncore events and
 * "EVENT:UMASK" (the default core PMU) for core events.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PAPI_EVENTS_NAME_LEN 128
/* Programmable core counters a strategy may use. Intel cores have 4 per thread with SMT on
 * (8 without), AMD Zen 6; the NMI watchdog can take one. Beyond this a strategy is skipped,
 * so PAPI never has to multiplex. */
#define PAPI_EVENTS_CORE_COUNTERS 4
/* Counters of one uncore memory-controller box (one channel) on SKX, ICX, SPR and GNR. */
#define PAPI_EVENTS_UNCORE_COUNTERS 4
#define PAPI_EVENTS_MAX_PER_KIND 4  /* read or write events of one strategy (per channel) */
#define PAPI_EVENTS_MAX_CHANNELS 16 /* memory-controller channels (boxes) of one strategy */
#define PAPI_EVENTS_MAX_CHOSEN 48   /* 12 channels x 4 events */
#define PAPI_EVENTS_MAX_CANDIDATES 192

enum papi_cpu_class {
	PAPI_CLASS_INTEL_SERVER = 0, /* Xeon with an uncore memory controller PMU */
	PAPI_CLASS_INTEL,            /* any Intel core PMU: client parts, servers without uncore */
	PAPI_CLASS_AMD_ZEN,
	PAPI_CLASS_ANY,
};

/* One way to estimate DRAM bytes. For an uncore strategy the events are per channel: the
 * name is pmu, the channel number, "::" and the event ("skx_unc_imc3::UNC_M_CAS_COUNT:RD"),
 * and every channel whose events all exist is summed. */
struct papi_strategy {
	const char *id;          /* "skx-imc" */
	const char *description; /* what is counted, for the report */
	enum papi_cpu_class cpu_class;
	bool uncore; /* system-wide memory-controller counters: root or perf_event_paranoid <= 0 */
	const char *pmu;   /* uncore: PMU name before the channel number; NULL for core events */
	unsigned channels; /* uncore: channels 0 .. channels-1 are tried */
	const char *read_events[PAPI_EVENTS_MAX_PER_KIND + 1];  /* NULL-terminated */
	const char *write_events[PAPI_EVENTS_MAX_PER_KIND + 1]; /* NULL-terminated, may be empty */
	uint64_t bytes_per_count; /* 0: one cache line, the caller's line size */
	const char *leaves_out;   /* one sentence: what the estimate misses or adds */
};

struct papi_chosen_event {
	char name[PAPI_EVENTS_NAME_LEN];
	bool write; /* counts DRAM writes; otherwise reads */
};

struct papi_choice {
	const struct papi_strategy *strategy; /* never NULL: the last strategy is "none" */
	unsigned channels;                    /* uncore: channels found */
	size_t n_events;
	struct papi_chosen_event events[PAPI_EVENTS_MAX_CHOSEN];
};

/* The strategies, best first; the last one ("none") has no events. Sets *n to their count.
 * The table lives for the whole program. memsim native --help lists them. */
const struct papi_strategy *papi_strategies(size_t *n);

/* Writes every event name a strategy may use (uncore ones per channel, as above) into names
 * and returns how many there are, at most max; the probe asks PAPI which of them exist. */
size_t papi_candidates(char (*names)[PAPI_EVENTS_NAME_LEN], size_t max);

/* Picks the first strategy whose events are all among the n names in available (an uncore
 * one needs one complete channel) and that fits the counters without multiplexing; fills
 * *out with it and its events, reads first. Names that are not candidates are ignored. */
void papi_choose(const char *const *available, size_t n, struct papi_choice *out);

/* Bytes one count of s stands for: its bytes_per_count, or line_bytes for a cache line. */
uint64_t papi_strategy_bytes(const struct papi_strategy *s, uint64_t line_bytes);

enum papi_status {
	PAPI_STATUS_COUNTED = 0,        /* hardware counters counted */
	PAPI_STATUS_NO_PMU,             /* no hardware performance counters here */
	PAPI_STATUS_NO_PERMISSION,      /* counters exist, perf_event_paranoid or policy forbids */
	PAPI_STATUS_COMPONENT_DISABLED, /* PAPI's perf_event component disabled itself */
	PAPI_STATUS_INIT_FAILED,        /* PAPI_library_init() failed */
	PAPI_STATUS_ERROR,              /* another PAPI error while setting up or counting */
	PAPI_STATUS_NOT_BUILT,          /* memsim was built without PAPI */
};

/* "counted", "no-pmu", "no-permission", "component-disabled", "init-failed", "error",
 * "not-built". */
const char *papi_status_str(enum papi_status s);

/* How adding perf::CYCLES to an event set went. */
enum papi_add_result {
	PAPI_ADD_OK = 0,
	PAPI_ADD_NO_EVENT,      /* PAPI_ENOEVNT: the kernel or libpfm4 has no such event */
	PAPI_ADD_NO_PERMISSION, /* PAPI_EPERM */
	PAPI_ADD_OTHER,
};

#define PAPI_PARANOID_UNKNOWN (-100) /* /proc/sys/kernel/perf_event_paranoid unreadable */

/* What the probe found, in PAPI's own words where PAPI has words. Strings are borrowed. */
struct papi_facts {
	bool init_ok;
	const char *init_error;    /* !init_ok: "PAPI_ECMP (Not supported by component)" */
	bool core_disabled;        /* PAPI's perf_event component */
	const char *core_reason;   /* its disabled_reason */
	bool uncore_disabled;      /* PAPI's perf_event_uncore component */
	const char *uncore_reason; /* its disabled_reason */
	enum papi_add_result cycles;
	const char *cycles_error; /* not PAPI_ADD_OK: "PAPI_ENOEVNT (Event does not exist)" */
	int paranoid;        /* /proc/sys/kernel/perf_event_paranoid or PAPI_PARANOID_UNKNOWN */
	bool root;           /* effective uid 0 */
	bool kernel_cpu_pmu; /* /sys/bus/event_source/devices lists a CPU PMU */
	bool software_ok;    /* perf::TASK-CLOCK and perf::PAGE-FAULTS were added */
};

#define PAPI_EVENTS_REASON_LEN 512

struct papi_class {
	enum papi_status status;
	char reason[PAPI_EVENTS_REASON_LEN]; /* one line, no newline */
	bool uncore_needs_root; /* perf_event_uncore is disabled for lack of privilege */
	char uncore_note[PAPI_EVENTS_REASON_LEN]; /* one line: the uncore component's state */
};

/* Turns the probe's facts into a status and a one-line reason that quotes PAPI (the error
 * name and text, a component's disabled_reason, the perf_event_paranoid value). */
void papi_classify(const struct papi_facts *f, struct papi_class *out);
