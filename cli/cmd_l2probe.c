/*
 * `memsim l2probe`: the DRAM bytes an L2 model moves for a list of whole-buffer steps, the
 * microbenchmarks docs/gpu-run/l2-policy/ measured on the H100 (a buffer read front to back, a
 * buffer filled, a flush), so that each L2 model can be scored against them
 * (tools/gpu-sdpa/l2fit.py) before it is used for SDPA.
 */

#include <cJSON.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "analysis/report.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/optparse.h"
#include "sim/l2sets.h"
#include "sim/util.h"

#define CHUNK (32u << 10) /* bytes a tile: a buffer is its 32 KiB chunks in order */
#define FLUSH (256ull << 20)
#define NAMES 8
#define MAX_STEPS 1024

void
usage_l2probe(FILE *f)
{
	fprintf(f,
		"Usage: memsim l2probe [--l2 SIZE] [--policy lru|srrip|random] [--ways W]\n"
		"                      [--dirty-ways D] [--partitions 1|2] [--sample K]\n"
		"                      [--json FILE] STEP...\n"
		"\n"
		"Runs whole-buffer steps through a hashed set-associative L2 of 128-byte lines\n"
		"(sim/l2sets.h), one after another on one cache, as the L2 microbenchmarks of\n"
		"docs/gpu-run/l2-policy/ ran kernels under ncu --cache-control none, and prints\n"
		"each step's DRAM bytes read and written. STEP is flush (read a 256 MiB buffer\n"
		"of its own), read:NAME:SIZE (read buffer NAME's first SIZE bytes, front to\n"
		"back) or fill:NAME:SIZE (write them, reading nothing). Buffers of different\n"
		"names never share lines; NAME is a letter or more.\n"
		"\n"
		"  --l2 SIZE       capacity [50M]\n"
		"  --policy P      lru, srrip (2-bit re-reference prediction) or random [lru]\n"
		"  --ways W        lines a set holds, 1 to 64 [16]\n"
		"  --dirty-ways D  dirty lines a set keeps at most (more are written back and\n"
		"                  kept clean) [0: no cap]\n"
		"  --partitions P  1, or 2: halves of SIZE, each line homed in one, a line\n"
		"                  read from the other half's side copied into it [1]\n"
		"  --sample K      simulate 1 set in K, a power of two [1]\n"
		"  --json FILE     the steps as JSON (- for stdout)\n"
		"\n"
		"Exit status: 0 ok, 1 out of memory, 2 bad options or steps.\n");
}

struct probe_args {
	struct l2sets_config c;
	const char *json_path;
};

/* The options into a; the steps follow them from optind on. Returns 0, OPTPARSE_HELP_SHOWN
 * after --help, or EXIT_USAGE after a message. */
static int
parse_probe(int argc, char **argv, struct probe_args *a)
{
	static const char *const partitions[] = { "1", "2", NULL };
	uint64_t ways = 16, dirty = 0, sample = 1;
	unsigned parts = 0;
	bool parts_given = false;
	const struct optparse_option opts[] = {
		{ "l2", 0, OPTPARSE_SIZE, .dest = &a->c.capacity_bytes, .min = 1u << 20,
		  .max = 1ull << 40, .expect = "a size from 1M to 1T" },
		{ "policy", 0, OPTPARSE_CALL, .dest = &a->c.policy, .call = l2_policy_option },
		{ "ways", 0, OPTPARSE_U64, .dest = &ways, .min = 1, .max = 64,
		  .expect = "a number from 1 to 64" },
		{ "dirty-ways", 0, OPTPARSE_U64, .dest = &dirty, .max = 64,
		  .expect = "a number from 0 to 64" },
		{ "sample", 0, OPTPARSE_U64, .dest = &sample, .min = 1, .max = 1u << 20,
		  .expect = "a number from 1 to 1048576" },
		{ "partitions", 0, OPTPARSE_CHOICE, .dest = &parts, .words = partitions,
		  .given = &parts_given },
		{ "json", 'j', OPTPARSE_STRING, .dest = &a->json_path },
		{ .name = "help", .letter = 'h', .kind = OPTPARSE_HELP },
		{ .name = NULL },
	};
	const struct optparse_command cmd = {
		.name = "l2probe", .usage = usage_l2probe, .options = opts, .operands_last = true
	};
	int rc;

	*a = (struct probe_args){ .c = { .capacity_bytes = 50ull << 20 } };
	if ((rc = optparse_argv(&cmd, argc, argv)))
		return rc;
	a->c.ways = (uint32_t)ways;
	a->c.dirty_ways = (uint32_t)dirty;
	a->c.sample = (uint32_t)sample;
	if (parts_given)
		a->c.partitions = parts + 1;
	return 0;
}

struct step {
	bool write;
	unsigned buffer; /* index into names; NAMES: the flush buffer */
	uint64_t bytes;
};

/* "flush", "read:NAME:SIZE" or "fill:NAME:SIZE"; names[] gains NAME. */
static int
parse_step(const char *text, struct step *st, char names[NAMES][16], unsigned *nnames)
{
	char buf[64], *name, *size;
	unsigned i;

	if (strcmp(text, "flush") == 0) {
		*st = (struct step){ false, NAMES, FLUSH };
		return 0;
	}
	if (strlen(text) >= sizeof(buf))
		return -1;
	strcpy(buf, text);
	name = strchr(buf, ':');
	size = name ? strchr(name + 1, ':') : NULL;
	if (!size || size == name + 1 || size - name > 15)
		return -1;
	*name++ = '\0';
	*size++ = '\0';
	if (strcmp(buf, "read") && strcmp(buf, "fill"))
		return -1;
	st->write = strcmp(buf, "fill") == 0;
	if (parse_size_bytes(size, &st->bytes) || st->bytes == 0 || st->bytes > (1ull << 36))
		return -1;
	for (i = 0; i < *nnames && strcmp(names[i], name); i++)
		;
	if (i == *nnames) {
		if (i == NAMES)
			return -1;
		strcpy(names[(*nnames)++], name);
	}
	st->buffer = i;
	return 0;
}

/* Runs one step; its DRAM bytes are the counters' growth. */
static struct tilelru_traffic
run_step(struct l2sets *s, const struct step *st)
{
	struct tilelru_traffic before = l2sets_dram(s, TILELRU_CLASSES), after;
	uint64_t chunks = (st->bytes + CHUNK - 1) / CHUNK;

	for (uint64_t i = 0; i < chunks; i++) {
		uint64_t rest = st->bytes - i * CHUNK;

		/* the SM side of a chunk: fixed, as one grid's blocks read the same chunks */
		l2sets_access(s, (uint64_t)st->buffer << 24 | i,
			      (uint32_t)(rest < CHUNK ? rest : CHUNK), 0, st->write,
			      (unsigned)((i * 0x9e3779b97f4a7c15ull) >> 63));
	}
	after = l2sets_dram(s, TILELRU_CLASSES);
	return (struct tilelru_traffic){ after.read_bytes - before.read_bytes,
					 after.write_bytes - before.write_bytes };
}

int
cmd_l2probe(int argc, char **argv)
{
	struct probe_args a;
	static struct step steps[MAX_STEPS];
	char names[NAMES][16];
	unsigned nnames = 0, n = 0;
	struct l2sets *s;
	const char *why;
	cJSON *root = NULL, *arr = NULL;
	FILE *out;
	int rc;

	if ((rc = parse_probe(argc, argv, &a)))
		return rc < 0 ? EXIT_OK : rc;
	if (optind == argc)
		return usage_error("l2probe", "needs at least one STEP (flush, read:NAME:SIZE, "
					      "fill:NAME:SIZE)");
	for (int i = optind; i < argc; i++, n++)
		if (n == MAX_STEPS || parse_step(argv[i], &steps[n], names, &nnames))
			return usage_error("l2probe",
					   "step '%s' is not flush, read:NAME:SIZE or "
					   "fill:NAME:SIZE (at most %d steps, %d names)",
					   argv[i], MAX_STEPS, NAMES);
	s = l2sets_create(&a.c, &why);
	if (!s)
		return why ? usage_error("l2probe", "%s", why) : print_error("out of memory");
	out = text_stream(a.json_path);
	if (a.json_path)
		arr = cJSON_AddArrayToObject(root = cJSON_CreateObject(), "steps");
	fprintf(out, "%-24s %14s %14s\n", "step", "DRAM read MiB", "written MiB");
	for (unsigned i = 0; i < n; i++) {
		struct tilelru_traffic t = run_step(s, &steps[i]);
		cJSON *o;

		fprintf(out, "%-24s %14.3f %14.3f\n", argv[optind + (int)i],
			(double)t.read_bytes / 1048576, (double)t.write_bytes / 1048576);
		if (!arr)
			continue;
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "step", argv[optind + (int)i]);
		cJSON_AddNumberToObject(o, "dram_read_bytes", (double)t.read_bytes);
		cJSON_AddNumberToObject(o, "dram_write_bytes", (double)t.write_bytes);
		cJSON_AddItemToArray(arr, o);
	}
	l2sets_destroy(s);
	if (root) {
		char err[256];

		rc = report_write_json(a.json_path, root, err, sizeof(err));
		cJSON_Delete(root);
		if (rc)
			return print_error("%s", err);
	}
	return EXIT_OK;
}
