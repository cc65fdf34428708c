/*
 * The PAPI report as JSON and as text. No PAPI call: compiled the same with and without PAPI.
 */

#include "measure/papi_report.h"

#include <cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *
source_str(enum papi_source s)
{
	switch (s) {
	case PAPI_SOURCE_PAPI:
		return "papi";
	case PAPI_SOURCE_GETRUSAGE:
		return "getrusage";
	case PAPI_SOURCE_VIRT:
		return "PAPI_get_virt_nsec+getrusage";
	case PAPI_SOURCE_NONE:
	default:
		return NULL;
	}
}

static void
add_u64_or_null(cJSON *obj, const char *key, bool have, uint64_t v)
{
	/* cJSON keeps doubles: exact up to 2^53, beyond any count of one run. */
	if (have)
		cJSON_AddNumberToObject(obj, key, (double)v);
	else
		cJSON_AddNullToObject(obj, key);
}

static void
add_string_or_null(cJSON *obj, const char *key, const char *s)
{
	if (s && *s)
		cJSON_AddStringToObject(obj, key, s);
	else
		cJSON_AddNullToObject(obj, key);
}

void
papi_report_json(const struct papi_report *r, cJSON *obj)
{
	cJSON *events, *unavailable;
	bool sw = r->software_source != PAPI_SOURCE_NONE;

	cJSON_AddStringToObject(obj, "status", papi_status_str(r->status));
	cJSON_AddStringToObject(obj, "reason", r->reason);
	add_string_or_null(obj, "uncore", r->uncore_note);
	if (r->strategy) {
		cJSON *s = cJSON_AddObjectToObject(obj, "strategy");

		cJSON_AddStringToObject(s, "id", r->strategy->id);
		cJSON_AddStringToObject(s, "description", r->strategy->description);
		cJSON_AddStringToObject(s, "leaves_out", r->strategy->leaves_out);
		cJSON_AddBoolToObject(s, "uncore", r->strategy->uncore);
		cJSON_AddNumberToObject(s, "channels", r->channels);
		cJSON_AddNumberToObject(s, "bytes_per_count",
					(double)papi_strategy_bytes(r->strategy, r->line_bytes));
	} else {
		cJSON_AddNullToObject(obj, "strategy");
	}
	add_string_or_null(obj, "dram_note", r->dram_note);
	events = cJSON_AddObjectToObject(obj, "events");
	unavailable = cJSON_AddObjectToObject(obj, "unavailable");
	for (size_t i = 0; i < r->n_events; i++) {
		const struct papi_event_value *e = &r->events[i];

		if (e->counted)
			cJSON_AddNumberToObject(events, e->name, (double)e->value);
		else
			cJSON_AddStringToObject(unavailable, e->name, e->error);
	}
	add_u64_or_null(obj, "dram_read_bytes", r->dram_read_counted, r->dram_read_bytes);
	add_u64_or_null(obj, "dram_write_bytes", r->dram_write_counted, r->dram_write_bytes);
	add_u64_or_null(obj, "task_clock_ns", sw, r->task_clock_ns);
	add_u64_or_null(obj, "page_faults", sw, r->page_faults);
	add_string_or_null(obj, "software_source", source_str(r->software_source));
	if (r->ran)
		cJSON_AddNumberToObject(obj, "seconds", r->seconds);
	else
		cJSON_AddNullToObject(obj, "seconds");
	add_string_or_null(obj, "papi_version", r->papi_version);
}

void
papi_report_print(FILE *f, const struct papi_report *r)
{
	fprintf(f, "papi: %s: %s\n", papi_status_str(r->status), r->reason);
	if (r->uncore_note[0])
		fprintf(f, "papi: uncore: %s\n", r->uncore_note);
	if (r->strategy && !r->strategy->read_events[0]) {
		fprintf(f, "papi: strategy %s: %s (%s)\n", r->strategy->id,
			r->strategy->description, r->strategy->leaves_out);
	} else if (r->strategy) {
		fprintf(f, "papi: strategy %s: %s", r->strategy->id, r->strategy->description);
		if (r->strategy->uncore)
			fprintf(f, ", %u channels", r->channels);
		fprintf(f, "\npapi: leaves out: %s\n", r->strategy->leaves_out);
	}
	if (r->dram_note[0])
		fprintf(f, "papi: not used: %s\n", r->dram_note);
	for (size_t i = 0; i < r->n_events; i++) {
		const struct papi_event_value *e = &r->events[i];

		if (e->counted)
			fprintf(f, "papi: event %s = %" PRIu64 "\n", e->name, e->value);
		else
			fprintf(f, "papi: event %s not counted: %s\n", e->name, e->error);
	}
	if (r->dram_read_counted || r->dram_write_counted) {
		fprintf(f, "papi: DRAM bytes:");
		if (r->dram_read_counted)
			fprintf(f, " read %" PRIu64, r->dram_read_bytes);
		if (r->dram_write_counted)
			fprintf(f, " write %" PRIu64, r->dram_write_bytes);
		else
			fprintf(f, " (writes not counted)");
		fprintf(f, "\n");
	}
	if (r->software_source != PAPI_SOURCE_NONE)
		fprintf(f, "papi: task clock %.6f s, %" PRIu64 " page faults (%s)\n",
			(double)r->task_clock_ns * 1e-9, r->page_faults,
			source_str(r->software_source));
	if (r->ran)
		fprintf(f, "papi: wall %.6f s\n", r->seconds);
	if (r->papi_version[0])
		fprintf(f, "papi: PAPI %s\n", r->papi_version);
}

char *
papi_report_line(const struct papi_report *r, char *buf, size_t len)
{
	size_t used;

	snprintf(buf, len, "%s: ", papi_status_str(r->status));
	used = strlen(buf);
	if (r->dram_read_counted || r->dram_write_counted) {
		snprintf(buf + used, len - used, "%s DRAM read %" PRIu64 " B, write ",
			 r->strategy->id, r->dram_read_bytes);
		used = strlen(buf);
		if (r->dram_write_counted)
			snprintf(buf + used, len - used, "%" PRIu64 " B", r->dram_write_bytes);
		else
			snprintf(buf + used, len - used, "not counted");
	} else if (r->status == PAPI_STATUS_NOT_BUILT) {
		snprintf(buf + used, len - used, "%s", r->reason);
	} else {
		snprintf(buf + used, len - used, "no DRAM estimate");
	}
	used = strlen(buf);
	if (r->software_source != PAPI_SOURCE_NONE && used < len)
		snprintf(buf + used, len - used,
			 "; task clock %.6f s (%s), %" PRIu64 " page faults",
			 (double)r->task_clock_ns * 1e-9, source_str(r->software_source),
			 r->page_faults);
	return buf;
}
