#pragma once

/*
 * Runs a function once under PAPI: probes what the counters can do here, picks the DRAM-byte
 * strategy of measure/papi_events.h, counts, and says in the report what it could and could
 * not count and why. Nothing is printed. Built without PAPI, it reports "not-built".
 */

#include <stdint.h>

#include "measure/papi_report.h"

#define PAPI_COUNT_NOT_BUILT "memsim was built without PAPI (install libpapi-dev and rebuild)"

/* Initializes PAPI (once per process), probes, builds one event set per component (core
 * events and the software events perf::TASK-CLOCK and perf::PAGE-FAULTS on perf_event,
 * memory-controller events on perf_event_uncore; never multiplexed), calls run(arg) once
 * between PAPI_start and PAPI_stop, and fills *r. line_bytes is what one count of a
 * line-based strategy stands for (64 on x86). Returns 0 when run(arg) ran, whatever the
 * counters' status; -ENOTSUP without running it when memsim was built without PAPI, -EINVAL
 * if run is NULL. */
int papi_measure(void (*run)(void *), void *arg, uint64_t line_bytes, struct papi_report *r);
