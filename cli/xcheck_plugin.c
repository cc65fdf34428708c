/*
 * `memsim xcheck --kernel PATH`: the plugin's rows of the cross-check (cli/xcheck_plugin.h).
 */

/* dladdr() and realpath() */
#define _GNU_SOURCE

#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/xcheck_plugin.h"
#include "cli/xcheck_rows.h"

/* The name in xp->functions of the function at addr, a pointer into the native build. */
static const char *
name_at(const struct xcheck_plugin *xp, uintptr_t addr)
{
	Dl_info info;

	if (!addr || !dladdr((void *)addr, &info) || !info.dli_fbase)
		return NULL;
	return elf_function_at(&xp->functions, addr - (uintptr_t)info.dli_fbase);
}

/* The C runtime's and the compiler's functions every shared object may have (crtstuff.c,
 * crti.o, static constructors and destructors, a sanitizer's module set-up): they run at load
 * and unload, never in the kernel, and memsim has them too. */
static bool
runtime_function(const char *fn)
{
	static const char *const names[] = { "_init",
					     "_fini",
					     "frame_dummy",
					     "register_tm_clones",
					     "deregister_tm_clones",
					     "__do_global_dtors_aux",
					     "__do_global_ctors_aux",
					     "_start" };
	static const char *const prefixes[] = { "_sub_I_", "_sub_D_", "_GLOBAL__sub_",
						"asan.module_", "sancov.module_" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(fn, names[i]) == 0)
			return true;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(fn, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

static bool
left_out(const struct xcheck_plugin *xp, const char *fn)
{
	if (runtime_function(fn))
		return true;
	for (unsigned i = 0; i < xp->nleft_out; i++)
		if (strcmp(xp->left_out[i], fn) == 0)
			return true;
	return false;
}

/* Whether Cachegrind's counts of the plugin's functions can be told apart from memsim's own:
 * its run() has a name, and none of its functions has a name the memsim executable has. */
static void
cachegrind_check(struct xcheck_plugin *xp)
{
	const struct memsim_kernel_plugin *p = xp->native.p;
	uintptr_t callbacks[5] = { (uintptr_t)p->check, (uintptr_t)p->arrays, (uintptr_t)p->flops,
				   (uintptr_t)p->formula,
				   (uintptr_t)dlsym(xp->native.handle, MEMSIM_PLUGIN_ENTRY) };
	struct elf_functions self;
	char err[512];

	for (unsigned i = 0; i < 5; i++) {
		const char *name = name_at(xp, callbacks[i]);

		if (name)
			snprintf(xp->left_out[xp->nleft_out++], sizeof(xp->left_out[0]), "%s",
				 name);
	}
	if (!name_at(xp, (uintptr_t)p->run)) {
		snprintf(
			xp->cachegrind_why, sizeof(xp->cachegrind_why),
			"%.300s: its run() has no name in its symbol table (a stripped build?), so "
			"Cachegrind's counts of it cannot be picked out; build it unstripped, or "
			"--with callgrind",
			xp->native_path);
		return;
	}
	if (elf_functions_read("/proc/self/exe", &self, err, sizeof(err))) {
		snprintf(xp->cachegrind_why, sizeof(xp->cachegrind_why),
			 "cannot read memsim's own function names to tell them from the plugin's "
			 "(%.300s); --with callgrind",
			 err);
		return;
	}
	for (unsigned i = 0; i < xp->functions.n; i++) {
		const char *fn = xp->functions.f[i].name;

		if (!left_out(xp, fn) && elf_functions_has(&self, fn)) {
			snprintf(
				xp->cachegrind_why, sizeof(xp->cachegrind_why),
				"%.300s: its function '%.100s' has the name of one of memsim's own, and "
				"cachegrind.out names no objects to tell them apart; rename it, or "
				"--with callgrind",
				xp->native_path, fn);
			elf_functions_free(&self);
			return;
		}
	}
	elf_functions_free(&self);
	xp->cachegrind_ok = true;
}

int
xcheck_plugin_open(struct xcheck_plugin *xp, const struct kernel_options *o, char *err,
		   size_t errlen)
{
	memset(xp, 0, sizeof(*xp));
	if (plugin_native_path(o->plugin_path, xp->native_path, sizeof(xp->native_path))) {
		snprintf(err, errlen,
			 "--kernel %s: a plugin's name ends in .so (its native build is "
			 "NAME-native.so beside it)",
			 o->plugin_path);
		return EXIT_USAGE;
	}
	if (plugin_load(&xp->traced, o->plugin_path, false, err, errlen))
		return EXIT_USAGE;
	if (plugin_load(&xp->native, xp->native_path, true, err, errlen)) {
		plugin_unload(&xp->traced);
		return EXIT_USAGE;
	}
	if (elf_functions_read(xp->native_path, &xp->functions, err, errlen)) {
		xcheck_plugin_close(xp);
		return EXIT_USAGE;
	}
	if (!realpath(xp->native_path, xp->native_real))
		snprintf(xp->native_real, sizeof(xp->native_real), "%s", xp->native_path);
	cachegrind_check(xp);
	return 0;
}

void
xcheck_plugin_close(struct xcheck_plugin *xp)
{
	plugin_unload(&xp->traced);
	plugin_unload(&xp->native);
	elf_functions_free(&xp->functions);
}

bool
xcheck_plugin_cachegrind_keep(const char *object, const char *fn, void *arg)
{
	const struct xcheck_plugin *xp = arg;

	(void)object;
	return elf_functions_has(&xp->functions, fn) && !left_out(xp, fn);
}

bool
xcheck_plugin_callgrind_keep(const char *object, const char *fn, void *arg)
{
	const struct xcheck_plugin *xp = arg;
	char real[PATH_MAX];

	(void)fn;
	if (!object)
		return false;
	if (strcmp(object, xp->native_real) == 0)
		return true;
	/* Valgrind names the file as it was opened: another path to the same file. */
	return realpath(object, real) && strcmp(real, xp->native_real) == 0;
}

/* The plugin's formula against the flushed run on the Callgrind model: an estimate there (two
 * set-associative levels), of its DRAM arrays (its tiles are in memory here; the formula puts
 * them in scratch). */
void
xcheck_plugin_formula_row(struct xcheck *x, const struct evaluation *ev,
			  const struct xcheck_plugin *xp)
{
	struct xcheck_row *r = &x->rows[XCHECK_EXACT];
	uint64_t pred = 0, meas = 0;
	char size[64];

	for (unsigned i = 0; i < ev->pa.n; i++) {
		if (ev->pa.a[i].space != MEMSIM_SPACE_DRAM)
			continue;
		pred += ev->formula[i].read_bytes + ev->formula[i].write_bytes;
		meas += ev->measured[i].read_bytes + ev->measured[i].write_bytes;
	}
	r->shown = true;
	snprintf(r->source, sizeof(r->source), "%.32s's formula", xp->traced.p->name);
	snprintf(r->model, sizeof(r->model), "LL fully assoc. LRU");
	r->q[XCHECK_DRAM_BYTES] = (double)pred;
	r->basis[XCHECK_DRAM_BYTES] = (double)meas;
	r->tolerance = XCHECK_BYTES_TOLERANCE;
	r->ref = XCHECK_MEMSIM_CLG;
	snprintf(r->note, sizeof(r->note),
		 "the plugin's formula for its DRAM arrays with the LL (%s) as one fully "
		 "associative LRU cache, final flush included, against memsim's bytes of those "
		 "arrays with its flush: an estimate here (%s), exact only on the model "
		 "include/memsim/plugin.h names",
		 format_size_bytes(ev->spec.cache.level[1].size_bytes, size, sizeof(size)),
		 ev->scope_why);
}

int
xcheck_plugin_papi(struct xcheck *x, struct xcheck_plugin *xp, const struct kernel_options *o,
		   struct papi_report *rep, char *err, size_t errlen)
{
	struct spec host;
	struct evaluation ev;
	struct evaluation_job job = { .plugin = &xp->traced,
				      .params = &o->params,
				      .cfg = &o->cfg,
				      .spec = &host,
				      .mode = EVALUATION_SIMULATE };
	struct memsim_kernel_config kc;
	struct plugin_arrays pa;
	struct plugin_native_run run = { .pl = &xp->native, .kc = &kc, .pa = &pa };
	uint64_t line = 64, evict = 256ull << 20;
	int rc;

	if (xcheck_host_spec(x, &host) == 0) {
		if (evaluation_run(&ev, &job, err, errlen))
			return -1;
		xcheck_host_row(x, &host, ev.sim.cache, ev.sim.seconds, &line, &evict);
		evaluation_finish(&ev);
	}
	if (plugin_config(&xp->native, &o->cfg, &o->params, &kc, err, errlen) ||
	    plugin_arrays_create(&xp->native, &kc, &pa, err, errlen))
		return -1;
	rc = xcheck_papi_count(x, plugin_native_call, &run, line, evict, rep, err, errlen);
	if (rc == 0 && run.rc) {
		snprintf(err, errlen, "%s: %s", xp->native.p->name,
			 run.err[0] ? run.err : "run() failed");
		rc = -1;
	}
	plugin_arrays_destroy(&pa);
	return rc;
}
