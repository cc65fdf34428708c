/*
 * `memsim xcheck`: one kernel configuration measured by memsim and by tools memsim did not
 * write, side by side. memsim simulates the traced build under each tool's cache model;
 * Cachegrind and Callgrind run the native build of the same source (`memsim native`), and
 * PAPI counts the native run in this process.
 *
 *  Cachegrind  the per-function counts of the kernel's own functions (attn_*_native), read
 *              from cachegrind.out: set-up, fill and the cache-evicting sweep are left out.
 *  Callgrind   the region between client requests around the kernel (START flushes its
 *              caches: the region starts cold, as memsim's run does), with write-backs
 *              simulated, and once more with its hardware-prefetch model.
 *  PAPI        see measure/papi_count.h.
 */

#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/report.h"
#include "analysis/xcheck.h"
#include "base/progress.h"
#include "base/util.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/steps.h"
#include "cli/xcheck_plugin.h"
#include "cli/xcheck_rows.h"
#include "cli/xcheck_valgrind.h"
#include "measure/papi_count.h"
#include "measure/spawn.h"
#include "run/evaluate.h"

#if defined(HAVE_PAPI) && HAVE_PAPI
#define WITH_PAPI_BUILT 1
#else
#define WITH_PAPI_BUILT 0
#endif

void
usage_xcheck(FILE *f)
{
	fprintf(f,
		"Usage: memsim xcheck --kernel K [size options as for run] [--cache SPEC]\n"
		"                     [--with cachegrind,callgrind,papi] [--keep DIR] [--json FILE]\n"
		"\n"
		"Measures one configuration with memsim and with tools memsim did not write, and\n"
		"prints them side by side with each one's ratio to memsim:\n"
		"  the lab and exact formulas      against memsim's DRAM bytes\n"
		"  Cachegrind (kernel functions)   D1 and LL data misses, against memsim under\n"
		"                                  Cachegrind's model (no write-backs)\n"
		"  Callgrind (client requests)     D1, LL misses and LL write-backs, against memsim\n"
		"                                  under Callgrind's write-back model; once more\n"
		"                                  with its hardware-prefetch model\n"
		"  PAPI                            DRAM bytes from hardware counters on the native\n"
		"                                  run, against memsim on the host preset\n"
		"\n"
		"  --kernel PATH  a kernel plugin (docs/library.md): its traced build under the\n"
		"                 tools' models, PATH-native.so under the tools, counted for its own\n"
		"                 functions; --param KEY=VALUE as for run\n"
		"  --cache SPEC   D1 and LL (and I1) for the Valgrind tools and memsim: two LRU data\n"
		"                 levels [cachegrind]; policy words are set per tool\n"
		"  --with LIST    tools to run [cachegrind,callgrind%s]\n"
		"  --keep DIR     keep the tools' output files in DIR (default: a temporary\n"
		"                 directory in $TMPDIR, removed unless a tool fails)\n"
		"  --json FILE    also write the table as JSON\n"
		"\n"
		"MEMSIM_VALGRIND names the valgrind program [valgrind on PATH]. Interrupted\n"
		"(SIGINT, SIGTERM), xcheck stops valgrind, removes its temporary directory and\n"
		"exits 1.\n",
		WITH_PAPI_BUILT ? ",papi" : "");
}

/* --with LIST into the unsigned at dest. */
static int
with_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	unsigned *with = opt->dest;
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", arg);
	*with = 0;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "cachegrind") == 0)
			*with |= WITH_CACHEGRIND;
		else if (strcmp(tok, "callgrind") == 0)
			*with |= WITH_CALLGRIND;
		else if (strcmp(tok, "papi") == 0)
			*with |= WITH_PAPI;
		else
			return usage_error(
				cmd, "--with: unknown tool '%s' (cachegrind, callgrind, papi)",
				tok);
	}
	if (!*with)
		return usage_error(cmd, "--with: no tool named");
	return 0;
}

/* Bytes of the tiles the kernel's innermost loop sweeps per query row (K and V tiles plus the
 * rows it updates): when they fill D1, its misses depend on every other line in use. */
static uint64_t
inner_tile_bytes(const struct attn_config *c)
{
	switch (c->kernel) {
	case ATTN_FLASH1:
	case ATTN_FLASH2:
	case ATTN_FLASHDECODE:
		return (2 * c->Bc * c->d + 2 * c->d + c->Bc) * 4;
	default:
		return (c->Bc * c->d + c->d + c->Bc) * 4;
	}
}

static void
memsim_row(const struct evaluation *st, bool callgrind, struct xcheck_row *row)
{
	xcheck_memsim_row(st->sim.cache, st->spec.cache.level[1].line_bytes, st->sim.seconds,
			  callgrind, row);
}

static void
formula_rows(struct xcheck *x, const struct evaluation *clg)
{
	const struct compare_total *lab = &clg->cmp.lab, *ex = &clg->cmp.exact;
	struct xcheck_row *r;

	if (lab->applicable) {
		r = &x->rows[XCHECK_LAB];
		r->shown = true;
		snprintf(r->source, sizeof(r->source), "lab formula");
		snprintf(r->model, sizeof(r->model), "no cache below tiles");
		r->q[XCHECK_DRAM_BYTES] = lab->predicted;
		r->basis[XCHECK_DRAM_BYTES] = lab->measured;
		r->tolerance = lab->tolerance;
		r->ref = XCHECK_MEMSIM_CLG;
		snprintf(r->note, sizeof(r->note), "against %s%s%s", lab->basis,
			 lab->within ? "" : "; ", lab->within ? "" : lab->why_not);
	}
	r = &x->rows[XCHECK_EXACT];
	r->shown = true;
	snprintf(r->source, sizeof(r->source), "exact formula");
	snprintf(r->model, sizeof(r->model), "LL fully assoc. LRU");
	r->q[XCHECK_DRAM_BYTES] = ex->predicted;
	r->basis[XCHECK_DRAM_BYTES] = ex->measured;
	r->tolerance = ex->tolerance;
	r->ref = XCHECK_MEMSIM_CLG;
	snprintf(r->note, sizeof(r->note),
		 "every array's DRAM bytes with the LL as a fully associative LRU cache, final "
		 "flush included, against memsim's with its flush%s%s",
		 ex->within ? "" : "; ", ex->within ? "" : ex->why_not);
}

static void add_note(struct xcheck *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
add_note(struct xcheck *x, const char *fmt, ...)
{
	va_list ap;

	if (x->nnotes >= sizeof(x->notes) / sizeof(x->notes[0]))
		return;
	va_start(ap, fmt);
	vsnprintf(x->notes[x->nnotes++], sizeof(x->notes[0]), fmt, ap);
	va_end(ap);
}

/* Removes the files this command wrote into dir, then dir if we made it. */
static void
cleanup_dir(const char *dir, bool made)
{
	static const char *const names[] = {
		"cachegrind.out",       "cachegrind.log",          "cachegrind.stdout",
		"callgrind.out",        "callgrind.out.1",         "callgrind.log",
		"callgrind.stdout",     "callgrind-hwpref.out",    "callgrind-hwpref.out.1",
		"callgrind-hwpref.log", "callgrind-hwpref.stdout",
	};
	char path[1200];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	if (made)
		rmdir(dir);
}

static void
run_native(void *arg)
{
	attn_run_native(arg);
}

/* memsim on the host preset (what a hardware counter would see: no final flush) and the
 * native kernel counted by PAPI in this process, cold as the simulated run is. Returns 0, or
 * -1 with a message when the run itself could not be made. */
static int
papi_rows(struct xcheck *x, const struct kernel_options *o, struct papi_report *rep, char *err,
	  size_t errlen)
{
	struct spec host;
	struct evaluation st;
	struct evaluation_job job = {
		.cfg = &o->cfg, .spec = &host, .seed = o->seed, .mode = EVALUATION_SIMULATE
	};
	struct attn_data *d;
	uint64_t line = 64, evict = 256ull << 20;
	int rc;

	if (xcheck_host_spec(x, &host) == 0) {
		if (evaluation_run(&st, &job, err, errlen))
			return -1;
		xcheck_host_row(x, &host, st.sim.cache, st.sim.seconds, &line, &evict);
		evaluation_finish(&st);
	}
	d = attn_data_create(&o->cfg, err, errlen);
	if (!d)
		return -1;
	attn_data_fill(d, o->seed);
	rc = xcheck_papi_count(x, run_native, d, line, evict, rep, err, errlen);
	attn_data_destroy(d);
	return rc;
}

/* The table's header: the configuration (a plugin's name, path and params), the tools'
 * geometry and arguments. */
static void
table_header(struct xcheck *x, const struct kernel_options *o, const struct geometry *g)
{
	char a[64], b[64], c[64];

	kernel_config_str(&o->cfg, x->config, sizeof(x->config));
	if (o->plugin_path) {
		char rest[sizeof(x->config)];
		const char *sp = strchr(x->config, ' ');

		snprintf(rest, sizeof(rest), "%s", sp ? sp : "");
		snprintf(x->config, sizeof(x->config), "plugin %.60s%.90s", o->plugin_path, rest);
		for (unsigned i = 0; i < o->params.n; i++)
			snprintf(x->config + strlen(x->config),
				 sizeof(x->config) - strlen(x->config), " %s", o->params.given[i]);
	}
	snprintf(x->geometry, sizeof(x->geometry), "I1=%s D1=%s LL=%s%s",
		 format_size_bytes(g->i1.size_bytes, a, sizeof(a)),
		 format_size_bytes(g->d1.size_bytes, b, sizeof(b)),
		 format_size_bytes(g->ll.size_bytes, c, sizeof(c)),
		 g->i1_given ? "" : " (I1 not in --cache: D1's geometry)");
	snprintf(x->geometry + strlen(x->geometry), sizeof(x->geometry) - strlen(x->geometry),
		 ", ways %u/%u/%u, lines %u/%u/%u B", g->i1.assoc, g->d1.assoc, g->ll.assoc,
		 g->i1.line_bytes, g->d1.line_bytes, g->ll.line_bytes);
	snprintf(x->valgrind_args, sizeof(x->valgrind_args), "%s %s %s", g->args[0], g->args[1],
		 g->args[2]);
}

/* The valgrind program, this executable, and what `memsim native` is given and the tools'
 * files are read for. Tools are checked first, so a missing one stops us before anything
 * runs. Returns 0, or EXIT_RUNTIME / EXIT_USAGE after one line. */
static int
tools_ready(struct run_ctx *r, unsigned with, const struct kernel_options *o,
	    const struct geometry *g, struct xcheck_plugin *xp)
{
	ssize_t n;

	if (with & (WITH_CACHEGRIND | WITH_CALLGRIND)) {
		const char *vg = getenv("MEMSIM_VALGRIND");
		static char path[4096];

		if (!spawn_find(vg && *vg ? vg : "valgrind", path, sizeof(path)))
			return print_error("xcheck: %s not found%s (install the valgrind package, "
					   "or leave cachegrind and callgrind out of --with)",
					   vg && *vg ? vg : "valgrind",
					   vg && *vg ? "" : " on PATH");
		r->valgrind = path;
	}
	if ((with & WITH_PAPI) && !WITH_PAPI_BUILT)
		return print_error("xcheck: --with papi: this memsim was built without PAPI "
				   "(install libpapi-dev, then rebuild)");
	n = readlink("/proc/self/exe", r->self, sizeof(r->self) - 1);
	if (n <= 0)
		return print_error("xcheck: cannot find the memsim executable (/proc/self/exe)");
	r->self[n] = '\0';
	kernel_config_argv(&o->cfg, o->seed, &r->kargs);
	/* Twice the LL evicts every line of an LRU LL before the kernel starts. */
	snprintf(r->evict, sizeof(r->evict), "%llu", (unsigned long long)(2 * g->ll.size_bytes));
	r->cachegrind_keep = r->callgrind_keep = xcheck_kernel_function;
	snprintf(r->cachegrind_what, sizeof(r->cachegrind_what),
		 "the kernel's functions (attn_*_native)");
	snprintf(r->callgrind_what, sizeof(r->callgrind_what), "%s", r->cachegrind_what);
	if (!xp)
		return 0;
	if ((with & WITH_CACHEGRIND) && !xp->cachegrind_ok)
		return usage_error("xcheck", "--kernel %s", xp->cachegrind_why);
	r->kargs.argv[1] = (char *)o->plugin_path;
	for (unsigned i = 0; i < o->params.n; i++)
		r->params[r->nparams++] = o->params.given[i];
	r->cachegrind_keep = xcheck_plugin_cachegrind_keep;
	r->callgrind_keep = xcheck_plugin_callgrind_keep;
	r->keep_arg = xp;
	snprintf(r->cachegrind_what, sizeof(r->cachegrind_what),
		 "the functions %.300s's symbol table names (%u; its check, arrays, flops, formula "
		 "and entry aside: they run before the kernel)",
		 xp->native_path, xp->functions.n);
	snprintf(r->callgrind_what, sizeof(r->callgrind_what), "every function in %.300s",
		 xp->native_path);
	return 0;
}

/* memsim's rows under each tool's model, and the formulas'. Returns 0, or EXIT_USAGE /
 * EXIT_RUNTIME with a one-line message in err. */
static int
memsim_rows(struct xcheck *x, const struct kernel_options *o, const struct spec *cg_spec,
	    const struct spec *clg_spec, struct xcheck_plugin *xp, char *err, size_t errlen)
{
	struct xcheck_row *cg = &x->rows[XCHECK_MEMSIM_CG], *clg = &x->rows[XCHECK_MEMSIM_CLG];
	struct evaluation_job job = { .plugin = xp ? &xp->traced : NULL,
				      .params = &o->params,
				      .cfg = &o->cfg,
				      .spec = cg_spec,
				      .seed = o->seed,
				      .mode = EVALUATION_SIMULATE };
	struct evaluation st;
	char buf[512];
	int rc;

	if ((rc = evaluation_run(&st, &job, err, errlen)))
		return rc == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	memsim_row(&st, false, cg);
	evaluation_finish(&st);
	/* Flushed, for the formulas; the row's write-backs leave the flush out. */
	job.spec = clg_spec;
	job.flush = true;
	if ((rc = evaluation_run(&st, &job, err, errlen)))
		return rc == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	if (!xp)
		formula_rows(x, &st);
	else if (st.have_formula)
		xcheck_plugin_formula_row(x, &st, xp);
	memsim_row(&st, true, clg);
	evaluation_finish(&st);
	cg->shown = clg->shown = true;
	snprintf(cg->source, sizeof(cg->source), "memsim");
	snprintf(cg->model, sizeof(cg->model), "Cachegrind's");
	snprintf(cg->note, sizeof(cg->note), "traced run on %s",
		 spec_format(cg_spec, buf, sizeof(buf)));
	snprintf(clg->source, sizeof(clg->source), "memsim");
	snprintf(clg->model, sizeof(clg->model), "Callgrind's");
	snprintf(clg->note, sizeof(clg->note),
		 "traced run on %s; write-backs and DRAM bytes without the final flush",
		 spec_format(clg_spec, buf, sizeof(buf)));
	return 0;
}

/* The tools' directory: --keep's, or a new one in $TMPDIR (*made). Returns 0, or -1 after one
 * line. */
static int
tools_dir(const char *keep_dir, char *dir, size_t len, bool *made)
{
	const char *tmp = getenv("TMPDIR");

	if (keep_dir) {
		int e = mkdir_p(keep_dir);

		if (e) {
			print_error("xcheck: --keep: cannot create %s: %s", keep_dir, strerror(-e));
			return -1;
		}
		snprintf(dir, len, "%s", keep_dir);
		return 0;
	}
	if (tmp && strlen(tmp) > 900)
		tmp = NULL;
	snprintf(dir, len, "%s/memsim-xcheck-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		print_error("xcheck: cannot create a directory in %s: %s",
			    tmp && *tmp ? tmp : "/tmp", strerror(errno));
		dir[0] = '\0';
		return -1;
	}
	*made = true;
	return 0;
}

static void
tool_row(struct xcheck *x, enum xcheck_source s, int ref, const char *source, const char *model)
{
	struct xcheck_row *row = &x->rows[s];

	row->shown = true;
	row->ref = ref;
	snprintf(row->source, sizeof(row->source), "%s", source);
	snprintf(row->model, sizeof(row->model), "%s", model);
}

/* The tools --with names, into x (PAPI's report into *papi). Returns 0, or -1 with a one-line
 * message in err. */
static int
tool_rows(struct xcheck *x, struct run_ctx *r, const struct geometry *g, unsigned with,
	  const struct kernel_options *o, struct xcheck_plugin *xp, struct papi_report *papi,
	  char *err, size_t errlen)
{
	struct xcheck_row *row;
	/* The progress line counts the tools' runs (valgrind's: minutes each). */
	const unsigned runs =
		!!(with & WITH_CACHEGRIND) + 2 * !!(with & WITH_CALLGRIND) + !!(with & WITH_PAPI);
	unsigned done = 0;

	progress_begin("xcheck");
	progress_report(0, 0, runs, "tool runs");
	if (with & WITH_CACHEGRIND) {
		tool_row(x, XCHECK_CACHEGRIND, XCHECK_MEMSIM_CG, "Cachegrind", "Cachegrind's");
		if (xcheck_run_cachegrind(r, g, &x->rows[XCHECK_CACHEGRIND], err, errlen))
			goto failed;
		done++;
		progress_report((double)done / runs, done, runs, "tool runs");
	}
	if (with & WITH_CALLGRIND) {
		row = &x->rows[XCHECK_CALLGRIND];
		tool_row(x, XCHECK_CALLGRIND, XCHECK_MEMSIM_CLG, "Callgrind", "Callgrind's");
		if (xcheck_run_callgrind(r, g, false, row, err, errlen))
			goto failed;
		done++;
		progress_report((double)done / runs, done, runs, "tool runs");
		tool_row(x, XCHECK_CALLGRIND_PF, -1, "Callgrind + hw prefetch",
			 "Callgrind's + prefetch");
		if (xcheck_run_callgrind(r, g, true, &x->rows[XCHECK_CALLGRIND_PF], err, errlen))
			goto failed;
		xcheck_callgrind_prefetch_note(&x->rows[XCHECK_CALLGRIND_PF], row);
		done++;
		progress_report((double)done / runs, done, runs, "tool runs");
	}
	if (with & WITH_PAPI) {
		if (xp ? xcheck_plugin_papi(x, xp, o, papi, err, errlen)
		       : papi_rows(x, o, papi, err, errlen))
			goto failed;
	}
	progress_end();
	if (!xp && inner_tile_bytes(&o->cfg) + 2048 > g->d1.size_bytes)
		add_note(
			x,
			"the inner loop sweeps %.1f KiB of tiles per query row, which fills the "
			"%.0f KiB D1: which sets overflow then depends on the few lines the "
			"compiler's register spills and constant loads keep hot, which a "
			"C-level trace cannot see, so D1 misses differ (LL misses do not); smaller "
			"tiles (--Bc 32) leave room",
			inner_tile_bytes(&o->cfg) / 1024.0, g->d1.size_bytes / 1024.0);
	return 0;
failed:
	progress_end(); /* the message goes on a line of its own */
	return -1;
}

/* The JSON report of x. Returns 0, or EXIT_RUNTIME after one line. */
static int
write_json(const struct xcheck *x, const struct kernel_options *o, const struct spec *cg_spec,
	   const struct xcheck_plugin *xp, const struct papi_report *papi, int argc, char **argv)
{
	cJSON *root = cJSON_CreateObject();
	char err[1024];
	int rc = EXIT_OK;

	report_add_header(root, argc, argv);
	report_add_config(root, &o->cfg, cg_spec, false, o->seed);
	if (xp)
		plugin_config_json(cJSON_GetObjectItemCaseSensitive(root, "config"), &xp->traced,
				   &o->params);
	xcheck_add_json(root, x);
	if (papi)
		papi_report_json(papi, cJSON_AddObjectToObject(root, "papi"));
	if (report_write_json(o->json_path, root, err, sizeof(err)))
		rc = print_error("xcheck: %s", err);
	cJSON_Delete(root);
	return rc;
}

int
xcheck_into(const struct kernel_options *o, const struct spec *spec, unsigned with,
	    const char *keep_dir, FILE *table, int argc, char **argv)
{
	struct xcheck x;
	struct geometry g;
	struct spec cg_spec, clg_spec;
	struct run_ctx r;
	struct xcheck_plugin plugin, *xp = NULL;
	char dir[1024] = "", err[4096] = "";
	bool made_dir = false;
	struct papi_report papi;
	int rc, sig;

	memset(&r, 0, sizeof(r));
	xcheck_init(&x);
	xcheck_geometry_from_spec(spec, &g);
	xcheck_model_spec(spec, false, &cg_spec);
	xcheck_model_spec(spec, true, &clg_spec);
	table_header(&x, o, &g);
	if (o->plugin_path) {
		if ((rc = xcheck_plugin_open(&plugin, o, err, sizeof(err))))
			return usage_error("xcheck", "%s", err);
		xp = &plugin;
	}
	if ((rc = tools_ready(&r, with, o, &g, xp)) ||
	    (rc = memsim_rows(&x, o, &cg_spec, &clg_spec, xp, err, sizeof(err)))) {
		if (err[0])
			print_error("xcheck: %s", err);
		goto out;
	}
	rc = EXIT_RUNTIME;
	/* From here valgrind's files exist: SIGINT and SIGTERM stop valgrind and remove them
	 * rather than end us with the files left behind. */
	spawn_guard_begin();
	if (tools_dir(keep_dir, dir, sizeof(dir), &made_dir))
		goto out;
	r.dir = dir;
	if (tool_rows(&x, &r, &g, with, o, xp, &papi, err, sizeof(err))) {
		/* An interrupted tool's failure is the interrupt's: one line below says so. */
		if (!spawn_guard_signal())
			print_error("xcheck: %s", err);
		goto out;
	}
	/* Interrupted where nothing was waiting for a signal (reading a tool's output, PAPI's
	 * run): the table is not printed. */
	if (spawn_guard_signal())
		goto out;
	if (table)
		xcheck_print(table, &x);
	rc = o->json_path
		     ? write_json(&x, o, &cg_spec, xp, with & WITH_PAPI ? &papi : NULL, argc, argv)
		     : EXIT_OK;
out:
	if (xp)
		xcheck_plugin_close(xp);
	sig = spawn_guard_signal();
	/* After a tool failed its files stay: the message named them. After an interrupt they
	 * go (but a --keep directory's). */
	if (dir[0] && !keep_dir && (!r.failed_keep || sig))
		cleanup_dir(dir, made_dir);
	spawn_guard_end();
	if (sig) {
		print_error("xcheck: interrupted by signal %d: %s%s", sig,
			    keep_dir ? "the files so far are in " : "removed ", dir);
		rc = EXIT_RUNTIME;
	}
	return rc;
}

static int
keep_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	if (strlen(arg) > 900)
		return usage_error(cmd, "--keep: the path is longer than 900 bytes");
	*(const char **)opt->dest = arg;
	return 0;
}

int
cmd_xcheck(int argc, char **argv)
{
	unsigned with = WITH_CACHEGRIND | WITH_CALLGRIND | (WITH_PAPI_BUILT ? WITH_PAPI : 0);
	const char *keep = NULL;
	const struct optparse_option extra[] = {
		{ "with", 0, OPTPARSE_CALL, .dest = &with, .call = with_value },
		{ "keep", 0, OPTPARSE_CALL, .dest = &keep, .call = keep_value },
		{ .name = NULL },
	};
	const struct kernel_command cmd = { "xcheck", usage_xcheck, extra };
	struct kernel_options o;
	struct spec spec;
	const char *bad;
	int rc;

	kernel_options_init(&o);
	o.cache_text = "cachegrind";
	o.plugins_ok = true;
	if ((rc = kernel_options_parse(&o, &spec, &cmd, argc, argv)))
		return rc == OPTPARSE_HELP_SHOWN ? EXIT_OK : rc;
	if ((bad = xcheck_geometry_check(&spec)))
		return usage_error("xcheck", "--cache %s: %s", o.cache_text, bad);
	return xcheck_into(&o, &spec, with, keep, text_stream(o.json_path), argc, argv);
}
