#include "cli/options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "cli/commands.h"
#include "gpu/l2sets.h"
#include "gpu/sdpa_plan.h"

void
kernel_options_init(struct kernel_options *o)
{
	memset(o, 0, sizeof(*o));
	o->cfg.kernel = ATTN_FLASH2;
	o->cfg.N = 1024;
	o->cfg.d = 64;
	o->cfg.heads = 1;
	o->cfg.kv_heads = 0; /* = heads unless given */
	o->cfg.batch = 1;
	o->cfg.dtype = ATTN_FP32;
	o->cfg.Br = 64;
	o->cfg.Bc = 64;
	o->cache_text = "lab";
	o->flush = true;
	o->seed = 1;
	o->need_memory = true;
}

/* --kernel NAME or PATH into the kernel_options at opt->dest. */
static int
kernel_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	struct kernel_options *o = opt->dest;

	if (plugin_in_list(arg))
		return usage_error(
			cmd,
			"--kernel %s: one kernel, not a list (and a plugin is never listed "
			"with other kernels)",
			arg);
	if (plugin_path_like(arg)) {
		o->plugin_path = arg;
		return 0;
	}
	o->plugin_path = NULL;
	if (!attn_kernel_parse(arg, &o->cfg.kernel))
		return usage_error(cmd,
				   "--kernel: unknown kernel '%s' (naive, flash1, flash2, "
				   "flashdecode, proj)",
				   arg);
	return 0;
}

static int
dtype_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	if (!attn_dtype_parse(arg, opt->dest))
		return usage_error(cmd, "--dtype: unknown dtype '%s' (fp32, fp16, bf16)", arg);
	return 0;
}

int
l2_policy_option(const char *cmd, const struct optparse_option *opt, const char *value)
{
	if (l2sets_policy_parse(value, opt->dest))
		return usage_error(cmd, "--%s: '%s' is not lru, srrip or random", opt->name, value);
	return 0;
}

int
params_option(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char err[256];

	if (plugin_params_add(opt->dest, arg, err, sizeof(err)))
		return usage_error(cmd, "%s", err);
	if (strchr(eq, ','))
		return usage_error(
			cmd,
			"--param %s: one value per key here; a comma separates the values "
			"of a list, which memsim sweep runs one by one",
			arg);
	return 0;
}

/* flashdecode's S: the default where not given, clamped to the key blocks with a note. */
static void
resolve_splits(struct kernel_options *o, const char *preset)
{
	struct attn_config *c = &o->cfg;
	uint64_t tc = c->Bc ? attn_blocks(attn_nkv(c), c->Bc) : 0;

	if (!o->splits_given)
		c->splits = sdpa_default_splits(c, preset, &c->splits_source);
	else
		c->splits_source = ATTN_SPLITS_GIVEN;
	if (tc && c->splits > tc) {
		fprintf(stderr,
			"memsim: note: --splits %llu is more than the %llu key blocks of B_c = %llu: "
			"%llu splits, as FlashAttention clamps them\n",
			(unsigned long long)c->splits, (unsigned long long)tc,
			(unsigned long long)c->Bc, (unsigned long long)tc);
		c->splits = tc;
	}
}

int
kernel_options_finish(struct kernel_options *o, struct spec *spec, const char *cmd)
{
	char err[512], spec_err[512];
	int rc, spec_rc;

	if (!o->kernel_given)
		return usage_error(cmd, "%s needs --kernel naive|flash1|flash2|flashdecode|proj",
				   cmd);
	if (!o->kv_heads_given)
		o->cfg.kv_heads = o->cfg.heads;
	/* 0 in a config means N; given, it must be a length */
	if (o->n_kv_given && o->cfg.N_kv == 0)
		return usage_error(cmd, "--N-kv must be at least 1");
	if (!o->n_kv_given)
		o->cfg.N_kv = o->cfg.N;
	if (o->params.n && !o->plugin_path)
		return usage_error(cmd, "--param is for plugins (--kernel PATH)");
	if (o->splits_given && o->cfg.splits == 0)
		return usage_error(cmd, "--splits must be at least 1");
	if (o->splits_given && (o->plugin_path || o->cfg.kernel != ATTN_FLASHDECODE))
		return usage_error(cmd, "--splits is for --kernel flashdecode");
	if (o->kv_page_given && o->cfg.kv_page == 0)
		return usage_error(cmd, "--kv-page must be at least 1");
	if (o->kv_page_given && o->plugin_path)
		return usage_error(cmd,
				   "--kv-page is for --kernel flash2 or flashdecode, not a plugin");
	/* one seed reproduces a run: the values and the block table (values never change the
	 * traffic, so nothing is lost by tying them) */
	o->cfg.kv_seed = o->seed;
	if (o->plugin_path) {
		/* The plugin's own check() judges the rest once it is loaded. */
		if (!o->cfg.N || !o->cfg.d || !o->cfg.heads || !o->cfg.kv_heads || !o->cfg.batch ||
		    !o->cfg.Br || !o->cfg.Bc)
			return usage_error(cmd, "sizes must be at least 1");
		/* the plugin ABI has one length (include/memsim.h) */
		if (o->cfg.N_kv != o->cfg.N)
			return usage_error(cmd, "--N-kv: a kernel plugin takes N_kv = N only");
		if (o->cfg.heads % o->cfg.kv_heads)
			return usage_error(cmd, "--kv-heads %llu does not divide --heads %llu",
					   (unsigned long long)o->cfg.kv_heads,
					   (unsigned long long)o->cfg.heads);
		if (spec_parse(o->cache_text, spec, err, sizeof(err)))
			return usage_error(cmd, "--cache: %s", err);
		spec->cache.seed = o->seed;
		return 0;
	}
	/* S depends on the cache's preset: the spec is parsed first, its error said after the
	 * kernel's as before */
	spec_rc = spec_parse(o->cache_text, spec, spec_err, sizeof(spec_err));
	if (o->cfg.kernel == ATTN_FLASHDECODE)
		resolve_splits(o, spec_rc ? "" : spec->preset);
	rc = o->trace_only ? attn_config_check_trace_only(&o->cfg, err, sizeof(err))
			   : attn_config_check(&o->cfg, err, sizeof(err));
	if (rc && (o->need_memory || rc != -ENOMEM))
		return usage_error(cmd, "%s", err);
	if (spec_rc)
		return usage_error(cmd, "--cache: %s", spec_err);
	spec->cache.seed = o->seed;
	return 0;
}

int
kernel_options_parse(struct kernel_options *o, struct spec *spec, const struct kernel_command *cmd,
		     int argc, char **argv)
{
	struct attn_config *c = &o->cfg;
	const struct optparse_option shared[] = {
		{ "kernel", 0, OPTPARSE_CALL, .dest = o, .call = kernel_value,
		  .given = &o->kernel_given },
		{ "N", 0, OPTPARSE_U64, .dest = &c->N },
		{ "d", 0, OPTPARSE_U64, .dest = &c->d },
		{ "N-kv", 0, OPTPARSE_U64, .dest = &c->N_kv, .given = &o->n_kv_given },
		{ "heads", 0, OPTPARSE_U64, .dest = &c->heads },
		{ "kv-heads", 0, OPTPARSE_U64, .dest = &c->kv_heads, .given = &o->kv_heads_given },
		{ "batch", 0, OPTPARSE_U64, .dest = &c->batch },
		{ "dtype", 0, OPTPARSE_CALL, .dest = &c->dtype, .call = dtype_value },
		{ "Br", 0, OPTPARSE_U64, .dest = &c->Br },
		{ "Bc", 0, OPTPARSE_U64, .dest = &c->Bc },
		{ "causal", 0, OPTPARSE_FLAG, .dest = &c->causal },
		{ "softmax-separate", 0, OPTPARSE_FLAG, .dest = &c->softmax_separate },
		{ "cache", 0, OPTPARSE_STRING, .dest = &o->cache_text },
		{ "no-flush", 0, OPTPARSE_CLEAR, .dest = &o->flush },
		{ "seed", 0, OPTPARSE_U64, .dest = &o->seed },
		{ "json", 0, OPTPARSE_STRING, .dest = &o->json_path },
		{ "param", 0, OPTPARSE_CALL, .dest = &o->params, .call = params_option },
		{ "splits", 0, OPTPARSE_U64, .dest = &c->splits, .given = &o->splits_given },
		{ "kv-page", 0, OPTPARSE_U64, .dest = &c->kv_page, .given = &o->kv_page_given },
		{ .name = "help", .kind = OPTPARSE_HELP },
		{ .name = NULL },
	};
	const struct optparse_command oc = {
		.name = cmd->name, .usage = cmd->usage, .options = shared, .extra = cmd->extra
	};
	int rc;

	if ((rc = optparse_argv(&oc, argc, argv)))
		return rc;
	if (optind != argc)
		return usage_error(cmd->name, "unexpected argument '%s'", argv[optind]);
	if (o->plugin_path && !o->plugins_ok)
		return usage_error(cmd->name, "--kernel %s: %s does not take plugins",
				   o->plugin_path, cmd->name);
	return kernel_options_finish(o, spec, cmd->name);
}

char *
kernel_config_str(const struct attn_config *c, char *buf, size_t len)
{
	char nkv[40] = "", splits[40] = "", page[40] = "";

	/* N_kv only where it differs: configs of N = N_kv read as before */
	if (attn_nkv(c) != c->N)
		snprintf(nkv, sizeof(nkv), " N_kv=%llu", (unsigned long long)attn_nkv(c));
	if (c->kernel == ATTN_FLASHDECODE)
		snprintf(splits, sizeof(splits), " splits=%llu%s",
			 (unsigned long long)attn_splits(c),
			 attn_decode_packed(c) ? " gqa-packed" : "");
	if (c->kv_page)
		snprintf(page, sizeof(page), " kv_page=%llu", (unsigned long long)c->kv_page);
	snprintf(
		buf, len,
		"%s N=%llu%s d=%llu heads=%llu kv_heads=%llu batch=%llu %s Br=%llu Bc=%llu%s%s%s%s",
		attn_kernel_name(c->kernel), (unsigned long long)c->N, nkv,
		(unsigned long long)c->d, (unsigned long long)c->heads,
		(unsigned long long)c->kv_heads, (unsigned long long)c->batch,
		attn_dtype_name(c->dtype), (unsigned long long)c->Br, (unsigned long long)c->Bc,
		c->causal ? " causal" : "", c->softmax_separate ? " softmax-separate" : "", splits,
		page);
	return buf;
}

static void
argv_add(struct kernel_argv *a, const char *opt, bool value, unsigned long long v)
{
	a->argv[a->argc++] = (char *)opt;
	if (value) {
		snprintf(a->buf[a->argc], sizeof(a->buf[0]), "%llu", v);
		a->argv[a->argc] = a->buf[a->argc];
		a->argc++;
	}
	a->argv[a->argc] = NULL;
}

void
kernel_config_argv(const struct attn_config *c, uint64_t seed, struct kernel_argv *a)
{
	memset(a, 0, sizeof(*a));
	a->argv[a->argc++] = "--kernel";
	a->argv[a->argc++] = (char *)attn_kernel_name(c->kernel);
	argv_add(a, "--N", true, c->N);
	if (attn_nkv(c) != c->N)
		argv_add(a, "--N-kv", true, attn_nkv(c));
	argv_add(a, "--d", true, c->d);
	argv_add(a, "--heads", true, c->heads);
	argv_add(a, "--kv-heads", true, c->kv_heads);
	argv_add(a, "--batch", true, c->batch);
	argv_add(a, "--Br", true, c->Br);
	argv_add(a, "--Bc", true, c->Bc);
	if (c->kernel == ATTN_FLASHDECODE)
		argv_add(a, "--splits", true, attn_splits(c));
	if (c->kv_page)
		argv_add(a, "--kv-page", true, c->kv_page);
	argv_add(a, "--seed", true, seed);
	a->argv[a->argc++] = "--dtype";
	a->argv[a->argc++] = (char *)attn_dtype_name(c->dtype);
	if (c->causal)
		argv_add(a, "--causal", false, 0);
	if (c->softmax_separate)
		argv_add(a, "--softmax-separate", false, 0);
}
