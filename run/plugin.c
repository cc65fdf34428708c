/*
 * Kernel plugins: dlopen() a user's kernel, check its description against this memsim's ABI,
 * and run it through the cache model over arrays memsim maps for it.
 */

#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MEMSIM_NO_TR_MACROS
#include "api/api.h"
#include "base/utf8.h"
#include "base/util.h"
#include "run/plugin.h"
#include "run/simulate.h"

#define ARENA_ALIGN (UINT64_C(1) << 30)
#define ARENA_PAGE UINT64_C(4096)

/* The plugin (its name, or its path before it has one) and the callback memsim is in, NULL
 * outside one: exit_guard() tells a plugin's exit() from memsim's own. Plugins run on one
 * thread. */
static const char *calling_who, *calling_what;

/* At exit: a plugin that calls exit() ends memsim before its run finished, which must not read
 * as a success (exit(0) would leave status 0 and no report). */
static void
exit_guard(void)
{
	char who[256];

	if (!calling_what)
		return;
	fprintf(stderr, "memsim: %s: its %s called exit(): the run did not finish\n",
		utf8_printable(calling_who, strlen(calling_who), who, sizeof(who)), calling_what);
	_exit(EXIT_FAILURE); /* 1, a runtime failure's status */
}

static void
call_enter(const char *who, const char *what)
{
	calling_who = who;
	calling_what = what;
}

static void
call_leave(void)
{
	calling_what = NULL;
}

/* "NAME: message" into err: the message a callback left in why (size bytes, which it may have
 * filled without a NUL) as one printable line, or dflt where it left none. */
static void
plugin_message(const struct plugin *pl, const char *why, size_t size, const char *dflt, char *err,
	       size_t errlen)
{
	char line[512];

	snprintf(err, errlen, "%s: %s", pl->p->name,
		 why[0] ? utf8_printable(why, size, line, sizeof(line)) : dflt);
}

bool
plugin_path_like(const char *s)
{
	size_t n = strlen(s);

	return strchr(s, '/') || (n > 3 && strcmp(s + n - 3, ".so") == 0);
}

bool
plugin_in_list(const char *s)
{
	char *copy, *item, *save = NULL;
	struct stat st;
	bool list = false;

	if (!plugin_path_like(s) || !strchr(s, ',') || stat(s, &st) == 0)
		return false;
	copy = xstrdup(s);
	for (item = strtok_r(copy, ",", &save); item && !list; item = strtok_r(NULL, ",", &save)) {
		enum attn_kernel k;

		list = attn_kernel_parse(item, &k) ||
		       (plugin_path_like(item) && stat(item, &st) == 0);
	}
	free(copy);
	return list;
}

int
plugin_params_add(struct plugin_params *pp, const char *kv, char *err, size_t errlen)
{
	const char *eq = strchr(kv, '=');
	size_t klen = eq ? (size_t)(eq - kv) : 0;

	if (!eq || klen == 0) {
		snprintf(err, errlen, "--param: '%s' is not key=value", kv);
		return -1;
	}
	if (klen >= sizeof(pp->keys[0])) {
		snprintf(err, errlen, "--param: key '%.*s...' is longer than %zu bytes", 16, kv,
			 sizeof(pp->keys[0]) - 1);
		return -1;
	}
	for (unsigned i = 0; i < pp->n; i++)
		if (strlen(pp->keys[i]) == klen && memcmp(pp->keys[i], kv, klen) == 0) {
			snprintf(err, errlen, "--param: '%s' given twice", pp->keys[i]);
			return -1;
		}
	if (pp->n == PLUGIN_MAX_PARAMS) {
		snprintf(err, errlen, "--param: more than %d", PLUGIN_MAX_PARAMS);
		return -1;
	}
	memcpy(pp->keys[pp->n], kv, klen);
	pp->keys[pp->n][klen] = '\0';
	pp->given[pp->n] = kv;
	pp->values[pp->n++] = eq + 1;
	return 0;
}

/* Whether s is one printable line of UTF-8: what utf8_printable() leaves as it is. */
static bool
printable(const char *s)
{
	size_t n = strlen(s);
	char *line = xzalloc(4 * n + 1);
	bool same = strcmp(utf8_printable(s, n, line, 4 * n + 1), s) == 0;

	free(line);
	return same;
}

/* What a loaded description lacks, or NULL. */
static const char *
plugin_defect(const struct memsim_kernel_plugin *p, char *buf, size_t len)
{
	/* The fields up to formula are what this memsim reads. */
	size_t need = offsetof(struct memsim_kernel_plugin, formula) + sizeof(p->formula);

	if (p->abi != MEMSIM_PLUGIN_ABI) {
		snprintf(buf, len, "built for plugin ABI %u, this memsim takes %d",
			 (unsigned)p->abi, MEMSIM_PLUGIN_ABI);
		return buf;
	}
	if (p->size < need) {
		snprintf(buf, len, "its description is %u bytes, plugin ABI %d needs %zu",
			 (unsigned)p->size, MEMSIM_PLUGIN_ABI, need);
		return buf;
	}
	if (!p->name || !p->name[0])
		return "it has no name";
	if (!printable(p->name))
		return "its name is not printable UTF-8 (a control character, or bytes that are "
		       "not UTF-8)";
	if (!p->arrays)
		return "it has no arrays() callback";
	if (!p->run)
		return "it has no run() callback";
	return NULL;
}

/* What a file of mode m is where it is not a regular file, or NULL. */
static const char *
file_kind(mode_t m)
{
	return S_ISREG(m)    ? NULL
	       : S_ISDIR(m)  ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
			     : "not a regular file";
}

/* Whether p lies in a mapping of this process that may be executed, as /proc/self/maps says;
 * true where that cannot be read (nothing to check against). */
static bool
address_executable(const void *p)
{
	FILE *f = fopen("/proc/self/maps", "r");
	uintptr_t a = (uintptr_t)p;
	char *line = NULL;
	size_t cap = 0;
	bool found = false, exec = false;

	if (!f)
		return true;
	while (!found && getline(&line, &cap, f) > 0) {
		unsigned long long lo, hi;
		char perms[5];

		if (sscanf(line, "%llx-%llx %4s", &lo, &hi, perms) == 3 && a >= lo && a < hi) {
			found = true;
			exec = perms[2] == 'x';
		}
	}
	free(line);
	fclose(f);
	return exec;
}

/* The description the entry returns, or NULL with why: an entry that is not code (a data
 * symbol of that name) is never called. */
static const struct memsim_kernel_plugin *
call_entry(void *h, const char *path, const char **why)
{
	const struct memsim_kernel_plugin *(*entry)(void);
	const struct memsim_kernel_plugin *p;
	void *sym = dlsym(h, MEMSIM_PLUGIN_ENTRY);

	if (!sym) {
		*why = "not a memsim plugin: no " MEMSIM_PLUGIN_ENTRY;
		return NULL;
	}
	if (!address_executable(sym)) {
		*why = "not a memsim plugin: its " MEMSIM_PLUGIN_ENTRY " is not a function (a data "
		       "symbol: define it with MEMSIM_PLUGIN())";
		return NULL;
	}
	*(void **)&entry = sym;
	call_enter(path, MEMSIM_PLUGIN_ENTRY "()");
	p = entry();
	call_leave();
	if (!p)
		*why = "its entry returned NULL";
	return p;
}

/* The libmemsim.so.N installed with this memsim (MEMSIM_LIB_FROM_BIN, from the executable's
 * directory), else the one a build tree holds beside its executable, loaded by absolute path:
 * a plugin linked with `pkg-config --libs memsim` needs it, and a prefix of one's own is not on
 * the loader's path. The plugin's DT_NEEDED is then met by soname, and its memsim_* calls still
 * bind to this executable's copies, which come first in the lookup. Returns true if loaded;
 * tried is the installed path. The library stays loaded for the process. */
static bool
preload_library(char *tried, size_t len)
{
	const char *rel = MEMSIM_LIB_FROM_BIN, *soname = strrchr(rel, '/') + 1;
	char exe[4096], beside[4200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	exe[n > 0 ? n : 0] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	if (rel[0] == '/')
		snprintf(tried, len, "%s", rel);
	else
		snprintf(tried, len, "%s/%s", exe, rel);
	snprintf(beside, sizeof(beside), "%s/%s", exe, soname);
	return (n > 0 && dlopen(tried, RTLD_NOW | RTLD_LOCAL)) ||
	       (n > 0 && dlopen(beside, RTLD_NOW | RTLD_LOCAL));
}

int
plugin_load(struct plugin *pl, const char *path, bool native, char *err, size_t errlen)
{
	static bool guarded;
	const char *why = NULL, *kind;
	char buf[256], *here;
	struct stat st;
	void *h;

	memset(pl, 0, sizeof(*pl));
	if (!guarded)
		guarded = atexit(exit_guard) == 0;
	/* "x.so" is the file here, not a library dlopen() would look for on its search path. */
	here = xzalloc(strlen(path) + 3);
	sprintf(here, "%s%s", strchr(path, '/') ? "" : "./", path);
	/* dlopen() opens what it is given: a FIFO would block it, a device feed it. What cannot
	 * be stat()ed is left to dlopen(), whose message names why. */
	if (stat(here, &st) == 0 && (kind = file_kind(st.st_mode))) {
		snprintf(err, errlen, "--kernel: %s: %s, not a shared object file", path, kind);
		free(here);
		return -1;
	}
	dlerror();
	h = dlopen(here, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *soname = strrchr(MEMSIM_LIB_FROM_BIN, '/') + 1, *e = dlerror();
		char first[1024], tried[4400] = "";
		bool needs_lib;

		snprintf(first, sizeof(first), "%s", e ? e : path);
		needs_lib = strstr(first, soname) != NULL;
		if (needs_lib && preload_library(tried, sizeof(tried)))
			h = dlopen(here, RTLD_NOW | RTLD_LOCAL);
		e = h ? NULL : dlerror();
		if (!h && needs_lib && strstr(first, "cannot open shared object file"))
			snprintf(
				err, errlen,
				"--kernel: %s needs %s (it was linked with `pkg-config --libs "
				"memsim`), which is neither on the loader's path nor at %s: a plugin "
				"takes memsim_* from the memsim executable, so build it with "
				"`pkg-config --cflags memsim` alone",
				path, soname, tried);
		else if (!h)
			snprintf(err, errlen, "--kernel: cannot load %s", e ? e : first);
		if (!h) {
			free(here);
			return -1;
		}
	}
	free(here);
	pl->p = call_entry(h, path, &why);
	if (pl->p)
		why = plugin_defect(pl->p, buf, sizeof(buf));
	if (!why && (pl->p->native != 0) != native)
		why = native ? "a traced build where the native one is needed (build it with "
			       "-DMEMSIM_NATIVE)"
			     : "a native build (-DMEMSIM_NATIVE) where the traced one is needed";
	if (why) {
		snprintf(err, errlen, "--kernel: %s: %s", path, why);
		dlclose(h);
		return -1;
	}
	pl->handle = h;
	pl->path = path;
	return 0;
}

void
plugin_unload(struct plugin *pl)
{
	if (pl->handle)
		dlclose(pl->handle);
	memset(pl, 0, sizeof(*pl));
}

int
plugin_native_path(const char *path, char *buf, size_t len)
{
	size_t n = strlen(path);

	if (n < 3 || strcmp(path + n - 3, ".so") != 0)
		return -1;
	if ((size_t)snprintf(buf, len, "%.*s-native.so", (int)(n - 3), path) >= len)
		return -1;
	return 0;
}

static bool
param_known(const struct memsim_kernel_plugin *p, const char *key)
{
	for (const char *const *k = p->params; k && *k; k++)
		if (strcmp(*k, key) == 0)
			return true;
	return false;
}

static void
param_list(const struct memsim_kernel_plugin *p, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (const char *const *k = p->params; k && *k && off < len; k++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", *k);
	if (!buf[0])
		snprintf(buf, len, "none");
}

int
plugin_params_check(const struct plugin *pl, const struct plugin_params *pp, char *err,
		    size_t errlen)
{
	char list[256];

	for (unsigned i = 0; i < pp->n; i++)
		if (!param_known(pl->p, pp->keys[i])) {
			param_list(pl->p, list, sizeof(list));
			snprintf(err, errlen, "--param: %s takes no '%s' (it takes: %s)",
				 pl->p->name, pp->keys[i], list);
			return -1;
		}
	return 0;
}

int
plugin_config(const struct plugin *pl, const struct attn_config *c, const struct plugin_params *pp,
	      struct memsim_kernel_config *out, char *err, size_t errlen)
{
	static const char *keys[PLUGIN_MAX_PARAMS];
	char why[512] = "";

	if (plugin_params_check(pl, pp, err, errlen))
		return -1;
	for (unsigned i = 0; i < pp->n; i++)
		keys[i] = pp->keys[i];
	memset(out, 0, sizeof(*out));
	out->N = c->N;
	out->d = c->d;
	out->heads = c->heads;
	out->kv_heads = c->kv_heads;
	out->batch = c->batch;
	out->Br = c->Br;
	out->Bc = c->Bc;
	out->dtype = c->dtype == ATTN_FP16   ? MEMSIM_FP16
		     : c->dtype == ATTN_BF16 ? MEMSIM_BF16
					     : MEMSIM_FP32;
	out->dtype_bytes = c->dtype == ATTN_FP32 ? 4 : 2;
	out->causal = c->causal;
	out->nparams = pp->n;
	out->param_keys = keys;
	out->param_values = pp->values;
	if (pl->p->check) {
		int rc;

		call_enter(pl->p->name, "check()");
		rc = pl->p->check(out, why, sizeof(why));
		call_leave();
		if (rc) {
			plugin_message(pl, why, sizeof(why), "configuration refused", err, errlen);
			return -1;
		}
	}
	return 0;
}

/* Whether the plugin's arrays can be told apart in every table, CSV and JSON: each named, in
 * one printable line of UTF-8, no two alike, in a space memsim knows. Returns 0, or -1 with a
 * message naming the plugin and the array. */
static int
arrays_check(const struct plugin *pl, const struct plugin_arrays *pa, char *err, size_t errlen)
{
	char shown[4 * sizeof(pa->a[0].name)];

	for (unsigned i = 0; i < pa->n; i++) {
		const struct memsim_kernel_array *a = &pa->a[i];
		const char *name = a->name;

		utf8_printable(name, sizeof(a->name), shown, sizeof(shown));
		if (!name[0]) {
			snprintf(err, errlen, "%s: arrays(): array %u has no name", pl->p->name,
				 i + 1);
			return -1;
		}
		if (strcmp(shown, name) != 0) {
			snprintf(err, errlen,
				 "%s: arrays(): array name '%s' is not printable UTF-8 (a control "
				 "character, or bytes that are not UTF-8)",
				 pl->p->name, shown);
			return -1;
		}
		for (unsigned j = 0; j < i; j++)
			if (strcmp(pa->a[j].name, name) == 0) {
				snprintf(err, errlen, "%s: arrays(): two arrays named '%s'",
					 pl->p->name, name);
				return -1;
			}
		if (a->space != MEMSIM_SPACE_DRAM && a->space != MEMSIM_SPACE_SCRATCH &&
		    a->space != MEMSIM_SPACE_TILE) {
			snprintf(err, errlen,
				 "%s: arrays(): array '%s' has space %d, not MEMSIM_SPACE_DRAM, "
				 "_SCRATCH or _TILE",
				 pl->p->name, name, (int)a->space);
			return -1;
		}
	}
	return 0;
}

int
plugin_arrays_create(const struct plugin *pl, const struct memsim_kernel_config *kc,
		     struct plugin_arrays *pa, char *err, size_t errlen)
{
	uint64_t total = 0, avail, off = 0;
	const char *what;
	char why[512] = "";
	char *map;
	int n, fd;

	memset(pa, 0, sizeof(*pa));
	call_enter(pl->p->name, "arrays()");
	n = pl->p->arrays(kc, pa->a, PLUGIN_MAX_ARRAYS, why, sizeof(why));
	call_leave();
	if (n < 0 || n > PLUGIN_MAX_ARRAYS) {
		if (n < 0)
			plugin_message(pl, why, sizeof(why), "arrays() failed", err, errlen);
		else
			snprintf(err, errlen, "%s: more than 64 arrays", pl->p->name);
		return -EINVAL;
	}
	pa->n = (unsigned)n;
	for (unsigned i = 0; i < pa->n; i++)
		pa->a[i].name[sizeof(pa->a[i].name) - 1] = '\0';
	if (arrays_check(pl, pa, err, errlen))
		return -EINVAL;
	for (unsigned i = 0; i < pa->n; i++) {
		uint64_t b = pa->a[i].bytes;

		if (b > (UINT64_C(1) << 60) || total > (UINT64_C(1) << 60)) {
			snprintf(err, errlen, "%s: array '%s' of %llu bytes is past any memory",
				 pl->p->name, pa->a[i].name, (unsigned long long)b);
			return -EINVAL;
		}
		total += (b + ARENA_PAGE - 1) / ARENA_PAGE * ARENA_PAGE;
	}
	avail = sim_memory_available(NULL, false, &what);
	if (total > avail) {
		snprintf(err, errlen,
			 "%s: the arrays need %.2f GiB, more than the %.2f GiB memory allows (%s)",
			 pl->p->name, (double)total / (1u << 30), (double)avail / (1u << 30), what);
		return -EINVAL;
	}
	fd = open("/dev/zero", O_RDWR | O_CLOEXEC);
	map = fd >= 0 ? mmap(NULL, (size_t)(total + ARENA_ALIGN), PROT_READ | PROT_WRITE,
			     MAP_PRIVATE, fd, 0)
		      : MAP_FAILED;
	if (fd >= 0)
		close(fd);
	if (map == MAP_FAILED) {
		snprintf(err, errlen, "cannot map %.2f GiB for %s's arrays: %s",
			 (double)total / (1u << 30), pl->p->name, strerror(errno));
		return -ENOMEM;
	}
	/* The same layout every run: the arena on a 1 GiB boundary, so set-associative counts
	 * do not depend on where the mapping fell. */
	pa->arena = map + ((ARENA_ALIGN - (uintptr_t)map % ARENA_ALIGN) % ARENA_ALIGN);
	if (pa->arena > map)
		munmap(map, (size_t)(pa->arena - map));
	if (pa->arena + total < map + total + ARENA_ALIGN)
		munmap(pa->arena + total,
		       (size_t)(map + total + ARENA_ALIGN - (pa->arena + total)));
	pa->arena_bytes = (size_t)total;
	for (unsigned i = 0; i < pa->n; i++) {
		pa->base[i] = pa->arena + off;
		off += (pa->a[i].bytes + ARENA_PAGE - 1) / ARENA_PAGE * ARENA_PAGE;
	}
	return 0;
}

uint64_t
plugin_arrays_bytes(const struct plugin *pl, const struct attn_config *c,
		    const struct plugin_params *pp, uint64_t cap)
{
	struct memsim_kernel_config kc;
	struct memsim_kernel_array *a = xzalloc(PLUGIN_MAX_ARRAYS * sizeof(*a));
	uint64_t used = 0;
	char err[512];
	int n = -1;

	if (plugin_config(pl, c, pp, &kc, err, sizeof(err)) == 0) {
		call_enter(pl->p->name, "arrays()");
		n = pl->p->arrays(&kc, a, PLUGIN_MAX_ARRAYS, err, sizeof(err));
		call_leave();
	}
	for (int i = 0; i < n && i < PLUGIN_MAX_ARRAYS && used < cap; i++)
		used += a[i].bytes < cap ? (a[i].bytes + ARENA_PAGE - 1) / ARENA_PAGE * ARENA_PAGE
					 : cap;
	free(a);
	return used;
}

uint64_t
plugin_memory_available(const struct plugin *pl, const struct attn_config *c,
			const struct plugin_params *pp, unsigned workers, const char **what)
{
	uint64_t avail = sim_memory_share(NULL, false, workers, what);
	uint64_t used = plugin_arrays_bytes(pl, c, pp, avail);

	return used < avail ? avail - used : 0;
}

int
plugin_arrays_zero(struct plugin_arrays *pa, char *err, size_t errlen)
{
	int fd;
	void *map;

	if (!pa->arena || !pa->arena_bytes)
		return 0;
	/* Fresh zero pages in place: the same addresses, nothing touched that the run did not. */
	fd = open("/dev/zero", O_RDWR | O_CLOEXEC);
	map = fd >= 0 ? mmap(pa->arena, pa->arena_bytes, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_FIXED, fd, 0)
		      : MAP_FAILED;
	if (fd >= 0)
		close(fd);
	if (map == MAP_FAILED) {
		snprintf(err, errlen, "cannot map the arrays again: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void
plugin_arrays_destroy(struct plugin_arrays *pa)
{
	if (pa->arena && pa->arena_bytes)
		munmap(pa->arena, pa->arena_bytes);
	pa->arena = NULL;
}

/* Declares pa's arrays in t. Returns 0, or -1 with a message in err. */
static int
declare_arrays(const struct plugin *pl, struct plugin_arrays *pa, struct memsim_trace *t, char *err,
	       size_t errlen)
{
	for (unsigned i = 0; i < pa->n; i++)
		if (memsim_array(t, pa->a[i].name, pa->base[i], (size_t)pa->a[i].bytes,
				 pa->a[i].space)) {
			snprintf(err, errlen, "%s: cannot declare array '%s'", pl->p->name,
				 pa->a[i].name);
			return -1;
		}
	return 0;
}

/* The plugin's run() into t, within the exit guard. */
static int
run_traced(const struct plugin *pl, const struct memsim_kernel_config *kc, struct plugin_arrays *pa,
	   struct memsim_trace *t, char *why, size_t whylen)
{
	int rc;

	call_enter(pl->p->name, "run()");
	rc = pl->p->run(kc, pa->base, t, why, whylen);
	call_leave();
	return rc;
}

int
plugin_simulate(const struct plugin *pl, const struct memsim_kernel_config *kc,
		struct plugin_arrays *pa, struct cache *c, const struct spec *spec, bool flush,
		double *seconds, char *err, size_t errlen)
{
	struct memsim_hierarchy h = { .spec = *spec, .cache = c };
	struct memsim_trace *t;
	char why[512] = "";
	double t0;
	int rc = 0;

	t = memsim_trace_create(&h, NULL, err, errlen);
	if (!t)
		return -1;
	rc = declare_arrays(pl, pa, t, err, errlen);
	t0 = now_seconds();
	if (rc == 0 && run_traced(pl, kc, pa, t, why, sizeof(why))) {
		plugin_message(pl, why, sizeof(why), "run() failed", err, errlen);
		rc = -1;
	}
	if (rc == 0 && t->error[0]) { /* an access the trace refused */
		snprintf(err, errlen, "%s: %s", pl->p->name, t->error);
		rc = -1;
	}
	/* The trace's own finish always flushes the caches; --no-flush leaves them dirty. */
	trace_flush(t->ctx);
	t->finished = true;
	if (flush)
		cache_flush(c);
	cache_sample_scale(c); /* set sampling's estimate; nothing otherwise */
	*seconds = now_seconds() - t0;
	memsim_trace_destroy(t);
	return rc;
}

int
plugin_record(const struct plugin *pl, const struct memsim_kernel_config *kc,
	      struct plugin_arrays *pa, const struct sim_record *rec, char *err, size_t errlen)
{
	struct memsim_trace t = { 0 };
	struct trace_sink sink;
	char why[512] = "";
	size_t n;
	int rc;

	t.rec = mtrace_writer_open(rec->path, rec->command, why, sizeof(why));
	if (!t.rec) {
		snprintf(err, errlen, "recording: %s", why);
		return -EIO;
	}
	sink = mtrace_writer_sink(t.rec);
	t.ctx = trace_ctx_create(NULL, &sink, 0);
	rc = t.ctx ? declare_arrays(pl, pa, &t, err, errlen) : -1;
	if (!t.ctx)
		snprintf(err, errlen, "recording: cannot create the trace");
	if (rc == 0 && run_traced(pl, kc, pa, &t, why, sizeof(why))) {
		plugin_message(pl, why, sizeof(why), "run() failed", err, errlen);
		rc = -1;
	}
	if (rc == 0 && t.error[0]) {
		snprintf(err, errlen, "%s: %s", pl->p->name, t.error);
		rc = -1;
	}
	why[0] = '\0';
	t.finished = true;
	if (t.ctx)
		trace_flush(t.ctx);
	/* A failed run's recording is not kept: the file there before stays as it was. */
	if (rc == 0 && mtrace_writer_close(t.rec, why, sizeof(why))) {
		snprintf(err, errlen, "recording: %s", why);
		rc = -EIO;
	} else if (rc && mtrace_writer_discard(t.rec) && (n = strlen(err)) < errlen) {
		snprintf(err + n, errlen - n, " (the incomplete recording was removed)");
	}
	trace_ctx_destroy(t.ctx);
	return rc;
}

void
plugin_native_call(void *run)
{
	struct plugin_native_run *r = run;
	char why[sizeof(r->err)] = "";

	if (r->rc != 0)
		return;
	call_enter(r->pl->p->name, "run()");
	r->rc = r->pl->p->run(r->kc, r->pa->base, NULL, why, sizeof(why));
	call_leave();
	if (r->rc)
		utf8_printable(why, sizeof(why), r->err, sizeof(r->err));
}

int
plugin_formula(const struct plugin *pl, const struct memsim_kernel_config *kc, uint64_t capacity,
	       uint32_t line, struct memsim_array_bytes *out, unsigned n)
{
	int rc;

	if (!pl->p->formula)
		return -1;
	call_enter(pl->p->name, "formula()");
	rc = pl->p->formula(kc, capacity, line, out, n);
	call_leave();
	return rc ? -1 : 0;
}

bool
plugin_flops(const struct plugin *pl, const struct memsim_kernel_config *kc, double *flops)
{
	if (!pl->p->flops)
		return false;
	call_enter(pl->p->name, "flops()");
	*flops = pl->p->flops(kc);
	call_leave();
	return true;
}

void
plugin_config_json(cJSON *cfg, const struct plugin *pl, const struct plugin_params *pp)
{
	cJSON *params;

	cJSON_ReplaceItemInObjectCaseSensitive(cfg, "kernel", cJSON_CreateString(pl->p->name));
	cJSON_DeleteItemFromObjectCaseSensitive(cfg, "softmax_separate");
	cJSON_AddStringToObject(cfg, "plugin", pl->path);
	params = cJSON_AddObjectToObject(cfg, "params");
	for (unsigned i = 0; i < pp->n; i++)
		cJSON_AddStringToObject(params, pp->keys[i], pp->values[i]);
}
