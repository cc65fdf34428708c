#pragma once

/*
 * What one PAPI-measured run gave: the counters' status and reason, the DRAM strategy with
 * its events and bytes, the software events, the wall time. Filled by papi_measure()
 * (measure/papi_count.h); written here as JSON and as text. Everything is plain data the caller
 * owns; the strategy pointer points into the static table of measure/papi_events.h.
 */

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "measure/papi_events.h"

#define PAPI_REPORT_MAX_EVENTS (PAPI_EVENTS_MAX_CHOSEN + 2)
#define PAPI_REPORT_ERROR_LEN 128

/* Where task_clock_ns and page_faults come from. */
enum papi_source {
	PAPI_SOURCE_NONE = 0,  /* not measured */
	PAPI_SOURCE_PAPI,      /* perf::TASK-CLOCK and perf::PAGE-FAULTS through PAPI */
	PAPI_SOURCE_GETRUSAGE, /* getrusage(RUSAGE_SELF): user + system time, minor + major faults
				*/
	PAPI_SOURCE_VIRT, /* CPU time from PAPI_get_virt_nsec(), page faults from getrusage() */
};

struct papi_event_value {
	char name[PAPI_EVENTS_NAME_LEN]; /* as added to PAPI, e.g. with ":cpu=0" */
	bool counted;
	uint64_t value;
	char error[PAPI_REPORT_ERROR_LEN]; /* !counted: "PAPI_ENOEVNT (Event does not exist)" */
};

struct papi_report {
	enum papi_status status;
	char reason[PAPI_EVENTS_REASON_LEN];      /* one line */
	char uncore_note[PAPI_EVENTS_REASON_LEN]; /* one line; empty when PAPI was not probed */
	char dram_note[PAPI_EVENTS_REASON_LEN];   /* one line: strategies that failed, or empty */
	const struct papi_strategy *strategy;     /* the one tried last; NULL when not probed */
	unsigned channels;                        /* uncore strategy: channels counted */
	size_t n_events;
	struct papi_event_value events[PAPI_REPORT_MAX_EVENTS];
	bool dram_read_counted, dram_write_counted;
	uint64_t dram_read_bytes, dram_write_bytes;
	uint64_t line_bytes; /* the cache line one count of a line-based strategy stands for */
	enum papi_source software_source;
	uint64_t task_clock_ns; /* CPU time of the run */
	uint64_t page_faults;
	bool ran;
	double seconds;        /* wall time of the run */
	char papi_version[32]; /* of the library loaded at run time; empty when not built */
};

/* Adds the report's keys to obj: "status", "reason", "uncore", "strategy" (object or null),
 * "dram_note", "events" {name: value} for counted events, "unavailable" {name: error},
 * "dram_read_bytes", "dram_write_bytes", "task_clock_ns", "page_faults" (null when not
 * measured), "software_source", "seconds", "papi_version". */
void papi_report_json(const struct papi_report *r, cJSON *obj);

/* Prints the report as lines starting "papi: ": status and reason, the uncore note, the
 * strategy and what it leaves out, each event, DRAM bytes, software events and time. */
void papi_report_print(FILE *f, const struct papi_report *r);

/* Writes a one-line summary for a table row or a note, e.g. "no-pmu: no DRAM estimate;
 * task clock 0.0123 s (getrusage), 1031 page faults" into buf and returns buf. */
char *papi_report_line(const struct papi_report *r, char *buf, size_t len);
