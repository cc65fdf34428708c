#include "config.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/json_text.h"
#include "analysis/report.h"
#include "base/util.h"
#include "sim/drive/sample.h"

static void
add_u64(cJSON *obj, const char *key, uint64_t v)
{
	/* cJSON keeps numbers as doubles: exact up to 2^53 bytes (8 PiB), beyond any run. */
	cJSON_AddNumberToObject(obj, key, (double)v);
}

static cJSON *
traffic_json(const struct cache_traffic *t)
{
	cJSON *o = cJSON_CreateObject();

	add_u64(o, "read_bytes", t->read_bytes);
	add_u64(o, "write_bytes", t->write_bytes);
	add_u64(o, "rfo_bytes", t->rfo_bytes);
	add_u64(o, "flush_write_bytes", t->flush_write_bytes);
	add_u64(o, "flush_read_bytes", t->flush_read_bytes);
	add_u64(o, "total_bytes", t->read_bytes + t->write_bytes);
	return o;
}

static void
level_stats_json(cJSON *o, const struct cache_level_stats *st)
{
	uint64_t misses = st->read_misses + st->write_misses;

	add_u64(o, "reads", st->reads);
	add_u64(o, "writes", st->writes);
	add_u64(o, "hits", st->reads + st->writes - misses);
	add_u64(o, "misses", misses);
	add_u64(o, "read_misses", st->read_misses);
	add_u64(o, "write_misses", st->write_misses);
	add_u64(o, "rfo_misses", st->rfo_misses);
	add_u64(o, "ifetch_misses", st->ifetch_misses);
	add_u64(o, "fills", st->fills);
	add_u64(o, "evictions", st->evictions);
	add_u64(o, "writebacks", st->writebacks);
	add_u64(o, "flush_writebacks", st->flush_writebacks);
	add_u64(o, "invalidations", st->invalidations);
	add_u64(o, "victims_in", st->victims_in);
}

static cJSON *
level_json(const struct cache_level_config *l, const struct cache_level_stats *st)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "name", l->name);
	add_u64(o, "size_bytes", l->size_bytes);
	add_u64(o, "assoc", l->assoc);
	cJSON_AddBoolToObject(o, "fully_associative", l->fully_assoc);
	add_u64(o, "line_bytes", l->line_bytes);
	cJSON_AddStringToObject(o, "policy", cache_repl_str(l->repl));
	cJSON_AddStringToObject(o, "write_policy", cache_write_str(l->write));
	cJSON_AddStringToObject(o, "write_miss_policy", cache_alloc_str(l->alloc));
	cJSON_AddStringToObject(o, "inclusion", cache_inclusion_str(l->inclusion));
	cJSON_AddBoolToObject(o, "quiet_writebacks", l->quiet_writebacks);
	cJSON_AddStringToObject(o, "straddle", l->straddle_once ? "once" : "line");
	level_stats_json(o, st);
	return o;
}

/* Set sampling's "estimate": the factor, what the sampled sets saw and the judgement of
 * sim/drive/sample.h. */
static void
estimate_json(cJSON *obj, struct cache *c)
{
	cJSON *e = cJSON_AddObjectToObject(obj, "estimate");
	cJSON *ev, *misses, *parts;
	struct cache_sample s;
	struct sample_judgement j;

	cache_sample_get(c, &s);
	sample_judge(&s, &j);
	add_u64(e, "sample_sets", s.sample_sets);
	add_u64(e, "residue", CACHE_SAMPLE_RESIDUE(s.sample_sets));
	cJSON_AddStringToObject(e, "what",
				"level and DRAM counts of 1 set in sample_sets (one in each run of "
				"sample_sets set classes, residue in the first), multiplied by "
				"sample_sets; accesses exact");
	ev = cJSON_AddObjectToObject(e, "sample_events");
	add_u64(ev, "references", s.refs);
	misses = cJSON_AddObjectToObject(ev, "misses");
	for (unsigned i = 0; i < s.levels; i++)
		add_u64(misses, cache_level_config(c, i)->name, s.misses[i]);
	add_u64(ev, "dram_bytes", s.dram_bytes);
	add_u64(ev, "dram_chunks", s.dram_chunks);
	cJSON_AddNumberToObject(ev, "dram_effective_chunks",
				round(s.dram_effective_chunks * 100) / 100);
	add_u64(ev, "set_classes", s.set_classes);
	add_u64(ev, "read_bytes", s.sampled_read_bytes);
	add_u64(ev, "write_bytes", s.sampled_write_bytes);
	parts = cJSON_AddObjectToObject(e, "error_parts");
	cJSON_AddNumberToObject(parts, "chunks", round(j.parts.chunks * 10000) / 10000);
	cJSON_AddNumberToObject(parts, "set_classes", round(j.parts.set_classes * 10000) / 10000);
	cJSON_AddNumberToObject(parts, "loads", round(j.parts.loads * 10000) / 10000);
	cJSON_AddNumberToObject(parts, "stores", round(j.parts.stores * 10000) / 10000);
	cJSON_AddNumberToObject(e, "estimated_error", round(j.estimated_error * 10000) / 10000);
	cJSON_AddNumberToObject(e, "error_bound", SAMPLE_ERROR_BOUND);
	cJSON_AddBoolToObject(e, "sample_too_small", j.verdict != SAMPLE_OK);
	cJSON_AddBoolToObject(e, "sample_empty", j.verdict == SAMPLE_EMPTY);
	cJSON_AddStringToObject(e, "reason", j.reason);
}

void
report_add_cache(cJSON *obj, struct cache *c)
{
	cJSON *levels = cJSON_AddArrayToObject(obj, "levels");
	cJSON *arrays, *phases, *scratch, *cpu;
	const struct cache_cpu_stats *cs = cache_cpu(c);
	static const char *op_names[] = { "loads", "stores", "ifetches" };

	for (unsigned i = 0; i < cache_level_count(c); i++)
		cJSON_AddItemToArray(levels,
				     level_json(cache_level_config(c, i), cache_level_stats(c, i)));
	if (cache_get_config(c)->sample_sets > 1)
		estimate_json(obj, c); /* every level and DRAM count below is an estimate */
	cJSON_AddItemToObject(obj, "dram", traffic_json(cache_dram(c)));
	scratch = cJSON_AddObjectToObject(obj, "scratch");
	add_u64(scratch, "read_bytes", cs->scratch_read_bytes);
	add_u64(scratch, "write_bytes", cs->scratch_write_bytes);
	cpu = cJSON_AddObjectToObject(obj, "cpu");
	for (int op = 0; op < CACHE_OP_COUNT; op++) {
		char key[32];

		add_u64(cpu, op_names[op], cs->ops[op]);
		snprintf(key, sizeof(key), "%s_bytes", op_names[op]);
		add_u64(cpu, key, cs->bytes[op]);
	}
	arrays = cJSON_AddObjectToObject(obj, "arrays");
	for (unsigned a = 0; a < cache_array_count(c); a++) {
		const struct cache_traffic *t = cache_array_traffic(c, a);
		cJSON *o;

		if (a == 0 && t->read_bytes == 0 && t->write_bytes == 0)
			continue;
		o = traffic_json(t);
		cJSON_AddStringToObject(o, "space",
					cache_array_is_scratch(c, a) ? "scratch" : "dram");
		add_u64(o, "scratch_read_bytes", cache_array_scratch(c, a)[0]);
		add_u64(o, "scratch_write_bytes", cache_array_scratch(c, a)[1]);
		cJSON_AddItemToObject(arrays, cache_array_name(c, a), o);
	}
	phases = cJSON_AddObjectToObject(obj, "phases");
	for (unsigned p = 0; p < cache_phase_count(c); p++) {
		const struct cache_traffic *t = cache_phase_traffic(c, p);
		cJSON *o, *per_array, *lv;
		bool any = t->read_bytes || t->write_bytes;

		for (unsigned i = 0; i < cache_level_count(c) && !any; i++) {
			const struct cache_level_stats *st = cache_phase_level_stats(c, p, i);

			any = st->reads || st->writes;
		}
		if (p == 0 && !any)
			continue;
		o = traffic_json(t);
		per_array = cJSON_AddObjectToObject(o, "arrays");
		for (unsigned a = 0; a < cache_array_count(c); a++) {
			const struct cache_traffic *pa = cache_phase_array_traffic(c, p, a);

			if (pa->read_bytes || pa->write_bytes)
				cJSON_AddItemToObject(per_array, cache_array_name(c, a),
						      traffic_json(pa));
		}
		lv = cJSON_AddArrayToObject(o, "levels");
		for (unsigned i = 0; i < cache_level_count(c); i++) {
			cJSON *l = cJSON_CreateObject();

			cJSON_AddStringToObject(l, "name", cache_level_config(c, i)->name);
			level_stats_json(l, cache_phase_level_stats(c, p, i));
			cJSON_AddItemToArray(lv, l);
		}
		cJSON_AddItemToObject(phases, cache_phase_name(c, p), o);
	}
}

void
report_add_config(cJSON *obj, const struct attn_config *c, const struct spec *s, bool flush,
		  uint64_t seed)
{
	cJSON *cfg = cJSON_AddObjectToObject(obj, "config");
	char buf[1024];

	cJSON_AddStringToObject(cfg, "kernel", attn_kernel_name(c->kernel));
	add_u64(cfg, "N", c->N);
	add_u64(cfg, "N_kv", attn_nkv(c));
	add_u64(cfg, "d", c->d);
	add_u64(cfg, "heads", c->heads);
	add_u64(cfg, "kv_heads", c->kv_heads);
	add_u64(cfg, "batch", c->batch);
	cJSON_AddStringToObject(cfg, "dtype", attn_dtype_name(c->dtype));
	add_u64(cfg, "Br", c->Br);
	add_u64(cfg, "Bc", c->Bc);
	cJSON_AddBoolToObject(cfg, "causal", c->causal);
	cJSON_AddBoolToObject(cfg, "softmax_separate", c->softmax_separate);
	/* paged only: reports of unpaged runs read as before */
	if (c->kv_page) {
		add_u64(cfg, "kv_page", c->kv_page);
		add_u64(cfg, "kv_seed", c->kv_seed);
	}
	if (c->kernel == ATTN_FLASHDECODE) {
		add_u64(cfg, "splits", attn_splits(c));
		cJSON_AddStringToObject(cfg, "splits_source",
					attn_splits_source_name(c->splits_source));
		/* FlashAttention's seqlenq_ngroups_swapped: the group's heads as query rows */
		cJSON_AddBoolToObject(cfg, "gqa_packed", attn_decode_packed(c));
	}
	cJSON_AddStringToObject(cfg, "cache", spec_format(s, buf, sizeof(buf)));
	cJSON_AddStringToObject(cfg, "preset", s->preset);
	cJSON_AddBoolToObject(cfg, "flush", flush);
	add_u64(cfg, "seed", seed);
}

char *
report_command_line(int argc, char **argv)
{
	size_t len = 1;
	char *s, *p;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) * 4 + 3;
	s = p = xzalloc(len);
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool plain = *a != '\0';

		for (const char *q = a; *q && plain; q++)
			plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				       "0123456789-_=:,./+@%",
				       *q) != NULL;
		if (i)
			*p++ = ' ';
		if (plain) {
			p = stpcpy(p, a);
			continue;
		}
		*p++ = '\'';
		for (const char *q = a; *q; q++) {
			if (*q == '\'')
				p = stpcpy(p, "'\\''");
			else
				*p++ = *q;
		}
		*p++ = '\'';
	}
	*p = '\0';
	return s;
}

void
report_add_header(cJSON *obj, int argc, char **argv)
{
	char *args = report_command_line(argc, argv);
	char *cmd = xzalloc(strlen(args) + 8);

	sprintf(cmd, "memsim %s", args);
	cJSON_AddStringToObject(obj, "memsim_version", MEMSIM_VERSION);
	/* which model made the numbers: a report of another revision may count otherwise */
	cJSON_AddStringToObject(obj, "model_revision", report_model_revision());
	cJSON_AddStringToObject(obj, "command", cmd);
	free(cmd);
	free(args);
}

#define REVISION_TEXT(n) #n
#define REVISION_STR(n) REVISION_TEXT(n)

const char *
report_model_revision(void)
{
	return "memsim " MEMSIM_VERSION " model " REVISION_STR(REPORT_MODEL_REVISION);
}

bool
report_row_revision(const cJSON *r, char *buf, size_t len)
{
	const cJSON *rev = cJSON_GetObjectItemCaseSensitive(r, "model_revision");
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(r, "memsim_version");

	if (cJSON_IsString(rev)) {
		snprintf(buf, len, "%s", rev->valuestring);
		return true;
	}
	if (cJSON_IsString(version))
		snprintf(buf, len, "none recorded, memsim %s", version->valuestring);
	else
		snprintf(buf, len, "none recorded");
	return false;
}

cJSON *
report_manifest_create(const char *experiment, int argc, char **argv)
{
	cJSON *m = cJSON_CreateObject(), *v;
	char date[32];
	time_t now = time(NULL);
	struct tm tm;

	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	cJSON_AddStringToObject(m, "experiment", experiment);
	cJSON_AddStringToObject(m, "date", date);
	report_add_header(m, argc, argv);
	v = cJSON_AddObjectToObject(m, "versions");
	cJSON_AddStringToObject(v, "memsim", MEMSIM_VERSION);
	cJSON_AddStringToObject(v, "compiler", __VERSION__);
	return m;
}

static void
print_bytes(FILE *f, const char *label, uint64_t v)
{
	fprintf(f, "  %-22s %16" PRIu64 "  (%.3f MiB)\n", label, v, (double)v / 1048576.0);
}

/* True if the run named phases of its own (not just the final flush). */
static bool
named_phases(const struct cache *c)
{
	for (unsigned p = 1; p < cache_phase_count(c); p++)
		if (strcmp(cache_phase_name(c, p), "flush") != 0)
			return true;
	return false;
}

/* The estimate's two lines: the factor, then the sample and its judgement. */
static void
print_estimate(FILE *f, struct cache *c)
{
	struct cache_sample s;
	struct sample_judgement j;

	cache_sample_get(c, &s);
	sample_judge(&s, &j);
	fprintf(f,
		"estimate: set sampling, 1 set in %u (one in each run of %u set classes, %u in "
		"the first), level and DRAM counts multiplied by %u\n",
		s.sample_sets, s.sample_sets, CACHE_SAMPLE_RESIDUE(s.sample_sets), s.sample_sets);
	fprintf(f,
		"sample: %" PRIu64 " references, %" PRIu64 " DRAM bytes from %" PRIu64
		" chunks (%.1f effective) in %" PRIu64 " set classes; estimated error of DRAM "
		"bytes %.1f%% (bound %.0f%%)%s\n",
		s.refs, s.dram_bytes, s.dram_chunks, s.dram_effective_chunks, s.set_classes,
		100 * j.estimated_error, 100 * SAMPLE_ERROR_BOUND,
		j.verdict == SAMPLE_OK ? "" : ": sample too small");
}

void
report_print_cache(FILE *f, struct cache *c)
{
	const struct cache_traffic *d = cache_dram(c);
	const struct cache_cpu_stats *cs = cache_cpu(c);

	if (cache_get_config(c)->sample_sets > 1)
		print_estimate(f, c);
	fprintf(f,
		"accesses: %" PRIu64 " loads (%" PRIu64 " B), %" PRIu64 " stores (%" PRIu64
		" B), %" PRIu64 " instruction fetches\n",
		cs->ops[CACHE_OP_LOAD], cs->bytes[CACHE_OP_LOAD], cs->ops[CACHE_OP_STORE],
		cs->bytes[CACHE_OP_STORE], cs->ops[CACHE_OP_IFETCH]);
	if (cache_level_count(c)) {
		fprintf(f, "\n%-5s %-22s %14s %14s %12s %12s %9s %12s %12s\n", "level", "geometry",
			"reads", "writes", "read_miss", "write_miss", "miss%", "fills",
			"writebacks");
		for (unsigned i = 0; i < cache_level_count(c); i++) {
			const struct cache_level_config *l = cache_level_config(c, i);
			const struct cache_level_stats *st = cache_level_stats(c, i);
			uint64_t acc = st->reads + st->writes;
			char geo[64], sz[24];

			snprintf(geo, sizeof(geo), "%s %s %u-way %uB",
				 format_size_bytes(l->size_bytes, sz, sizeof(sz)),
				 cache_repl_str(l->repl), l->assoc, l->line_bytes);
			fprintf(f,
				"%-5s %-22s %14" PRIu64 " %14" PRIu64 " %12" PRIu64 " %12" PRIu64
				" %8.3f%% %12" PRIu64 " %12" PRIu64 "\n",
				l->name, geo, st->reads, st->writes, st->read_misses,
				st->write_misses,
				acc ? 100.0 * (double)(st->read_misses + st->write_misses) /
						(double)acc
				    : 0.0,
				st->fills, st->writebacks);
		}
		for (unsigned i = 0; i < cache_level_count(c); i++) {
			const struct cache_level_stats *st = cache_level_stats(c, i);

			if (i > 0 && (st->ifetch_misses || st->rfo_misses))
				fprintf(f,
					"%-5s of the read misses, %" PRIu64
					" serve write misses above "
					"(rfo) and %" PRIu64 " instruction fetches\n",
					cache_level_config(c, i)->name, st->rfo_misses,
					st->ifetch_misses);
		}
	}
	fprintf(f, "\nDRAM\n");
	print_bytes(f, "read_bytes", d->read_bytes);
	print_bytes(f, "  of which rfo_bytes", d->rfo_bytes);
	print_bytes(f, "write_bytes", d->write_bytes);
	print_bytes(f, "  of which flush", d->flush_write_bytes);
	print_bytes(f, "total", d->read_bytes + d->write_bytes);
	print_bytes(f, "total without flush",
		    d->read_bytes + d->write_bytes - d->flush_write_bytes - d->flush_read_bytes);
	if (cs->scratch_read_bytes || cs->scratch_write_bytes) {
		print_bytes(f, "scratch read", cs->scratch_read_bytes);
		print_bytes(f, "scratch write", cs->scratch_write_bytes);
	}
	if (cache_array_count(c) > 1) {
		fprintf(f, "\n%-16s %16s %16s %16s\n", "array", "dram_read", "dram_write", "rfo");
		for (unsigned a = 0; a < cache_array_count(c); a++) {
			const struct cache_traffic *t = cache_array_traffic(c, a);

			if (a == 0 && !t->read_bytes && !t->write_bytes)
				continue;
			fprintf(f, "%-16s %16" PRIu64 " %16" PRIu64 " %16" PRIu64 "%s\n",
				cache_array_name(c, a), t->read_bytes, t->write_bytes, t->rfo_bytes,
				cache_array_is_scratch(c, a) ? "  (scratch)" : "");
		}
	}
	if (named_phases(c)) {
		fprintf(f, "\n%-16s %16s %16s\n", "phase", "dram_read", "dram_write");
		for (unsigned p = 0; p < cache_phase_count(c); p++) {
			const struct cache_traffic *t = cache_phase_traffic(c, p);

			if (p == 0 && !t->read_bytes && !t->write_bytes)
				continue;
			fprintf(f, "%-16s %16" PRIu64 " %16" PRIu64 "\n", cache_phase_name(c, p),
				t->read_bytes, t->write_bytes);
		}
	}
}

/* obj as text ending in a newline; caller frees with free(). NULL with err when cJSON cannot
 * format it. */
static char *
json_text(const cJSON *obj, const char *path, size_t *len, char *err, size_t errlen)
{
	char *text = json_text_print(obj, true);

	if (!text) {
		snprintf(err, errlen, "cannot format JSON for %s", path);
		return NULL;
	}
	*len = strlen(text);
	text[(*len)++] = '\n'; /* over the NUL: the file ends with a newline */
	return text;
}

int
report_write_json(const char *path, const cJSON *obj, char *err, size_t errlen)
{
	size_t len;
	char *text = json_text(obj, path, &len, err, errlen);
	int rc;

	if (!text)
		return -ENOMEM;
	rc = write_file_whole(path, text, len, err, errlen);
	free(text);
	return rc;
}

int
report_write_json_at(int dirfd, const char *dir, const char *name, const cJSON *obj, char *err,
		     size_t errlen)
{
	size_t len;
	char *text = json_text(obj, name, &len, err, errlen);
	int rc;

	if (!text)
		return -ENOMEM;
	rc = write_file_whole_at(dirfd, dir, name, text, len, err, errlen);
	free(text);
	return rc;
}

/* The JSON document in stream f, named path in messages; closes f. */
static cJSON *
read_json_stream(FILE *f, const char *path, char *err, size_t errlen)
{
	char *text;
	long n;
	cJSON *root;

	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || n > (64L << 20) ||
	    fseek(f, 0, SEEK_SET)) {
		snprintf(err, errlen, "%s: not a regular file of at most 64 MiB", path);
		fclose(f);
		return NULL;
	}
	text = xzalloc((size_t)n + 1);
	if (fread(text, 1, (size_t)n, f) != (size_t)n) {
		snprintf(err, errlen, "%s: read error", path);
		free(text);
		fclose(f);
		return NULL;
	}
	fclose(f);
	/* The whole file must be one document (a JSON-lines file is not). */
	root = json_text_parse(text, (size_t)n, true);
	free(text);
	if (!root)
		snprintf(err, errlen, "%s: not one valid JSON document", path);
	return root;
}

cJSON *
report_read_json(const char *path, char *err, size_t errlen)
{
	int fd = open_regular_read(path, err, errlen);
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;

	if (!f) {
		if (fd >= 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			close(fd);
		}
		return NULL;
	}
	return read_json_stream(f, path, err, errlen);
}

cJSON *
report_read_json_at(int dirfd, const char *dir, const char *name, bool *missing, char *err,
		    size_t errlen)
{
	char path[4200];
	int fd = outdir_file_open(dirfd, dir, name, O_RDONLY, err, errlen);
	FILE *f;

	if (missing)
		*missing = fd == -ENOENT;
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "rb");
	if (!f) {
		snprintf(err, errlen, "%s/%s: %s", dir, name, strerror(errno));
		close(fd);
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return read_json_stream(f, path, err, errlen);
}

void
report_per_token(struct per_token *p, const struct attn_config *c, const struct spec *s,
		 double dram_bytes, double gbps_given, const char *given_source)
{
	const char *src = NULL;

	memset(p, 0, sizeof(*p));
	p->bytes = dram_bytes / ((double)c->batch * (double)c->N);
	if (gbps_given > 0) {
		p->gbps = gbps_given;
		snprintf(p->source, sizeof(p->source), "%s",
			 given_source ? given_source : "--bandwidth");
	} else if ((p->gbps = spec_preset_bandwidth(s->preset, &src)) > 0) {
		snprintf(p->source, sizeof(p->source), "preset %s: %s", s->preset, src);
	}
	if (p->gbps > 0 && p->bytes > 0)
		p->tokens_per_s = p->gbps * 1e9 / p->bytes;
}

void
report_print_per_token(FILE *f, const struct per_token *p)
{
	fprintf(f, "per generated token (DRAM bytes / (batch x N)): %.6g bytes\n", p->bytes);
	if (p->gbps > 0)
		fprintf(f, "tokens/s bound at %.6g GB/s (%s): %.6g\n", p->gbps, p->source,
			p->tokens_per_s);
}

void
report_add_per_token(cJSON *obj, const struct per_token *p)
{
	cJSON *o = cJSON_AddObjectToObject(obj, "per_token");

	cJSON_AddNumberToObject(o, "bytes", p->bytes);
	if (p->gbps > 0) {
		cJSON_AddNumberToObject(o, "tokens_per_s_bound", p->tokens_per_s);
		cJSON_AddNumberToObject(o, "bandwidth_gbps", p->gbps);
		cJSON_AddStringToObject(o, "bandwidth_source", p->source);
	} else {
		cJSON_AddNullToObject(o, "tokens_per_s_bound");
		cJSON_AddNullToObject(o, "bandwidth_gbps");
		cJSON_AddNullToObject(o, "bandwidth_source");
	}
}
