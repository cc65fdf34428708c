#include "kernels/attn.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/progress.h"
#include "base/util.h"
#include "kernels/pace.h"

static const char *kernel_names[] = { "naive", "flash1", "flash2", "proj", "flashdecode" };
static const char *dtype_names[] = { "fp32", "fp16", "bf16" };

const char *
attn_kernel_name(enum attn_kernel k)
{
	return kernel_names[k];
}

const char *
attn_dtype_name(enum attn_dtype t)
{
	return dtype_names[t];
}

const char *
attn_splits_source_name(enum attn_splits_source s)
{
	return s == ATTN_SPLITS_HEURISTIC ? "heuristic" : s == ATTN_SPLITS_CPU ? "cpu" : "given";
}

bool
attn_kernel_parse(const char *s, enum attn_kernel *out)
{
	for (int k = 0; k < ATTN_KERNEL_COUNT; k++)
		if (strcasecmp(s, kernel_names[k]) == 0) {
			*out = (enum attn_kernel)k;
			return true;
		}
	return false;
}

bool
attn_dtype_parse(const char *s, enum attn_dtype *out)
{
	for (int t = 0; t <= ATTN_BF16; t++)
		if (strcasecmp(s, dtype_names[t]) == 0) {
			*out = (enum attn_dtype)t;
			return true;
		}
	return false;
}

/* a * b, or false on overflow. */
static bool
mul(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

/* Sizes of the memory arrays, in bytes; false if any overflows. */
struct sizes {
	uint64_t q, kv, s, rowvec, x, wq, wkv;
	uint64_t oacc, lseacc; /* flashdecode, S > 1: the partial O and logsumexp, fp32 */
	uint64_t bt;           /* paged: the block table, int32 */
	uint64_t tile_q, tile_kv, tile_s, tile_vec, tile_row, tile_lse; /* fp32 tiles */
};

static bool
array_sizes(const struct attn_config *c, struct sizes *z)
{
	uint64_t s = dtype_bytes(c->dtype), nk = attn_nkv(c), bh, bkv, nd, nkd, nn, dm, dkv, rows;

	memset(z, 0, sizeof(*z));
	/* paged: the pool's pages x P rows of each (batch, kv head), and the table */
	if (c->kv_page && (!mul(attn_pages(c), c->kv_page, &rows) ||
			   !mul(c->batch, attn_pages(c), &z->bt) || !mul(z->bt, 4, &z->bt)))
		return false;
	if (!c->kv_page)
		rows = nk;
	if (!mul(c->batch, c->heads, &bh) || !mul(c->batch, c->kv_heads, &bkv) ||
	    !mul(c->N, c->d, &nd) || !mul(rows, c->d, &nkd) || !mul(bh, nd, &z->q) ||
	    !mul(z->q, s, &z->q) || !mul(bkv, nkd, &z->kv) || !mul(z->kv, s, &z->kv) ||
	    !mul(bh, c->N, &z->rowvec) || !mul(z->rowvec, 4, &z->rowvec) ||
	    !mul(c->heads, c->d, &dm) || !mul(c->kv_heads, c->d, &dkv))
		return false;
	if (!mul(c->Br, c->d, &z->tile_q) || !mul(z->tile_q, 4, &z->tile_q) ||
	    !mul(c->Bc, c->d, &z->tile_kv) || !mul(z->tile_kv, 4, &z->tile_kv) ||
	    !mul(c->Br, c->Bc, &z->tile_s) || !mul(z->tile_s, 4, &z->tile_s) ||
	    !mul(c->Br, 4, &z->tile_vec) || !mul(nk, 4, &z->tile_row))
		return false;
	if (c->kernel == ATTN_NAIVE &&
	    (!mul(c->N, nk, &nn) || !mul(bh, nn, &z->s) || !mul(z->s, s, &z->s)))
		return false;
	if (c->kernel == ATTN_FLASHDECODE) {
		uint64_t S = attn_splits(c);

		/* S = 1 writes O and lse directly: no partial arrays */
		if (S > 1 && (!mul(z->rowvec, S, &z->lseacc) || !mul(z->q / s, S, &z->oacc) ||
			      !mul(z->oacc, 4, &z->oacc)))
			return false;
		z->tile_lse = S * 4;
	}
	if (c->kernel == ATTN_PROJ &&
	    (!mul(c->batch, c->N, &z->x) || !mul(z->x, dm, &z->x) || !mul(z->x, s, &z->x) ||
	     !mul(dm, dm, &z->wq) || !mul(z->wq, s, &z->wq) || !mul(dm, dkv, &z->wkv) ||
	     !mul(z->wkv, s, &z->wkv)))
		return false;
	return true;
}

/* a + b, or UINT64_MAX where that overflows. */
static uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t
attn_array_bytes(const struct attn_config *c)
{
	struct sizes z;
	uint64_t total;

	if (!array_sizes(c, &z))
		return UINT64_MAX;
	/* Every sum saturates: a size past 2^64 must read as too large, never wrap to small. */
	total = sat_add(sat_add(sat_add(z.q, z.q), sat_add(z.kv, z.kv)), z.bt);
	switch (c->kernel) {
	case ATTN_NAIVE:
		total = sat_add(total, z.s);
		if (c->softmax_separate)
			total = sat_add(total, z.s);
		break;
	case ATTN_FLASH1:
		total = sat_add(total, sat_add(z.rowvec, z.rowvec));
		break;
	case ATTN_FLASH2:
		total = sat_add(total, z.rowvec);
		break;
	case ATTN_FLASHDECODE:
		total = sat_add(sat_add(total, z.rowvec), sat_add(z.oacc, z.lseacc));
		break;
	default:
		total = sat_add(total, sat_add(sat_add(z.x, z.x), sat_add(z.wq, z.wq)));
		total = sat_add(total, sat_add(z.wkv, z.wkv));
		break;
	}
	return total;
}

/* attn_config_check(); need_memory false checks only that the arrays' size fits in 64 bits. */
static int
config_check(const struct attn_config *c, bool need_memory, char *err, size_t errlen)
{
	static const struct {
		const char *opt;
		size_t off;
	} nonzero[] = {
		{ "--N", offsetof(struct attn_config, N) },
		{ "--d", offsetof(struct attn_config, d) },
		{ "--heads", offsetof(struct attn_config, heads) },
		{ "--kv-heads", offsetof(struct attn_config, kv_heads) },
		{ "--batch", offsetof(struct attn_config, batch) },
		{ "--Br", offsetof(struct attn_config, Br) },
		{ "--Bc", offsetof(struct attn_config, Bc) },
	};
	uint64_t bytes, avail;

	for (size_t i = 0; i < sizeof(nonzero) / sizeof(nonzero[0]); i++) {
		uint64_t v;

		memcpy(&v, (const char *)c + nonzero[i].off, sizeof(v));
		if (v == 0) {
			snprintf(err, errlen, "%s must be at least 1", nonzero[i].opt);
			return -EINVAL;
		}
	}
	if (c->heads % c->kv_heads) {
		snprintf(err, errlen, "--kv-heads %llu does not divide --heads %llu",
			 (unsigned long long)c->kv_heads, (unsigned long long)c->heads);
		return -EINVAL;
	}
	if (c->N_kv != 0 && c->N_kv != c->N &&
	    (c->kernel == ATTN_FLASH1 || c->kernel == ATTN_PROJ)) {
		snprintf(err, errlen, "--N-kv %llu != --N %llu: kernel %s takes N_kv = N only",
			 (unsigned long long)c->N_kv, (unsigned long long)c->N,
			 attn_kernel_name(c->kernel));
		return -EINVAL;
	}
	if (c->kernel == ATTN_PROJ && c->causal) {
		/* as a sweep leaves such rows out: a run labelled causal would mask nothing */
		snprintf(err, errlen, "--causal is for the attention kernels: proj has no causal mask");
		return -EINVAL;
	}
	if (c->kernel == ATTN_FLASHDECODE && c->softmax_separate) {
		snprintf(err, errlen, "--softmax-separate is for --kernel naive, not flashdecode");
		return -EINVAL;
	}
	if (c->splits > 1 && c->kernel != ATTN_FLASHDECODE) {
		snprintf(err, errlen, "--splits is for --kernel flashdecode, not %s",
			 attn_kernel_name(c->kernel));
		return -EINVAL;
	}
	if (c->kv_page && c->kernel != ATTN_FLASH2 && c->kernel != ATTN_FLASHDECODE) {
		snprintf(err, errlen, "--kv-page is for --kernel flash2 or flashdecode, not %s",
			 attn_kernel_name(c->kernel));
		return -EINVAL;
	}
	/* the table's entries are int32, as vLLM's and FlashAttention's */
	if (c->kv_page && (c->batch > INT32_MAX || attn_pages(c) > INT32_MAX / c->batch)) {
		snprintf(err, errlen,
			 "--kv-page %llu: %llu pages a sequence x batch %llu is past the int32 "
			 "block table's 2^31 pages",
			 (unsigned long long)c->kv_page, (unsigned long long)attn_pages(c),
			 (unsigned long long)c->batch);
		return -EINVAL;
	}
	if (c->causal && c->N > attn_nkv(c)) {
		snprintf(
			err, errlen,
			"--causal with --N %llu > --N-kv %llu: the end-aligned mask leaves the first "
			"query rows no key",
			(unsigned long long)c->N, (unsigned long long)attn_nkv(c));
		return -EINVAL;
	}
	if (c->d > 65536 || c->Br > (1u << 20) || c->Bc > (1u << 20)) {
		snprintf(err, errlen, "--d, --Br and --Bc are limited to 65536, 2^20, 2^20");
		return -EINVAL;
	}
	bytes = attn_data_bytes(c);
	avail = mem_available_bytes();
	if (bytes == UINT64_MAX || (need_memory && bytes > avail / 10 * 9)) {
		char want[32], have[32];

		if (bytes == UINT64_MAX)
			snprintf(want, sizeof(want), "more than 2^64 bytes");
		else
			snprintf(want, sizeof(want), "%.1f GiB", (double)bytes / (1u << 30));
		snprintf(have, sizeof(have), "%.1f GiB", (double)avail / (1u << 30));
		snprintf(err, errlen,
			 "%s N=%llu d=%llu heads=%llu batch=%llu %s: the arrays and tiles need %s; "
			 "%s of memory is available",
			 attn_kernel_name(c->kernel), (unsigned long long)c->N,
			 (unsigned long long)c->d, (unsigned long long)c->heads,
			 (unsigned long long)c->batch, attn_dtype_name(c->dtype), want, have);
		return -ENOMEM;
	}
	return 0;
}

int
attn_config_check(const struct attn_config *c, char *err, size_t errlen)
{
	return config_check(c, true, err, errlen);
}

int
attn_config_check_trace_only(const struct attn_config *c, char *err, size_t errlen)
{
	return config_check(c, false, err, errlen);
}

/* The arena that holds a run's arrays and tiles: one mapping whose start is aligned to
 * ARENA_ALIGN, each array at the next multiple of ARENA_PAGE after the one before, in a fixed
 * order. Set indices depend on address bits below a cache's sets x line (at most 2^30 for any
 * cache a spec can describe sensibly): with the base aligned past them, a configuration's
 * addresses map to the same sets in every run, whatever the process allocated before, under
 * ASLR, and under Valgrind. Page alignment also gives every array lines of its own for any
 * line size up to 4 KiB, so DRAM traffic is attributed to the right array. */
#define ARENA_ALIGN (UINT64_C(1) << 30)
#define ARENA_PAGE UINT64_C(4096)
#define ARENA_MAX_SLOTS 26

/* One array of the arena: where its address goes and its size in bytes. */
struct arena_slot {
	void **p;
	uint64_t bytes;
};

/* The arrays and tiles of run c, in the arena's order; *n of them. */
static unsigned
arena_slots(const struct attn_config *c, struct attn_data *d, const struct sizes *z,
	    struct arena_slot *out)
{
	bool attention = c->kernel != ATTN_PROJ;
	unsigned n = 0;

#define SLOT(field, size) (out[n++] = (struct arena_slot){ (void **)&d->field, (size) })
	SLOT(Q, z->q);
	SLOT(K, z->kv);
	SLOT(V, z->kv);
	SLOT(O, z->q);
	if (c->kernel == ATTN_NAIVE) {
		SLOT(S, z->s);
		if (c->softmax_separate)
			SLOT(P, z->s);
		SLOT(row, z->tile_row);
	}
	if (c->kernel == ATTN_FLASH1) {
		SLOT(m, z->rowvec);
		SLOT(l, z->rowvec);
	}
	if (c->kernel == ATTN_FLASH2 || c->kernel == ATTN_FLASHDECODE)
		SLOT(lse, z->rowvec);
	if (c->kv_page)
		SLOT(block_table, z->bt);
	if (c->kernel == ATTN_FLASHDECODE) {
		SLOT(Oacc, z->oacc);
		SLOT(lseacc, z->lseacc);
		SLOT(row, z->tile_lse);
	}
	if (c->kernel == ATTN_PROJ) {
		SLOT(x, z->x);
		SLOT(y, z->x);
		SLOT(Wq, z->wq);
		SLOT(Wo, z->wq);
		SLOT(Wk, z->wkv);
		SLOT(Wv, z->wkv);
	}
	SLOT(Qt, z->tile_q);
	SLOT(Kt, z->tile_kv);
	SLOT(St, z->tile_s);
	if (attention) {
		SLOT(Vt, z->tile_kv);
		SLOT(Ot, z->tile_q);
	}
	if (c->kernel == ATTN_FLASH1 || c->kernel == ATTN_FLASH2 || c->kernel == ATTN_FLASHDECODE) {
		SLOT(mt, z->tile_vec);
		SLOT(lt, z->tile_vec);
	}
#undef SLOT
	return n;
}

/* The arena's size: every slot rounded up to whole pages; UINT64_MAX when it overflows. */
static uint64_t
arena_bytes(const struct arena_slot *slots, unsigned n)
{
	uint64_t total = 0;

	for (unsigned i = 0; i < n; i++) {
		uint64_t pages = slots[i].bytes / ARENA_PAGE + (slots[i].bytes % ARENA_PAGE != 0);

		if (pages > (UINT64_MAX - total) / ARENA_PAGE)
			return UINT64_MAX;
		total += pages * ARENA_PAGE;
	}
	return total;
}

uint64_t
attn_data_bytes(const struct attn_config *c)
{
	struct arena_slot slots[ARENA_MAX_SLOTS];
	struct attn_data d;
	struct sizes z;

	if (!array_sizes(c, &z))
		return UINT64_MAX;
	return arena_bytes(slots, arena_slots(c, &d, &z, slots));
}

void *
attn_tiles_alloc(const struct attn_data *d, struct attn_data *v)
{
	const struct attn_config *c = &d->cfg;
	struct tile {
		float **to;
		const float *from;
		uint64_t bytes;
	} tiles[8];
	struct sizes z;
	uint64_t total = 0;
	unsigned n = 0;
	char *block;

	if (!array_sizes(c, &z))
		return NULL;
#define TILE(field, size) (tiles[n++] = (struct tile){ &v->field, d->field, (size) })
	TILE(Qt, z.tile_q);
	TILE(Kt, z.tile_kv);
	TILE(Vt, z.tile_kv);
	TILE(St, z.tile_s);
	TILE(Ot, z.tile_q);
	TILE(mt, z.tile_vec);
	TILE(lt, z.tile_vec);
	TILE(row, c->kernel == ATTN_FLASHDECODE ? z.tile_lse : z.tile_row);
#undef TILE
	for (unsigned i = 0; i < n; i++)
		total += (tiles[i].bytes + 63) / 64 * 64;
	block = total && total <= SIZE_MAX ? aligned_alloc(64, (size_t)total) : NULL;
	if (!block)
		return NULL;
	total = 0;
	for (unsigned i = 0; i < n; i++) {
		/* only the tiles d has: a kernel's unused ones stay NULL */
		*tiles[i].to = tiles[i].from ? (float *)(block + total) : NULL;
		total += (tiles[i].bytes + 63) / 64 * 64;
	}
	return block;
}

static uint64_t splitmix(uint64_t *s);

void
attn_block_table_shuffle(const struct attn_config *c, int32_t *pages)
{
	const uint64_t n = c->batch * attn_pages(c);
	/* a stream of its own: the inputs' values come from the same seed */
	uint64_t rng = c->kv_seed ^ UINT64_C(0x6a09e667f3bcc909);

	for (uint64_t i = 0; i < n; i++)
		pages[i] = (int32_t)i;
	for (uint64_t i = n; i > 1; i--) {
		uint64_t j = splitmix(&rng) % i;
		int32_t v = pages[i - 1];

		pages[i - 1] = pages[j];
		pages[j] = v;
	}
}

/* The paged run's block table: a permutation of the pool's pages from kv_seed
 * (Fisher-Yates), on the heap (d->pages) and, with values, in the arena. Returns 0, or
 * -ENOMEM (the heap copy is needed even trace-only, where the arena holds no values). */
static int
block_table_fill(struct attn_data *d)
{
	const uint64_t n = d->cfg.batch * attn_pages(&d->cfg);

	d->pages = n <= SIZE_MAX / sizeof(*d->pages) ? malloc(n * sizeof(*d->pages)) : NULL;
	if (!d->pages)
		return -ENOMEM;
	attn_block_table_shuffle(&d->cfg, d->pages);
	if (!d->trace_only)
		memcpy(d->block_table, d->pages, n * sizeof(*d->pages));
	return 0;
}

/* attn_data_create(), or with trace_only attn_data_create_trace_only(). */
static struct attn_data *
create(const struct attn_config *c, bool trace_only, char *err, size_t errlen)
{
	struct arena_slot slots[ARENA_MAX_SLOTS];
	struct attn_data *d;
	struct sizes z;
	uint64_t total, off = 0;
	unsigned n;
	char *map, *base;
	int fd;

	if (config_check(c, !trace_only, err, errlen))
		return NULL;
	array_sizes(c, &z);
	d = xzalloc(sizeof(*d));
	d->cfg = *c;
	d->trace_only = trace_only;
	n = arena_slots(c, d, &z, slots);
	total = arena_bytes(slots, n);
	/* Reserve the arena and the alignment's slack, then give the slack back. */
	/* A private mapping of /dev/zero: anonymous memory in POSIX terms. A trace-only run gets
	 * the same layout that nothing may read or write: the kernels only form addresses in
	 * it, and a private mapping nobody may write commits no memory (Linux charges only
	 * writable ones), so arrays far past memory fit in the address space. */
	fd = open("/dev/zero", O_RDWR | O_CLOEXEC);
	map = fd >= 0 && total <= SIZE_MAX - ARENA_ALIGN
		      ? mmap(NULL, (size_t)(total + ARENA_ALIGN),
			     trace_only ? PROT_NONE : PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0)
		      : MAP_FAILED;
	if (fd >= 0)
		close(fd);
	if (map == MAP_FAILED) {
		/* What is asked for is the arrays plus the alignment's slack: say both, so that a
		 * small run refused under a memory limit does not read "cannot map 0.0 GiB". */
		snprintf(err, errlen,
			 "cannot map %.2f GiB %sfor the arrays and tiles (%.2f GiB with the 1 GiB "
			 "alignment the arena reserves): %s",
			 (double)total / (1u << 30), trace_only ? "of address space " : "",
			 (double)(total + ARENA_ALIGN) / (1u << 30), strerror(errno));
		free(d);
		return NULL;
	}
	base = map + ((ARENA_ALIGN - (uintptr_t)map % ARENA_ALIGN) % ARENA_ALIGN);
	if (base > map)
		munmap(map, (size_t)(base - map));
	if (base + total < map + total + ARENA_ALIGN)
		munmap(base + total, (size_t)(map + total + ARENA_ALIGN - (base + total)));
	d->arena = base;
	d->arena_bytes = (size_t)total;
	for (unsigned i = 0; i < n; i++) {
		*slots[i].p = slots[i].bytes ? base + off : NULL;
		off += (slots[i].bytes + ARENA_PAGE - 1) / ARENA_PAGE * ARENA_PAGE;
	}
	if (!c->softmax_separate)
		d->P = d->S;
	if (c->kv_page && block_table_fill(d)) {
		snprintf(err, errlen, "cannot allocate the block table of %llu pages (%.2f GiB)",
			 (unsigned long long)(c->batch * attn_pages(c)),
			 (double)(c->batch * attn_pages(c) * 4) / (1u << 30));
		attn_data_destroy(d);
		return NULL;
	}
	return d;
}

struct attn_data *
attn_data_create(const struct attn_config *c, char *err, size_t errlen)
{
	return create(c, false, err, errlen);
}

struct attn_data *
attn_data_create_trace_only(const struct attn_config *c, char *err, size_t errlen)
{
	return create(c, true, err, errlen);
}

void
attn_data_destroy(struct attn_data *d)
{
	if (!d)
		return;
	if (d->arena_bytes)
		munmap(d->arena, d->arena_bytes);
	free(d->pages);
	free(d);
}

static uint64_t
splitmix(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform in [-scale, scale). */
static void
fill(void *p, uint64_t bytes, enum attn_dtype t, uint64_t *rng, double scale)
{
	uint64_t n = bytes / dtype_bytes(t);

	if (!p)
		return;
	for (uint64_t i = 0; i < n; i++)
		dtype_store(p, i, (float)(scale * ((double)(splitmix(rng) >> 11) * 0x1p-52 - 1.0)),
			    t);
}

/* K or V: the values an unpaged run draws, row by row in [batch][kv_heads][N_kv][d] order,
 * each row where attn_kv_row() puts it: a paged run gets the same keys and values. */
static void
fill_kv(struct attn_data *d, void *base, uint64_t *rng)
{
	const struct attn_config *c = &d->cfg;

	for (uint64_t b = 0; b < c->batch; b++)
		for (uint64_t h = 0; h < c->kv_heads; h++)
			for (uint64_t j = 0; j < attn_nkv(c); j++)
				fill((char *)base + attn_kv_row(c, d->pages, b, h, j) *
							    dtype_bytes(c->dtype),
				     c->d * dtype_bytes(c->dtype), c->dtype, rng, 1.0);
}

void
attn_data_fill(struct attn_data *d, uint64_t seed)
{
	const struct attn_config *c = &d->cfg;
	struct sizes z;
	uint64_t rng = seed;

	if (d->trace_only)
		return;
	array_sizes(c, &z);
	if (c->kernel == ATTN_PROJ) {
		/* Weights scaled by 1/sqrt(fan-in), as a layer is initialized, keep the outputs
		 * of order one like the inputs. */
		double w = 1.0 / sqrt((double)(c->heads * c->d));

		fill(d->x, z.x, c->dtype, &rng, 1.0);
		fill(d->Wq, z.wq, c->dtype, &rng, w);
		fill(d->Wk, z.wkv, c->dtype, &rng, w);
		fill(d->Wv, z.wkv, c->dtype, &rng, w);
		fill(d->Wo, z.wq, c->dtype, &rng, w);
		fill(d->O, z.q, c->dtype, &rng, 1.0);
		return;
	}
	fill(d->Q, z.q, c->dtype, &rng, 1.0);
	fill_kv(d, d->K, &rng);
	fill_kv(d, d->V, &rng);
}

static void
poison(void *p, uint64_t bytes)
{
	/* 0xff bytes are a NaN in fp32, fp16 and bf16 alike. */
	if (p)
		memset(p, 0xff, bytes);
}

void
attn_data_poison(struct attn_data *d)
{
	const struct attn_config *c = &d->cfg;
	struct sizes z;

	if (d->trace_only)
		return;
	array_sizes(c, &z);
	if (c->kernel == ATTN_PROJ) {
		poison(d->Q, z.q);
		poison(d->K, z.kv);
		poison(d->V, z.kv);
		poison(d->y, z.x);
		return;
	}
	poison(d->O, z.q);
	poison(d->S, z.s);
	if (d->P != d->S)
		poison(d->P, z.s);
	poison(d->m, z.rowvec);
	poison(d->l, z.rowvec);
	poison(d->lse, z.rowvec);
	poison(d->Oacc, z.oacc);
	poison(d->lseacc, z.lseacc);
}

void attn_dispatch_native(struct attn_data *d, struct trace_ctx *t);
void attn_dispatch_traced(struct attn_data *d, struct trace_ctx *t);
int attn_dispatch_phase_native(struct attn_data *d, struct trace_ctx *t, unsigned phase);
void attn_trace_only_dispatch(struct attn_data *d, struct trace_ctx *t);
int attn_trace_only_dispatch_phase(struct attn_data *d, struct trace_ctx *t, unsigned phase);

/* In the order each kernel runs them; kernels/dispatch.c numbers them the same way. */
static const char *const phase_names[ATTN_KERNEL_COUNT][4] = {
	[ATTN_NAIVE] = { "scores", "softmax", "av", NULL },
	[ATTN_FLASH1] = { "init", "flash_tile", NULL },
	[ATTN_FLASH2] = { "flash_tile", NULL },
	[ATTN_PROJ] = { "qkv_proj", "out_proj", NULL },
	[ATTN_FLASHDECODE] = { "splits", "combine", NULL },
};

const char *
attn_phase_name(enum attn_kernel k, unsigned i)
{
	if ((unsigned)k >= ATTN_KERNEL_COUNT || i >= 4)
		return NULL;
	return phase_names[k][i];
}

/* Index of phase in kernel k's list, or -EINVAL. */
static int
phase_index(enum attn_kernel k, const char *phase)
{
	const char *name;

	for (unsigned i = 0; (name = attn_phase_name(k, i)); i++)
		if (strcmp(name, phase) == 0)
			return (int)i;
	return -EINVAL;
}

int
attn_evict_caches(uint64_t bytes)
{
	volatile const unsigned char *p;
	unsigned char *buf;
	unsigned sum = 0;

	if (bytes == 0)
		return 0;
	buf = malloc(bytes);
	if (!buf)
		return -ENOMEM;
	/* Written first: untouched pages would all map to the zero page and evict nothing. */
	memset(buf, 1, bytes);
	p = buf;
	for (uint64_t i = 0; i < bytes; i += 32)
		sum += p[i];
	free(buf);
	return sum == 0 ? -EIO : 0; /* never: keeps the reads */
}

void
attn_run_native(struct attn_data *d)
{
	/* Trace-only arrays fault on any access; no command runs them natively. */
	assert(!d->trace_only);
	attn_dispatch_native(d, NULL);
}

void
attn_run_traced(struct attn_data *d, struct trace_ctx *t)
{
	attn_pace(d, t);
	if (d->trace_only)
		attn_trace_only_dispatch(d, t);
	else
		attn_dispatch_traced(d, t);
	trace_flush(t);
	progress_end();
}

void attn_declare_traced(const struct attn_data *d, struct trace_ctx *t);
int attn_dispatch_phase_traced(struct attn_data *d, struct trace_ctx *t, unsigned phase);

int
attn_run_traced_phase(struct attn_data *d, struct trace_ctx *t, unsigned i)
{
	int rc;

	/* flash2's one phase is its whole kernel, which declares the arrays itself */
	if (d->cfg.kernel != ATTN_FLASH2)
		attn_declare_traced(d, t);
	rc = d->trace_only ? attn_trace_only_dispatch_phase(d, t, i)
			   : attn_dispatch_phase_traced(d, t, i);
	trace_flush(t);
	return rc;
}

int
attn_run_native_phase(struct attn_data *d, const char *phase)
{
	int i = phase_index(d->cfg.kernel, phase);

	assert(!d->trace_only);
	if (i < 0)
		return i;
	return attn_dispatch_phase_native(d, NULL, (unsigned)i);
}

/* Scores of one head: N N_kv, or under the end-aligned causal mask row i's i + 1 + N_kv - N. */
static double
head_scores(const struct attn_config *c)
{
	double N = (double)c->N, Nk = (double)attn_nkv(c);

	return c->causal ? N * (N + 1) / 2 + N * (Nk - N) : N * Nk;
}

/* flashdecode's combine, S > 1: per query row and split, the max, the subtract, exp and sum of
 * the logsumexp, the subtract and exp of the scale and the 2 d of O += scale O_s. */
static double
combine_flops(const struct attn_config *c)
{
	double S = (double)attn_splits(c);

	if (c->kernel != ATTN_FLASHDECODE || S < 2)
		return 0;
	return (double)c->batch * (double)c->heads * (double)c->N * S * (2 * (double)c->d + 6);
}

double
attn_flops(const struct attn_config *c)
{
	double bh = (double)c->batch * (double)c->heads, N = (double)c->N, d = (double)c->d;
	double scores = head_scores(c);

	if (c->kernel == ATTN_PROJ) {
		double dm = (double)c->heads * d, dkv = (double)c->kv_heads * d;

		return 2.0 * (double)c->batch * N * dm * (2 * dm + 2 * dkv);
	}
	/* QK^T and PV: 2 d FLOPs per score each; softmax: max, subtract, exp, sum, divide. */
	return bh * scores * (4 * d + 5) + combine_flops(c);
}

double
attn_phase_flops(const struct attn_config *c, const char *phase)
{
	double bh = (double)c->batch * (double)c->heads, N = (double)c->N, d = (double)c->d;
	double scores = head_scores(c);
	double dm = (double)c->heads * d, dkv = (double)c->kv_heads * d;

	if (phase_index(c->kernel, phase) < 0)
		return NAN;
	if (strcmp(phase, "qkv_proj") == 0)
		return 2.0 * (double)c->batch * N * dm * (dm + 2 * dkv);
	if (strcmp(phase, "out_proj") == 0)
		return 2.0 * (double)c->batch * N * dm * dm;
	if (strcmp(phase, "scores") == 0 || strcmp(phase, "av") == 0)
		return bh * scores * 2 * d;
	if (strcmp(phase, "softmax") == 0)
		return bh * scores * 5;
	if (strcmp(phase, "flash_tile") == 0)
		return attn_flops(c);
	if (strcmp(phase, "splits") == 0)
		return bh * scores * (4 * d + 5);
	if (strcmp(phase, "combine") == 0)
		return combine_flops(c);
	return 0; /* flash1's init: stores only */
}
