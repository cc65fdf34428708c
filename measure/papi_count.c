/*
 * papi_measure(): every PAPI call of memsim.
 *
 * Notes:
 * - PAPI is process-wide state: PAPI_library_init() runs once per process (the static flag in
 *   library_init()), and PAPI runs at most one event set per component at a time, so the
 *   software events share the perf_event set with the core DRAM events. With no PMU that set
 *   holds the software events alone.
 * - The probe asks PAPI_query_named_event() about every candidate of the strategy table and
 *   papi_choose() picks from the names that exist. A name can exist in libpfm4 and still be
 *   refused by the kernel when added; then that name is dropped and the choice made again,
 *   so a refused channel or strategy falls through to the next one. PAPI_set_multiplex() is
 *   never called: a set that does not fit fails to add or to start, and the report says so.
 * - Uncore events are added with ":cpu=0" (perf_event_uncore counts per socket and needs a
 *   CPU): they count the memory controllers of CPU 0's socket, system-wide.
 * - Core events count user mode only (PAPI's default domain): the kernel zeroing fresh pages
 *   is not in them.
 * - Where perf::TASK-CLOCK or perf::PAGE-FAULTS cannot be counted, CPU time and page faults
 *   come from getrusage(RUSAGE_SELF) around the run (user + system time, minor + major
 *   faults), and the report names that source.
 */

#include "config.h"

#if defined(MEMSIM_FORCE_NO_PAPI)
/* The without-PAPI variant, compiled in a PAPI build for its own test. */
#undef HAVE_PAPI
#define HAVE_PAPI 0
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>

#if HAVE_PAPI
#include <dirent.h>
#include <papi.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
#endif

#include "base/util.h"
#include "measure/papi_count.h"

#if !HAVE_PAPI

int
papi_measure(void (*run)(void *), void *arg, uint64_t line_bytes, struct papi_report *r)
{
	(void)run;
	(void)arg;
	memset(r, 0, sizeof(*r));
	r->status = PAPI_STATUS_NOT_BUILT;
	r->line_bytes = line_bytes;
	snprintf(r->reason, sizeof(r->reason), "%s", PAPI_COUNT_NOT_BUILT);
	return -ENOTSUP;
}

#else

enum { SET_CORE = 0, SET_UNCORE, SET_COUNT };

enum slot_kind { SLOT_DRAM_READ, SLOT_DRAM_WRITE, SLOT_TASK_CLOCK, SLOT_PAGE_FAULTS };

/* Where report event i is counted. */
struct slot {
	enum slot_kind kind;
	int set;
	int index; /* in its event set */
};

struct measure {
	struct papi_report *r;
	int sets[SET_COUNT]; /* PAPI_NULL until created */
	int n_in_set[SET_COUNT];
	bool started[SET_COUNT];
	struct slot slots[PAPI_REPORT_MAX_EVENTS];
	long long values[SET_COUNT][PAPI_REPORT_MAX_EVENTS];
	char start_error[PAPI_REPORT_ERROR_LEN]; /* a set that would not start or stop */
};

/* PAPI's symbolic name for an error code: PAPI_strerror() gives only the text. */
static const char *
error_name(int code)
{
	/* clang-format off */
#define NAME(e) { e, #e }
	/* clang-format on */
	static const struct {
		int code;
		const char *name;
	} names[] = {
		NAME(PAPI_EINVAL),        NAME(PAPI_ENOMEM),      NAME(PAPI_ESYS),
		NAME(PAPI_ECMP),          NAME(PAPI_ECLOST),      NAME(PAPI_EBUG),
		NAME(PAPI_ENOEVNT),       NAME(PAPI_ECNFLCT),     NAME(PAPI_ENOTRUN),
		NAME(PAPI_EISRUN),        NAME(PAPI_ENOEVST),     NAME(PAPI_ENOTPRESET),
		NAME(PAPI_ENOCNTR),       NAME(PAPI_EMISC),       NAME(PAPI_EPERM),
		NAME(PAPI_ENOINIT),       NAME(PAPI_ENOCMP),      NAME(PAPI_ENOSUPP),
		NAME(PAPI_ENOIMPL),       NAME(PAPI_EBUF),        NAME(PAPI_EINVAL_DOM),
		NAME(PAPI_EATTR),         NAME(PAPI_ECOUNT),      NAME(PAPI_ECOMBO),
		NAME(PAPI_ECMP_DISABLED), NAME(PAPI_EDELAY_INIT), NAME(PAPI_EMULPASS),
	};
#undef NAME

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].code == code)
			return names[i].name;
	return "PAPI error";
}

/* "PAPI_ENOEVNT (Event does not exist)". */
static void
error_text(int code, char *buf, size_t len)
{
	const char *text = PAPI_strerror(code);

	snprintf(buf, len, "%s (%s)", error_name(code), text ? text : "no description");
}

/* Copies src into dst of len bytes, cut if it does not fit. */
static void
copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* PAPI_library_init()'s result, called once per process. */
static int
library_init(void)
{
	static bool done;
	static int rc;

	if (!done) {
		rc = PAPI_library_init(PAPI_VER_CURRENT);
		done = true;
	}
	return rc;
}

static int
read_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	char line[32], *end;
	long v;

	if (!f)
		return PAPI_PARANOID_UNKNOWN;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return PAPI_PARANOID_UNKNOWN;
	}
	fclose(f);
	errno = 0;
	v = strtol(line, &end, 10);
	if (errno || end == line || (*end != '\n' && *end != '\0') || v < -1000 || v > 1000)
		return PAPI_PARANOID_UNKNOWN;
	return (int)v;
}

/* True if the kernel registered a CPU PMU: "cpu" (x86), "cpu_core"/"cpu_atom" (hybrid x86) or
 * "armv*" (Arm). A VM without a virtual PMU has only software, tracepoint and the like. */
static bool
kernel_cpu_pmu(void)
{
	DIR *d = opendir("/sys/bus/event_source/devices");
	struct dirent *e;
	bool found = false;

	if (!d)
		return false;
	while (!found && (e = readdir(d)))
		found = strcmp(e->d_name, "cpu") == 0 || strcmp(e->d_name, "cpu_core") == 0 ||
			strcmp(e->d_name, "cpu_atom") == 0 || strncmp(e->d_name, "armv", 4) == 0;
	closedir(d);
	return found;
}

static void
component_state(const char *name, bool *disabled, char *reason, size_t len)
{
	int cid = PAPI_get_component_index(name);
	const PAPI_component_info_t *info = cid >= 0 ? PAPI_get_component_info(cid) : NULL;

	*disabled = true;
	if (!info) {
		snprintf(reason, len, "PAPI has no %s component", name);
		return;
	}
	*disabled = info->disabled != 0;
	copy_str(reason, len, info->disabled_reason);
}

/* Adds perf::CYCLES to a scratch event set: can this process count a hardware event? */
static enum papi_add_result
try_cycles(char *err, size_t len)
{
	int set = PAPI_NULL;
	int rc = PAPI_create_eventset(&set);

	if (rc == PAPI_OK) {
		rc = PAPI_add_named_event(set, "perf::CYCLES");
		PAPI_cleanup_eventset(set);
		PAPI_destroy_eventset(&set);
	}
	if (rc == PAPI_OK)
		return PAPI_ADD_OK;
	error_text(rc, err, len);
	return rc == PAPI_ENOEVNT ? PAPI_ADD_NO_EVENT
	       : rc == PAPI_EPERM ? PAPI_ADD_NO_PERMISSION
				  : PAPI_ADD_OTHER;
}

static void
drop_set(struct measure *m, int set)
{
	if (m->sets[set] == PAPI_NULL)
		return;
	PAPI_cleanup_eventset(m->sets[set]);
	PAPI_destroy_eventset(&m->sets[set]);
	m->sets[set] = PAPI_NULL;
	m->n_in_set[set] = 0;
}

/* Adds name to event set `set` (created on first use) and to the report, counted or not.
 * Returns PAPI's code. */
static int
add_event(struct measure *m, int set, const char *name, enum slot_kind kind)
{
	struct papi_report *r = m->r;
	struct papi_event_value *e = &r->events[r->n_events];
	int rc = PAPI_OK;

	if (m->sets[set] == PAPI_NULL)
		rc = PAPI_create_eventset(&m->sets[set]);
	if (rc == PAPI_OK)
		rc = PAPI_add_named_event(m->sets[set], name);
	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	m->slots[r->n_events] = (struct slot){ kind, set, m->n_in_set[set] };
	if (rc == PAPI_OK) {
		e->counted = true;
		m->n_in_set[set]++;
	} else {
		error_text(rc, e->error, sizeof(e->error));
	}
	r->n_events++;
	return rc;
}

/* Adds the chosen DRAM events. On a refusal undoes them and names the refused candidate. */
static int
add_dram(struct measure *m, const struct papi_choice *c, char *failed, size_t len)
{
	int set = c->strategy->uncore ? SET_UNCORE : SET_CORE;
	size_t first = m->r->n_events;

	for (size_t i = 0; i < c->n_events; i++) {
		char name[PAPI_EVENTS_NAME_LEN + 8];
		int rc;

		snprintf(name, sizeof(name), "%s%s", c->events[i].name,
			 c->strategy->uncore ? ":cpu=0" : "");
		rc = add_event(m, set, name, c->events[i].write ? SLOT_DRAM_WRITE : SLOT_DRAM_READ);
		if (rc != PAPI_OK) {
			snprintf(failed, len, "%s", c->events[i].name);
			drop_set(m, set);
			m->r->n_events = first;
			return rc;
		}
	}
	return PAPI_OK;
}

/* Appends "id: adding name failed with err" to the report's DRAM note. */
static void
note_refusal(struct papi_report *r, const char *id, const char *name, const char *err)
{
	char one[PAPI_EVENTS_REASON_LEN];
	size_t used = strlen(r->dram_note);

	snprintf(one, sizeof(one), "%s%s: adding %s failed with %s", used ? "; " : "", id, name,
		 err);
	copy_str(r->dram_note + used, sizeof(r->dram_note) - used, one);
}

/* Marks every event of set as not counted because the set failed to start or stop. */
static void
set_failed(struct measure *m, int set, const char *what)
{
	for (size_t i = 0; i < m->r->n_events; i++) {
		struct papi_event_value *e = &m->r->events[i];
		size_t used;

		if (m->slots[i].set != set || !e->counted)
			continue;
		e->counted = false;
		snprintf(e->error, sizeof(e->error), "%s: ", what);
		used = strlen(e->error);
		copy_str(e->error + used, sizeof(e->error) - used, m->start_error);
	}
}

/* Chooses among the available names and adds the choice, dropping refused names and
 * choosing again until a strategy is added or none is left. */
static void
choose_dram(struct measure *m, const char **avail, size_t n_avail)
{
	struct papi_choice *c = xzalloc(sizeof(*c));

	for (;;) {
		char failed[PAPI_EVENTS_NAME_LEN], err[PAPI_REPORT_ERROR_LEN];
		int rc;

		papi_choose(avail, n_avail, c);
		m->r->strategy = c->strategy;
		m->r->channels = c->channels;
		if (c->n_events == 0)
			break;
		rc = add_dram(m, c, failed, sizeof(failed));
		if (rc == PAPI_OK)
			break;
		error_text(rc, err, sizeof(err));
		note_refusal(m->r, c->strategy->id, failed, err);
		for (size_t i = 0; i < n_avail;) {
			if (strcmp(avail[i], failed) == 0)
				avail[i] = avail[--n_avail];
			else
				i++;
		}
	}
	free(c);
}

/* Starts every non-empty set, uncore first. A set that will not start counts nothing. */
static void
start_sets(struct measure *m)
{
	for (int set = SET_COUNT - 1; set >= 0; set--) {
		int rc;

		if (m->n_in_set[set] == 0)
			continue;
		rc = PAPI_start(m->sets[set]);
		if (rc == PAPI_OK) {
			m->started[set] = true;
			continue;
		}
		error_text(rc, m->start_error, sizeof(m->start_error));
		set_failed(m, set, "PAPI_start");
	}
}

static void
stop_sets(struct measure *m)
{
	for (int set = 0; set < SET_COUNT; set++) {
		int rc;

		if (!m->started[set])
			continue;
		rc = PAPI_stop(m->sets[set], m->values[set]);
		if (rc == PAPI_OK)
			continue;
		error_text(rc, m->start_error, sizeof(m->start_error));
		set_failed(m, set, "PAPI_stop");
	}
}

/* Copies the counts into the report and derives DRAM bytes and the software events. */
static bool
collect(struct measure *m)
{
	struct papi_report *r = m->r;
	uint64_t per = r->strategy ? papi_strategy_bytes(r->strategy, r->line_bytes) : 0;
	bool dram_ok = true, have_read = false, have_write = false;
	bool have_clock = false, have_faults = false;

	for (size_t i = 0; i < r->n_events; i++) {
		struct papi_event_value *e = &r->events[i];
		const struct slot *s = &m->slots[i];

		if (e->counted)
			e->value = (uint64_t)m->values[s->set][s->index];
		switch (s->kind) {
		case SLOT_DRAM_READ:
		case SLOT_DRAM_WRITE:
			dram_ok = dram_ok && e->counted;
			if (s->kind == SLOT_DRAM_READ) {
				have_read = true;
				r->dram_read_bytes += e->value * per;
			} else {
				have_write = true;
				r->dram_write_bytes += e->value * per;
			}
			break;
		case SLOT_TASK_CLOCK:
			have_clock = e->counted;
			r->task_clock_ns = e->value;
			break;
		case SLOT_PAGE_FAULTS:
			have_faults = e->counted;
			r->page_faults = e->value;
			break;
		}
	}
	r->dram_read_counted = dram_ok && have_read;
	r->dram_write_counted = dram_ok && have_write;
	if (!r->dram_read_counted)
		r->dram_read_bytes = 0;
	if (!r->dram_write_counted)
		r->dram_write_bytes = 0;
	return have_clock && have_faults;
}

static uint64_t
timeval_ns(struct timeval t)
{
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_usec * 1000u;
}

/* The facts papi_classify() needs that do not come from event sets. */
static void
probe(struct papi_facts *f, char (*text)[PAPI_REPORT_ERROR_LEN * 2])
{
	f->paranoid = read_paranoid();
	f->root = geteuid() == 0;
	f->kernel_cpu_pmu = kernel_cpu_pmu();
	component_state("perf_event", &f->core_disabled, text[0], sizeof(text[0]));
	f->core_reason = text[0];
	component_state("perf_event_uncore", &f->uncore_disabled, text[1], sizeof(text[1]));
	f->uncore_reason = text[1];
	f->cycles = try_cycles(text[2], sizeof(text[2]));
	f->cycles_error = text[2];
}

static size_t
available_events(char (*names)[PAPI_EVENTS_NAME_LEN], const char **avail)
{
	size_t n = papi_candidates(names, PAPI_EVENTS_MAX_CANDIDATES), k = 0;

	for (size_t i = 0; i < n; i++)
		if (PAPI_query_named_event(names[i]) == PAPI_OK)
			avail[k++] = names[i];
	return k;
}

int
papi_measure(void (*run)(void *), void *arg, uint64_t line_bytes, struct papi_report *r)
{
	struct measure *m;
	struct papi_facts facts = { 0 };
	struct papi_class cls;
	char text[3][PAPI_REPORT_ERROR_LEN * 2];
	char(*names)[PAPI_EVENTS_NAME_LEN] = NULL;
	const char **avail = NULL;
	struct rusage ru0, ru1;
	bool sw_ok = false;
	double t0, t1;
	long long v0, v1;
	int init;

	if (!run) {
		memset(r, 0, sizeof(*r));
		r->status = PAPI_STATUS_ERROR;
		snprintf(r->reason, sizeof(r->reason), "papi_measure: no function to run");
		return -EINVAL;
	}
	init = library_init();
	m = xzalloc(sizeof(*m));
	memset(r, 0, sizeof(*r));
	r->line_bytes = line_bytes;
	m->r = r;
	m->sets[SET_CORE] = m->sets[SET_UNCORE] = PAPI_NULL;
	facts.init_ok = init == PAPI_VER_CURRENT;
	if (!facts.init_ok) {
		if (init > 0)
			snprintf(text[0], sizeof(text[0]), "version %#x, expected %#x", init,
				 PAPI_VER_CURRENT);
		else
			error_text(init, text[0], sizeof(text[0]));
		facts.init_error = text[0];
	} else {
		int v = PAPI_get_opt(PAPI_LIB_VERSION, NULL);

		snprintf(r->papi_version, sizeof(r->papi_version), "%d.%d.%d.%d",
			 PAPI_VERSION_MAJOR(v), PAPI_VERSION_MINOR(v), PAPI_VERSION_REVISION(v),
			 PAPI_VERSION_INCREMENT(v));
		probe(&facts, text);
		names = xzalloc(PAPI_EVENTS_MAX_CANDIDATES * sizeof(*names));
		avail = xzalloc(PAPI_EVENTS_MAX_CANDIDATES * sizeof(*avail));
		choose_dram(m, avail, available_events(names, avail));
		/* Both or neither: one of them alone would leave the other to getrusage(). */
		sw_ok = add_event(m, SET_CORE, "perf::TASK-CLOCK", SLOT_TASK_CLOCK) == PAPI_OK;
		sw_ok = add_event(m, SET_CORE, "perf::PAGE-FAULTS", SLOT_PAGE_FAULTS) == PAPI_OK &&
			sw_ok;
		start_sets(m);
	}

	getrusage(RUSAGE_SELF, &ru0);
	v0 = facts.init_ok ? PAPI_get_virt_nsec() : 0;
	t0 = facts.init_ok ? (double)PAPI_get_real_nsec() * 1e-9 : now_seconds();
	run(arg);
	t1 = facts.init_ok ? (double)PAPI_get_real_nsec() * 1e-9 : now_seconds();
	v1 = facts.init_ok ? PAPI_get_virt_nsec() : 0;
	getrusage(RUSAGE_SELF, &ru1);
	r->ran = true;
	r->seconds = t1 - t0;

	if (facts.init_ok) {
		stop_sets(m);
		sw_ok = collect(m) && sw_ok;
		drop_set(m, SET_CORE);
		drop_set(m, SET_UNCORE);
	}
	facts.software_ok = sw_ok;
	if (sw_ok) {
		r->software_source = PAPI_SOURCE_PAPI;
	} else if (facts.init_ok && v1 > v0) {
		/* PAPI's own process clock: still a number read through PAPI. */
		r->software_source = PAPI_SOURCE_VIRT;
		r->task_clock_ns = (uint64_t)(v1 - v0);
		r->page_faults = (uint64_t)(ru1.ru_minflt + ru1.ru_majflt) -
				 (uint64_t)(ru0.ru_minflt + ru0.ru_majflt);
	} else {
		r->software_source = PAPI_SOURCE_GETRUSAGE;
		r->task_clock_ns = timeval_ns(ru1.ru_utime) + timeval_ns(ru1.ru_stime) -
				   timeval_ns(ru0.ru_utime) - timeval_ns(ru0.ru_stime);
		r->page_faults = (uint64_t)(ru1.ru_minflt + ru1.ru_majflt) -
				 (uint64_t)(ru0.ru_minflt + ru0.ru_majflt);
	}
	papi_classify(&facts, &cls);
	r->status = cls.status;
	snprintf(r->reason, sizeof(r->reason), "%s", cls.reason);
	snprintf(r->uncore_note, sizeof(r->uncore_note), "%s", cls.uncore_note);
	if (m->start_error[0] && r->status == PAPI_STATUS_COUNTED) {
		r->status = PAPI_STATUS_ERROR;
		snprintf(r->reason, sizeof(r->reason),
			 "hardware counters exist but an event set would not start or stop: %s",
			 m->start_error);
	}
	free(avail);
	free(names);
	free(m);
	return 0;
}

#endif
