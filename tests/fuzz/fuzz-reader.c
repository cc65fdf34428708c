/*
 * What the trace-reader harnesses check, for each input:
 *  1. Decoding with trace_reader_read() either ends cleanly or fails with a message, and keeps
 *     reader.h's contract: an access has size >= 1 and count >= 1 and does not wrap (a din
 *     reference is 4 bytes at a multiple of 4, a dinbin one at most 65535 bytes at a 32-bit
 *     address); a control event names a declared phase or array and ends its batch; the
 *     end and an error are sticky. This pass reads one event at a time, so it sees every
 *     event before an error (a failing batch returns none of its events).
 *  2. The same file opened with TRACE_FORMAT_AUTO, when the sniffer picks this format,
 *     decodes in batches of a size the input picks (so batch ends fall everywhere: lackey's
 *     M lines split) to the same events, up to the error if any, and the same message.
 *  3. The decoded events, fed one by one to cache_access(), give the counters replay_reader()
 *     gives on the same file through trace_reader_simulate(): the fused decode-and-simulate
 *     loop of memsim traces (a write-back LRU or FIFO L1) and the cache_access_refs() batches
 *     (any other model). The models are small, so a few hundred accesses evict.
 * Inputs the model is known to be slow on are decoded but not simulated (see tame()).
 */

#include "tests/fuzz/fuzz-reader.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/spec.h"
#include "base/util.h"
#include "traces/replay.h"

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz-reader: %s:%d: ", __FILE__, __LINE__);               \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* One decoded event, and how many phases the reader had declared when it was decoded
 * (replay_reader() maps the phases known at each phase switch). */
struct event {
	struct cache_ref ref;
	unsigned nphases;
};

/* Events a run decodes at most: a repeat record (format version 2) of a few bytes can hold
 * 2^38 accesses, which is a trace and not a fault, but no input for a bounded run. */
#define DECODE_MAX_EVENTS (1u << 20)

struct decoded {
	unsigned header_arrays; /* declared in the header, before any event */
	struct event *ev;
	size_t n, cap;
	bool failed;
	bool cut; /* stopped at DECODE_MAX_EVENTS */
};

static const struct {
	const char *spec;
	bool tiles_in_scratch;
} models[] = {
	/* The fused loop's 64-byte, 8-way instance. */
	{ "L1=2K:8:64,L2=8K:4:64", false },
	/* The fused loop's generic instance (FIFO, 32-byte lines) over a quiet-write-back L2. */
	{ "L1=512:2:32:fifo,L2=2K:2:64:quietwb", false },
	/* No fused loop: batches through cache_access_refs(), every policy kind once. */
	{ "I1=512:2:32,L1=1K:4:32:plru:wt:nwa,L2=4K:4:64:fifo:incl,L3=8K:8:64:random:excl", true },
};

static char path[4096];

static void
remove_scratch(void)
{
	unlink(path);
}

/* Puts the input in a scratch file that lives as long as the process: in /dev/shm where there
 * is one (a disk file costs the readers' opens half their speed), else in $TMPDIR. */
static void
write_scratch(const uint8_t *data, size_t size)
{
	static int fd = -1;

	if (fd < 0) {
		const char *tmp = getenv("TMPDIR");

		if (access("/dev/shm", W_OK) == 0)
			tmp = "/dev/shm";
		snprintf(path, sizeof(path), "%s/memsim-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		fd = mkstemp(path);
		CHECK(fd >= 0, "cannot create a scratch file in %s", path);
		atexit(remove_scratch);
	}
	CHECK(ftruncate(fd, 0) == 0, "ftruncate %s", path);
	for (size_t off = 0; off < size;) {
		ssize_t n = pwrite(fd, data + off, size - off, (off_t)off);

		CHECK(n > 0, "write %s", path);
		off += (size_t)n;
	}
}

static void
check_error(const struct trace_reader *r)
{
	const char *msg = trace_reader_error(r);

	CHECK(msg[0] != '\0', "a failed read left no message");
	CHECK(strlen(msg) < 512, "the message is not terminated");
}

/* Reads r to its end in batches of batch events into d; checks the contract on the way. */
static void
decode(struct trace_reader *r, size_t batch, struct decoded *d)
{
	struct cache_ref buf[32];

	memset(d, 0, sizeof(*d));
	d->header_arrays = trace_reader_array_count(r);
	for (;;) {
		long got = trace_reader_read(r, buf, batch);

		if (got < 0) {
			check_error(r);
			CHECK(trace_reader_read(r, buf, batch) < 0, "an error is not sticky");
			d->failed = true;
			return;
		}
		if (got == 0) {
			CHECK(trace_reader_read(r, buf, batch) == 0, "the end is not sticky");
			return;
		}
		if (d->n >= DECODE_MAX_EVENTS) {
			d->cut = true;
			return;
		}
		CHECK((size_t)got <= batch, "%ld events in a batch of %zu", got, batch);
		for (long i = 0; i < got; i++) {
			const struct cache_ref *e = &buf[i];

			if (e->kind < CACHE_OP_COUNT) {
				CHECK(e->size >= 1 && e->count >= 1, "access of size %u count %u",
				      e->size, e->count);
				CHECK(e->addr + e->size - 1 >= e->addr, "access wraps: %llx + %u",
				      (unsigned long long)e->addr, e->size);
				/* Dinero IV: 4 bytes at the address rounded down to 4. */
				CHECK(trace_reader_format(r) != TRACE_FORMAT_DIN ||
					      (e->size == 4 && e->count == 1 && !(e->addr & 3)),
				      "din reference of %u bytes at %llx", e->size,
				      (unsigned long long)e->addr);
				/* Dinero IV binary: one reference, in 32 bits, of 16-bit size. */
				CHECK(trace_reader_format(r) != TRACE_FORMAT_DINBIN ||
					      (e->count == 1 && e->size <= 0xffff &&
					       e->addr <= UINT32_MAX),
				      "dinbin reference of %u bytes at %llx, count %u", e->size,
				      (unsigned long long)e->addr, e->count);
			} else {
				CHECK(i == got - 1, "control event %ld of a batch of %ld", i, got);
				CHECK(e->kind == TRACE_EV_PHASE || e->kind == TRACE_EV_ARRAY,
				      "event kind %u", e->kind);
				CHECK(e->addr < (e->kind == TRACE_EV_PHASE
							 ? trace_reader_phase_count(r)
							 : trace_reader_array_count(r)),
				      "control event names %llu, not declared",
				      (unsigned long long)e->addr);
			}
			if (d->n == d->cap) {
				d->cap = d->cap ? 2 * d->cap : 256;
				d->ev = xrealloc(d->ev, d->cap * sizeof(*d->ev));
			}
			d->ev[d->n].ref = *e;
			d->ev[d->n].nphases = trace_reader_phase_count(r);
			d->n++;
		}
	}
}

/* An access costs a line's work per line it spans: accesses over 4 KiB (traces allow 1 MiB)
 * are left out so that the bounded runs spend their time on new inputs. The top of the
 * address space is fuzzed too (the regress-last-line seeds: it used to hang the model). */
static bool
tame(const struct decoded *d)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct cache_ref *e = &d->ev[i].ref;

		if (e->kind < CACHE_OP_COUNT && e->size > 4096)
			return false;
	}
	return true;
}

static bool
declare(struct cache *c, const struct trace_reader *r, unsigned i, bool tiles_in_scratch)
{
	const struct trace_array *a = trace_reader_array(r, i);
	bool scratch = a->space == TRACE_SPACE_SCRATCH ||
		       (a->space == TRACE_SPACE_TILE && tiles_in_scratch);

	return cache_add_array(c, a->name, a->base, a->bytes, scratch) >= 0;
}

/* replay_reader() one event at a time: returns false where it fails (too many arrays). */
static bool
mirror(struct cache *c, const struct trace_reader *r, const struct decoded *d,
       bool tiles_in_scratch)
{
	int *phase_map = NULL;
	unsigned mapped = 0;
	bool ok = true;

	for (unsigned i = 0; i < d->header_arrays && ok; i++)
		ok = declare(c, r, i, tiles_in_scratch);
	for (size_t k = 0; k < d->n && ok; k++) {
		const struct cache_ref *e = &d->ev[k].ref;

		if (e->kind < CACHE_OP_COUNT) {
			cache_access(c, e->addr, e->size, (enum cache_op)e->kind, e->count);
		} else if (e->kind == TRACE_EV_PHASE) {
			if (mapped < d->ev[k].nphases)
				phase_map =
					xrealloc(phase_map, d->ev[k].nphases * sizeof(*phase_map));
			for (; mapped < d->ev[k].nphases; mapped++)
				phase_map[mapped] =
					cache_add_phase(c, trace_reader_phase(r, mapped));
			cache_set_phase(c, phase_map[e->addr]);
		} else {
			ok = declare(c, r, (unsigned)e->addr, tiles_in_scratch);
		}
	}
	free(phase_map);
	return ok;
}

static void
same_counters(struct cache *a, struct cache *b, const char *spec)
{
	CHECK(memcmp(cache_cpu(a), cache_cpu(b), sizeof(struct cache_cpu_stats)) == 0,
	      "%s: processor counts differ between replay and one access at a time", spec);
	for (unsigned i = 0; i < cache_level_count(a); i++)
		CHECK(memcmp(cache_level_stats(a, i), cache_level_stats(b, i),
			     sizeof(struct cache_level_stats)) == 0,
		      "%s: level %s counters differ between replay and one access at a time", spec,
		      cache_level_config(a, i)->name);
	CHECK(memcmp(cache_dram(a), cache_dram(b), sizeof(struct cache_traffic)) == 0,
	      "%s: DRAM traffic differs between replay and one access at a time", spec);
	CHECK(cache_array_count(a) == cache_array_count(b), "%s: array counts differ", spec);
	for (unsigned i = 0; i < cache_array_count(a); i++)
		CHECK(memcmp(cache_array_traffic(a, i), cache_array_traffic(b, i),
			     sizeof(struct cache_traffic)) == 0,
		      "%s: array %s traffic differs", spec, cache_array_name(a, i));
	CHECK(cache_phase_count(a) == cache_phase_count(b), "%s: phase counts differ", spec);
	for (unsigned i = 0; i < cache_phase_count(a); i++)
		CHECK(memcmp(cache_phase_traffic(a, i), cache_phase_traffic(b, i),
			     sizeof(struct cache_traffic)) == 0,
		      "%s: phase %s traffic differs", spec, cache_phase_name(a, i));
}

static void
simulate(const struct decoded *d, enum trace_format format)
{
	static struct spec spec[sizeof(models) / sizeof(models[0])];
	static bool parsed;
	char err[512];

	if (!parsed) {
		for (size_t m = 0; m < sizeof(models) / sizeof(models[0]); m++)
			CHECK(spec_parse(models[m].spec, &spec[m], err, sizeof(err)) == 0, "%s: %s",
			      models[m].spec, err);
		parsed = true;
	}
	for (size_t m = 0; m < sizeof(models) / sizeof(models[0]); m++) {
		struct trace_reader *r = trace_reader_open(path, format, err, sizeof(err));
		struct cache *replayed = cache_create(&spec[m].cache);
		struct cache *one_by_one = cache_create(&spec[m].cache);
		uint64_t accesses = 0;
		bool ok_replay, ok_mirror;

		CHECK(r && replayed && one_by_one, "%s: reopening or building failed",
		      models[m].spec);
		ok_replay = replay_reader(r, replayed, models[m].tiles_in_scratch, &accesses, err,
					  sizeof(err)) == 0;
		ok_mirror = mirror(one_by_one, r, d, models[m].tiles_in_scratch);
		/* A decoding error stops replay at a batch boundary of its own choosing, so only
		 * complete runs are compared. */
		if (!d->failed) {
			CHECK(ok_replay == ok_mirror, "%s: replay %s, one at a time %s (%s)",
			      models[m].spec, ok_replay ? "succeeds" : "fails",
			      ok_mirror ? "succeeds" : "fails", ok_replay ? "" : err);
			if (ok_replay) {
				cache_flush(replayed);
				cache_flush(one_by_one);
				same_counters(replayed, one_by_one, models[m].spec);
			}
		} else {
			CHECK(!ok_replay, "%s: replay succeeds where decoding failed",
			      models[m].spec);
		}
		cache_destroy(one_by_one);
		cache_destroy(replayed);
		trace_reader_close(r);
	}
}

int
fuzz_reader_run(const uint8_t *data, size_t size, enum trace_format format)
{
	struct trace_reader *r;
	struct decoded d, sniffed;
	char err[512];

	write_scratch(data, size);
	r = trace_reader_open(path, format, err, sizeof(err));
	if (!r) {
		CHECK(err[0] && strlen(err) < sizeof(err), "open failed without a message");
		return 0;
	}
	decode(r, 1, &d);

	/* The sniffer, and batches of 1 to 32 events. */
	{
		struct trace_reader *a =
			trace_reader_open(path, TRACE_FORMAT_AUTO, err, sizeof(err));

		if (a && trace_reader_format(a) == format) {
			bool cut;

			decode(a, 1 + size % 32, &sniffed);
			cut = d.cut || sniffed.cut; /* then they agree on what both decoded */
			/* A failing batch returns none of its events, so after an error the two
			 * runs agree on a prefix only, and on the message. */
			CHECK(cut || sniffed.failed == d.failed,
			      "sniffed: %s; given the format: %s",
			      sniffed.failed ? trace_reader_error(a) : "no error",
			      d.failed ? trace_reader_error(r) : "no error");
			CHECK(cut || d.failed || sniffed.n == d.n,
			      "sniffed: %zu events, given the format %zu", sniffed.n, d.n);
			CHECK(cut || !d.failed ||
				      strcmp(trace_reader_error(a), trace_reader_error(r)) == 0,
			      "sniffed: '%s', given the format: '%s'", trace_reader_error(a),
			      trace_reader_error(r));
			for (size_t i = 0; i < d.n && i < sniffed.n; i++)
				CHECK(memcmp(&sniffed.ev[i].ref, &d.ev[i].ref,
					     sizeof(struct cache_ref)) == 0,
				      "event %zu differs when sniffed", i);
			free(sniffed.ev);
		}
		trace_reader_close(a);
	}

	if (tame(&d) && !d.cut)
		simulate(&d, format);
	free(d.ev);
	trace_reader_close(r);
	return 0;
}
