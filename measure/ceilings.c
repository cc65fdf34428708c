/*
 * Measured ceilings: STREAM-like triad bandwidth and FMA-bound peak FLOP/s, on one core and
 * on all cores.
 *
 * Notes:
 * - Threads form a team: the caller's thread is member 0, the others are started for the
 *   measurement and joined after it. A start gate holds every member until all exist, so a
 *   failed pthread_create() leaves no thread waiting on a barrier. Each repetition is timed
 *   by member 0 between two barriers: from the moment every member may start to the moment
 *   the last one is done, as STREAM times its parallel loops.
 * - The arrays are first touched by the team that later runs the all-cores triad, each
 *   member its own slice, so on a NUMA machine the pages sit by the cores that stream them.
 * - The triad's values stay exact (b = 2, c = 0.5, s = 3: a = 3.5), and are checked after
 *   the last repetition.
 */

#include "config.h"

#include <cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CEILINGS_X86 1
#else
#define CEILINGS_X86 0
#endif

#include "base/progress.h"
#include "base/util.h"
#include "measure/ceilings.h"
#include "sim/spec.h"

/* The progress line's steps: the triad's first touch, its runs on one core and on all, the
 * FLOP loop's calibration, its runs on one core and on all. */
#define STEPS 6

static void
step(unsigned done)
{
	progress_report((double)done / STEPS, done, STEPS, "steps");
}

#define MAX_THREADS 256
#define QUICK_TOTAL_BYTES (UINT64_C(256) << 20)

/* ---- host ---- */

char *
ceilings_cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512], model[256] = "unknown";

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "model name : %255[^\n]", model) == 1)
			break;
	if (f)
		fclose(f);
	snprintf(buf, len, "%s", model);
	return buf;
}

unsigned
ceilings_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (unsigned)n;
}

uint64_t
ceilings_mem_available(void)
{
	return mem_available_bytes();
}

uint64_t
ceilings_array_bytes(uint64_t llc_bytes, uint64_t mem_available, bool quick, char *note,
		     size_t notelen)
{
	uint64_t want = quick ? llc_bytes * 4 : llc_bytes * 4 + llc_bytes / 4;
	uint64_t cap = mem_available / 2 / 3, bytes;
	double ratio;
	char b[24];

	if (quick && cap > QUICK_TOTAL_BYTES / 3)
		cap = QUICK_TOTAL_BYTES / 3;
	bytes = (want < cap ? want : cap) & ~UINT64_C(4095);
	if (bytes < 4096)
		bytes = 4096;
	ratio = (double)bytes / (double)(llc_bytes ? llc_bytes : 1);
	if (!note || !notelen)
		return bytes;
	note[0] = '\0';
	if (quick)
		snprintf(note, notelen,
			 "quick: arrays of %.1f MiB (%.2fx the %.1f MiB last-level cache; at most "
			 "256 MiB for the three)%s, fewer repetitions, shorter FLOP runs",
			 (double)bytes / 1048576.0, ratio, (double)llc_bytes / 1048576.0,
			 ratio < 4 ? ", so the triad runs partly from cache: not a DRAM bandwidth"
				   : "");
	else if (bytes < want)
		snprintf(
			note, notelen,
			"memory is short: MemAvailable is %.1f GiB, so each array is %.1f MiB (the "
			"three at most half of it) instead of %s, %.2fx the last-level cache",
			(double)mem_available / 1073741824.0, (double)bytes / 1048576.0,
			format_size_bytes(want & ~UINT64_C(4095), b, sizeof(b)), ratio);
	return bytes;
}

/* ---- a team of threads ---- */

struct team {
	unsigned threads;
	pthread_barrier_t barrier;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int gate; /* 0 wait, 1 go, -1 give up */
	void (*work)(struct team *tm, unsigned id);
	void *arg;
};

struct member {
	struct team *tm;
	unsigned id;
};

static void *
member_main(void *p)
{
	struct member *m = p;
	struct team *tm = m->tm;
	int gate;

	pthread_mutex_lock(&tm->lock);
	while (tm->gate == 0)
		pthread_cond_wait(&tm->cond, &tm->lock);
	gate = tm->gate;
	pthread_mutex_unlock(&tm->lock);
	if (gate > 0)
		tm->work(tm, m->id);
	return NULL;
}

static void
open_gate(struct team *tm, int gate)
{
	pthread_mutex_lock(&tm->lock);
	tm->gate = gate;
	pthread_cond_broadcast(&tm->cond);
	pthread_mutex_unlock(&tm->lock);
}

/* Runs work(tm, id) on `threads` threads, id 0 on the caller's. Returns 0 or a negative
 * errno (threads could not be started; then work ran nowhere). */
static int
team_run(unsigned threads, void (*work)(struct team *tm, unsigned id), void *arg)
{
	struct team tm = { .threads = threads, .work = work, .arg = arg };
	pthread_t tid[MAX_THREADS];
	struct member m[MAX_THREADS];
	unsigned started = 0;
	int rc = 0;

	if (threads < 1 || threads > MAX_THREADS)
		return -EINVAL;
	if ((rc = pthread_barrier_init(&tm.barrier, NULL, threads)))
		return -rc;
	pthread_mutex_init(&tm.lock, NULL);
	pthread_cond_init(&tm.cond, NULL);
	for (unsigned i = 1; i < threads; i++) {
		m[i].tm = &tm;
		m[i].id = i;
		if ((rc = pthread_create(&tid[i], NULL, member_main, &m[i])))
			break;
		started++;
	}
	if (rc) {
		open_gate(&tm, -1);
		rc = -rc;
	} else {
		open_gate(&tm, 1);
		work(&tm, 0);
	}
	for (unsigned i = 1; i <= started; i++)
		pthread_join(tid[i], NULL);
	pthread_cond_destroy(&tm.cond);
	pthread_mutex_destroy(&tm.lock);
	pthread_barrier_destroy(&tm.barrier);
	return rc;
}

/* [lo, hi) of n items for member id of threads. */
static void
slice(uint64_t n, unsigned id, unsigned threads, uint64_t *lo, uint64_t *hi)
{
	*lo = n / threads * id + (id < n % threads ? id : n % threads);
	*hi = *lo + n / threads + (id < n % threads ? 1 : 0);
}

static double
best(const double *t, unsigned n)
{
	double b = t[0];

	for (unsigned i = 1; i < n; i++)
		b = t[i] < b ? t[i] : b;
	return b;
}

/* (slowest - fastest) / fastest of n times. */
static double
spread_of(const double *t, unsigned n)
{
	double lo = best(t, n), hi = t[0];

	for (unsigned i = 1; i < n; i++)
		hi = t[i] > hi ? t[i] : hi;
	return lo > 0 ? (hi - lo) / lo : 0;
}

/* ---- bandwidth ---- */

struct triad_job {
	double *a, *b, *c;
	uint64_t n;
	unsigned reps;
	bool touch;
	double *times;
};

static void
triad(double *restrict a, const double *restrict b, const double *restrict c, uint64_t n, double s)
{
	for (uint64_t i = 0; i < n; i++)
		a[i] = b[i] + s * c[i];
}

static void
triad_work(struct team *tm, unsigned id)
{
	struct triad_job *j = tm->arg;
	uint64_t lo, hi;
	double t0 = 0;

	slice(j->n, id, tm->threads, &lo, &hi);
	if (j->touch) {
		for (uint64_t i = lo; i < hi; i++) {
			j->a[i] = 0.0;
			j->b[i] = 2.0;
			j->c[i] = 0.5;
		}
		return;
	}
	for (unsigned r = 0; r < j->reps; r++) {
		pthread_barrier_wait(&tm->barrier);
		if (id == 0)
			t0 = now_seconds();
		triad(j->a + lo, j->b + lo, j->c + lo, hi - lo, 3.0);
		pthread_barrier_wait(&tm->barrier);
		if (id == 0)
			j->times[r] = now_seconds() - t0;
	}
}

int
ceilings_bandwidth(uint64_t array_bytes, unsigned reps, unsigned threads, double *one_core,
		   double *all_cores, double spread[2], char *err, size_t errlen)
{
	struct triad_job j = { 0 };
	uint64_t bytes = (array_bytes + 4095) & ~UINT64_C(4095);
	int rc = 0;

	if (reps < 1 || threads < 1) {
		snprintf(err, errlen, "bandwidth: needs at least one repetition and one thread");
		return -EINVAL;
	}
	j.n = array_bytes / sizeof(double);
	j.reps = reps;
	j.times = xzalloc(reps * sizeof(double));
	/* Untouched pages: the team's first touch places them. */
	j.a = aligned_alloc(4096, bytes);
	j.b = aligned_alloc(4096, bytes);
	j.c = aligned_alloc(4096, bytes);
	if (!j.a || !j.b || !j.c) {
		snprintf(err, errlen, "bandwidth: cannot allocate three arrays of %.1f MiB",
			 (double)bytes / 1048576.0);
		rc = -ENOMEM;
		goto out;
	}
	j.touch = true;
	if ((rc = team_run(threads, triad_work, &j)))
		goto threads_failed;
	step(1);
	j.touch = false;
	if ((rc = team_run(1, triad_work, &j)))
		goto threads_failed;
	step(2);
	*one_core = 24.0 * (double)j.n / best(j.times, reps);
	if (spread)
		spread[0] = spread_of(j.times, reps);
	if ((rc = team_run(threads, triad_work, &j)))
		goto threads_failed;
	step(3);
	*all_cores = 24.0 * (double)j.n / best(j.times, reps);
	if (spread)
		spread[1] = spread_of(j.times, reps);
	for (uint64_t i = 0; i < j.n; i += 4093) {
		if (j.a[i] != 3.5) {
			snprintf(err, errlen, "bandwidth: the triad computed a[%llu] = %g, not 3.5",
				 (unsigned long long)i, j.a[i]);
			rc = -EIO;
			goto out;
		}
	}
	goto out;
threads_failed:
	snprintf(err, errlen, "bandwidth: cannot start %u threads: %s", threads, strerror(-rc));
out:
	free(j.c);
	free(j.b);
	free(j.a);
	free(j.times);
	return rc;
}

/* ---- peak FLOP/s ---- */

/* Twelve independent accumulators, each x = x m + a: enough to cover the FMA latency (4 or 5
 * cycles) on two FMA ports. m < 1 and a > 0 keep every x near a / (1 - m): no overflow, no
 * subnormals. */
#define ACCUMULATORS 12

#if CEILINGS_X86
__attribute__((target("avx2,fma"))) static double
fma_avx2(uint64_t iters)
{
	const __m256 m = _mm256_set1_ps(0.9999f), a = _mm256_set1_ps(1e-4f);
	__m256 x0 = _mm256_set1_ps(0.10f), x1 = _mm256_set1_ps(0.11f), x2 = _mm256_set1_ps(0.12f);
	__m256 x3 = _mm256_set1_ps(0.13f), x4 = _mm256_set1_ps(0.14f), x5 = _mm256_set1_ps(0.15f);
	__m256 x6 = _mm256_set1_ps(0.16f), x7 = _mm256_set1_ps(0.17f), x8 = _mm256_set1_ps(0.18f);
	__m256 x9 = _mm256_set1_ps(0.19f), x10 = _mm256_set1_ps(0.20f), x11 = _mm256_set1_ps(0.21f);
	float out[8];
	double sum = 0;

	for (uint64_t i = 0; i < iters; i++) {
		x0 = _mm256_fmadd_ps(x0, m, a);
		x1 = _mm256_fmadd_ps(x1, m, a);
		x2 = _mm256_fmadd_ps(x2, m, a);
		x3 = _mm256_fmadd_ps(x3, m, a);
		x4 = _mm256_fmadd_ps(x4, m, a);
		x5 = _mm256_fmadd_ps(x5, m, a);
		x6 = _mm256_fmadd_ps(x6, m, a);
		x7 = _mm256_fmadd_ps(x7, m, a);
		x8 = _mm256_fmadd_ps(x8, m, a);
		x9 = _mm256_fmadd_ps(x9, m, a);
		x10 = _mm256_fmadd_ps(x10, m, a);
		x11 = _mm256_fmadd_ps(x11, m, a);
	}
	x0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(x0, x1), _mm256_add_ps(x2, x3)),
			   _mm256_add_ps(_mm256_add_ps(x4, x5), _mm256_add_ps(x6, x7)));
	x0 = _mm256_add_ps(x0, _mm256_add_ps(_mm256_add_ps(x8, x9), _mm256_add_ps(x10, x11)));
	_mm256_storeu_ps(out, x0);
	for (int k = 0; k < 8; k++)
		sum += out[k];
	return sum;
}

__attribute__((target("sse2"))) static double
mul_add_sse2(uint64_t iters)
{
	const __m128 m = _mm_set1_ps(0.9999f), a = _mm_set1_ps(1e-4f);
	__m128 x0 = _mm_set1_ps(0.10f), x1 = _mm_set1_ps(0.11f), x2 = _mm_set1_ps(0.12f);
	__m128 x3 = _mm_set1_ps(0.13f), x4 = _mm_set1_ps(0.14f), x5 = _mm_set1_ps(0.15f);
	__m128 x6 = _mm_set1_ps(0.16f), x7 = _mm_set1_ps(0.17f), x8 = _mm_set1_ps(0.18f);
	__m128 x9 = _mm_set1_ps(0.19f), x10 = _mm_set1_ps(0.20f), x11 = _mm_set1_ps(0.21f);
	float out[4];
	double sum = 0;

	for (uint64_t i = 0; i < iters; i++) {
		x0 = _mm_add_ps(_mm_mul_ps(x0, m), a);
		x1 = _mm_add_ps(_mm_mul_ps(x1, m), a);
		x2 = _mm_add_ps(_mm_mul_ps(x2, m), a);
		x3 = _mm_add_ps(_mm_mul_ps(x3, m), a);
		x4 = _mm_add_ps(_mm_mul_ps(x4, m), a);
		x5 = _mm_add_ps(_mm_mul_ps(x5, m), a);
		x6 = _mm_add_ps(_mm_mul_ps(x6, m), a);
		x7 = _mm_add_ps(_mm_mul_ps(x7, m), a);
		x8 = _mm_add_ps(_mm_mul_ps(x8, m), a);
		x9 = _mm_add_ps(_mm_mul_ps(x9, m), a);
		x10 = _mm_add_ps(_mm_mul_ps(x10, m), a);
		x11 = _mm_add_ps(_mm_mul_ps(x11, m), a);
	}
	x0 = _mm_add_ps(_mm_add_ps(_mm_add_ps(x0, x1), _mm_add_ps(x2, x3)),
			_mm_add_ps(_mm_add_ps(x4, x5), _mm_add_ps(x6, x7)));
	x0 = _mm_add_ps(x0, _mm_add_ps(_mm_add_ps(x8, x9), _mm_add_ps(x10, x11)));
	_mm_storeu_ps(out, x0);
	for (int k = 0; k < 4; k++)
		sum += out[k];
	return sum;
}
#endif

/* Off x86: the same recurrence on 8-wide rows of scalars, left to the compiler. */
static double
mul_add_c(uint64_t iters)
{
	float x[ACCUMULATORS][8];
	double sum = 0;

	for (int j = 0; j < ACCUMULATORS; j++)
		for (int k = 0; k < 8; k++)
			x[j][k] = 0.1f + 0.01f * (float)j;
	for (uint64_t i = 0; i < iters; i++)
		for (int j = 0; j < ACCUMULATORS; j++)
			for (int k = 0; k < 8; k++)
				x[j][k] = x[j][k] * 0.9999f + 1e-4f;
	for (int j = 0; j < ACCUMULATORS; j++)
		for (int k = 0; k < 8; k++)
			sum += x[j][k];
	return sum;
}

struct flops_kernel {
	const char *isa;
	double (*run)(uint64_t iters);
	double flops_per_iter;
};

static struct flops_kernel
pick_kernel(void)
{
#if CEILINGS_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return (struct flops_kernel){ "avx2+fma", fma_avx2, ACCUMULATORS * 8 * 2 };
	if (__builtin_cpu_supports("sse2"))
		return (struct flops_kernel){ "sse2", mul_add_sse2, ACCUMULATORS * 4 * 2 };
#endif
	return (struct flops_kernel){ "c", mul_add_c, ACCUMULATORS * 8 * 2 };
}

const char *
ceilings_isa(void)
{
	return pick_kernel().isa;
}

struct flops_job {
	struct flops_kernel k;
	uint64_t iters;
	unsigned reps;
	double *times;
	double sink[MAX_THREADS]; /* keeps the results, so the loops are not dropped */
};

static void
flops_work(struct team *tm, unsigned id)
{
	struct flops_job *j = tm->arg;
	double t0 = 0;

	for (unsigned r = 0; r < j->reps; r++) {
		pthread_barrier_wait(&tm->barrier);
		if (id == 0)
			t0 = now_seconds();
		j->sink[id] += j->k.run(j->iters);
		pthread_barrier_wait(&tm->barrier);
		if (id == 0)
			j->times[r] = now_seconds() - t0;
	}
}

int
ceilings_peak_flops(double min_seconds, unsigned reps, unsigned threads, double *one_core,
		    double *all_cores, double spread[2], char *err, size_t errlen)
{
	struct flops_job *j = xzalloc(sizeof(*j));
	int rc;

	if (reps < 1 || threads < 1 || !(min_seconds > 0)) {
		snprintf(err, errlen, "peak FLOP/s: needs a positive time, a repetition, a thread");
		free(j);
		return -EINVAL;
	}
	j->k = pick_kernel();
	j->times = xzalloc(reps * sizeof(double));
	/* Calibrate on one thread: grow until a run takes a quarter of min_seconds, then scale
	 * to min_seconds. */
	j->iters = 1024;
	for (;;) {
		double t0 = now_seconds(), t;

		j->sink[0] += j->k.run(j->iters);
		t = now_seconds() - t0;
		if (t >= min_seconds / 4 || j->iters >= (UINT64_C(1) << 40)) {
			j->iters =
				(uint64_t)((double)j->iters * min_seconds / (t > 0 ? t : 1e-9)) + 1;
			break;
		}
		j->iters *= 4;
	}
	j->reps = reps;
	step(4);
	if ((rc = team_run(1, flops_work, j)))
		goto out;
	step(5);
	*one_core = j->k.flops_per_iter * (double)j->iters / best(j->times, reps);
	if (spread)
		spread[0] = spread_of(j->times, reps);
	if ((rc = team_run(threads, flops_work, j)))
		goto out;
	step(6);
	*all_cores = j->k.flops_per_iter * (double)j->iters * threads / best(j->times, reps);
	if (spread)
		spread[1] = spread_of(j->times, reps);
out:
	if (rc)
		snprintf(err, errlen, "peak FLOP/s: cannot start %u threads: %s", threads,
			 strerror(-rc));
	free(j->times);
	free(j);
	return rc;
}

/* ---- consistency ---- */

/* Appends "; " and the formatted text to buf (len bytes, NUL-terminated). */
__attribute__((format(printf, 3, 4))) static void
append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used && used + 2 < len) {
		memcpy(buf + used, "; ", 3);
		used += 2;
	}
	va_start(ap, fmt);
	if (used < len)
		vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

bool
ceilings_consistent(const struct ceilings *c, char *why, size_t len)
{
	const struct {
		double spread;
		const char *what;
	} series[] = {
		{ c->bw_one_core_spread, "the triad on one core" },
		{ c->bw_all_cores_spread, "the triad on all cores" },
		{ c->flops_one_core_spread, "the FLOP loop on one core" },
		{ c->flops_all_cores_spread, "the FLOP loop on all cores" },
	};
	char buf[512] = "";

	if (c->all_cores_bytes_per_s < (1 - CEILINGS_SLOWER_MAX) * c->one_core_bytes_per_s)
		append(buf, sizeof(buf), "%u threads stream slower than 1: %.2f against %.2f GB/s",
		       c->bw_threads, c->all_cores_bytes_per_s / 1e9,
		       c->one_core_bytes_per_s / 1e9);
	if (c->all_cores_flops_per_s < (1 - CEILINGS_SLOWER_MAX) * c->one_core_flops_per_s)
		append(buf, sizeof(buf),
		       "%u threads compute slower than 1: %.2f against %.2f GFLOP/s",
		       c->flops_threads, c->all_cores_flops_per_s / 1e9,
		       c->one_core_flops_per_s / 1e9);
	for (size_t i = 0; i < sizeof(series) / sizeof(series[0]); i++)
		if (series[i].spread > CEILINGS_SPREAD_MAX)
			append(buf, sizeof(buf),
			       "%s spread %.0f%% between repetitions (over %.0f%%)", series[i].what,
			       100 * series[i].spread, 100 * CEILINGS_SPREAD_MAX);
	if (why && len)
		snprintf(why, len, "%s", buf);
	return buf[0] == '\0';
}

/* The numbers of one round of the test knob's text, [s, s + len): 4 or 5 of them, comma
 * separated, the first four positive, the fifth at least 0. Returns false where it is not. */
static bool
injected_round(const char *s, size_t len, double v[5])
{
	char buf[256], *p = buf, *end;
	unsigned n = 0;

	if (len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	v[4] = 0;
	for (;;) {
		if (n == 5 || !*p || isspace((unsigned char)*p))
			return false;
		errno = 0;
		v[n] = strtod(p, &end);
		if (end == p || errno || !isfinite(v[n]) || v[n] < 0 || (n < 4 && v[n] == 0))
			return false;
		n++;
		if (!*end)
			return n >= 4;
		if (*end != ',')
			return false;
		p = end + 1;
	}
}

int
ceilings_injected(const char *text, unsigned round, struct ceilings *c, char *err, size_t errlen)
{
	double v[5], pick[5] = { 0, 0, 0, 0, 0 };
	const char *p = text;
	unsigned r = 0;

	for (;; r++) {
		const char *semi = strchr(p, ';');
		size_t len = semi ? (size_t)(semi - p) : strlen(p);

		if (!injected_round(p, len, v)) {
			snprintf(
				err, errlen,
				"MEMSIM_TEST_CEILINGS='%s': round %u is not 'BW1,BWN,FL1,FLN"
				"[,SPREAD]' (GB/s and GFLOP/s, positive; a spread at least 0; rounds "
				"separated by ';')",
				text, r + 1);
			return -EINVAL;
		}
		if (r <= round)
			memcpy(pick, v, sizeof(pick));
		if (!semi)
			break;
		p = semi + 1;
	}
	c->one_core_bytes_per_s = pick[0] * 1e9;
	c->all_cores_bytes_per_s = pick[1] * 1e9;
	c->one_core_flops_per_s = pick[2] * 1e9;
	c->all_cores_flops_per_s = pick[3] * 1e9;
	c->bw_one_core_spread = c->bw_all_cores_spread = pick[4];
	c->flops_one_core_spread = c->flops_all_cores_spread = pick[4];
	return 0;
}

/* ---- everything, and the JSON document ---- */

/* The methods in words, and the settings they name. */
static void
describe(struct ceilings *out, uint64_t llc_bytes, bool quick)
{
	out->bw_repetitions = quick ? 3 : 10;
	out->bw_threads = out->cores;
	snprintf(out->bw_method, sizeof(out->bw_method),
		 "STREAM-like triad a[i] = b[i] + s*c[i] on doubles over three arrays of %.1f MiB "
		 "(%.2fx the host preset's %.1f MiB last-level cache), first touched in parallel, "
		 "24 bytes counted per element (no write-allocate), best of %u repetitions on 1 "
		 "thread and on %u threads",
		 (double)out->array_bytes / 1048576.0,
		 (double)out->array_bytes / (double)(llc_bytes ? llc_bytes : 1),
		 (double)llc_bytes / 1048576.0, out->bw_repetitions, out->bw_threads);
	out->flops_repetitions = quick ? 3 : 5;
	out->flops_threads = out->cores;
	snprintf(out->isa, sizeof(out->isa), "%s", ceilings_isa());
	if (strcmp(out->isa, "avx2+fma") == 0)
		snprintf(out->flops_method, sizeof(out->flops_method),
			 "fp32 FMA-bound loop: %d independent 8-lane accumulators x = x*m + a "
			 "(_mm256_fmadd_ps), 2 FLOPs per FMA lane, each run at least %.2f s, best "
			 "of %u on 1 thread and on %u threads",
			 ACCUMULATORS, quick ? 0.02 : 0.2, out->flops_repetitions,
			 out->flops_threads);
	else
		snprintf(
			out->flops_method, sizeof(out->flops_method),
			"fp32 multiply-add-bound loop: %d independent %d-lane accumulators x = x*m "
			"+ a (%s, no FMA), 1 FLOP per lane for each multiply and add, each run at "
			"least %.2f s, best of %u on 1 thread and on %u threads",
			ACCUMULATORS, strcmp(out->isa, "sse2") == 0 ? 4 : 8,
			strcmp(out->isa, "sse2") == 0 ? "_mm_mul_ps, _mm_add_ps" : "plain C",
			quick ? 0.02 : 0.2, out->flops_repetitions, out->flops_threads);
}

/* One round: the bandwidth, then the peak FLOP rate (or the test knob's round). */
static int
measure_round(struct ceilings *out, unsigned round, char *err, size_t errlen)
{
	const char *knob = getenv("MEMSIM_TEST_CEILINGS");
	double bw[2] = { 0, 0 }, fl[2] = { 0, 0 };
	int rc;

	if (knob)
		return ceilings_injected(knob, round, out, err, errlen);
	rc = ceilings_bandwidth(out->array_bytes, out->bw_repetitions, out->bw_threads,
				&out->one_core_bytes_per_s, &out->all_cores_bytes_per_s, bw, err,
				errlen);
	if (rc)
		return rc;
	out->bw_one_core_spread = bw[0];
	out->bw_all_cores_spread = bw[1];
	rc = ceilings_peak_flops(out->quick ? 0.02 : 0.2, out->flops_repetitions,
				 out->flops_threads, &out->one_core_flops_per_s,
				 &out->all_cores_flops_per_s, fl, err, errlen);
	out->flops_one_core_spread = fl[0];
	out->flops_all_cores_spread = fl[1];
	return rc;
}

int
ceilings_measure(uint64_t llc_bytes, bool quick, struct ceilings *out, char *err, size_t errlen)
{
	time_t now = time(NULL);
	struct tm tm;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	snprintf(out->memsim_version, sizeof(out->memsim_version), "%s", MEMSIM_VERSION);
	strftime(out->date, sizeof(out->date), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	ceilings_cpu_model(out->cpu, sizeof(out->cpu));
	out->cores = ceilings_cores();
	out->quick = quick;
	out->array_bytes = ceilings_array_bytes(llc_bytes, ceilings_mem_available(), quick,
						out->note, sizeof(out->note));
	describe(out, llc_bytes, quick);
	if (getenv("MEMSIM_TEST_CEILINGS")) {
		snprintf(out->bw_method, sizeof(out->bw_method),
			 "given by MEMSIM_TEST_CEILINGS, a test knob: not measured");
		snprintf(out->flops_method, sizeof(out->flops_method), "%s", out->bw_method);
	}
	progress_begin("ceilings");
	out->checked = true;
	while (!rc && out->rounds < CEILINGS_ROUNDS) {
		rc = measure_round(out, out->rounds++, err, errlen);
		out->consistent =
			ceilings_consistent(out, out->inconsistency, sizeof(out->inconsistency));
		if (out->consistent)
			break;
	}
	progress_end();
	return rc;
}

/* The spreads of one series' repetitions on one core and on all, where known. */
static void
add_spreads(cJSON *o, double one, double all)
{
	if (one >= 0)
		cJSON_AddNumberToObject(o, "one_core_spread", one);
	if (all >= 0)
		cJSON_AddNumberToObject(o, "all_cores_spread", all);
}

cJSON *
ceilings_json(const struct ceilings *c)
{
	cJSON *o = cJSON_CreateObject(), *bw, *fl;

	cJSON_AddStringToObject(o, "memsim_version", c->memsim_version);
	cJSON_AddStringToObject(o, "date", c->date);
	cJSON_AddStringToObject(o, "cpu", c->cpu);
	cJSON_AddNumberToObject(o, "cores", c->cores);
	cJSON_AddBoolToObject(o, "quick", c->quick);
	bw = cJSON_AddObjectToObject(o, "bandwidth");
	cJSON_AddStringToObject(bw, "method", c->bw_method);
	cJSON_AddNumberToObject(bw, "array_bytes", (double)c->array_bytes);
	cJSON_AddNumberToObject(bw, "repetitions", c->bw_repetitions);
	cJSON_AddNumberToObject(bw, "one_core_bytes_per_s", c->one_core_bytes_per_s);
	cJSON_AddNumberToObject(bw, "all_cores_bytes_per_s", c->all_cores_bytes_per_s);
	cJSON_AddNumberToObject(bw, "threads", c->bw_threads);
	add_spreads(bw, c->bw_one_core_spread, c->bw_all_cores_spread);
	fl = cJSON_AddObjectToObject(o, "peak_flops");
	cJSON_AddStringToObject(fl, "method", c->flops_method);
	cJSON_AddStringToObject(fl, "isa", c->isa);
	cJSON_AddNumberToObject(fl, "one_core_flops_per_s", c->one_core_flops_per_s);
	cJSON_AddNumberToObject(fl, "all_cores_flops_per_s", c->all_cores_flops_per_s);
	cJSON_AddNumberToObject(fl, "threads", c->flops_threads);
	add_spreads(fl, c->flops_one_core_spread, c->flops_all_cores_spread);
	if (c->checked) {
		cJSON *k = cJSON_AddObjectToObject(o, "consistency");

		cJSON_AddBoolToObject(k, "consistent", c->consistent);
		cJSON_AddNumberToObject(k, "rounds", c->rounds);
		cJSON_AddStringToObject(k, "why", c->inconsistency);
		cJSON_AddNumberToObject(k, "slower_max", CEILINGS_SLOWER_MAX);
		cJSON_AddNumberToObject(k, "spread_max", CEILINGS_SPREAD_MAX);
	}
	return o;
}

/* obj[key] as a string into buf, or false. */
static bool
get_str(const cJSON *obj, const char *key, char *buf, size_t len)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, key));

	if (!s)
		return false;
	snprintf(buf, len, "%s", s);
	return true;
}

/* obj[key] as a non-negative number, or false. */
static bool
get_num(const cJSON *obj, const char *key, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0))
		return false;
	*out = v->valuedouble;
	return true;
}

/* obj[key], a number at least 0, into *out; -1 where obj has no key. */
static bool
get_spread(const cJSON *obj, const char *key, double *out)
{
	*out = -1;
	return !cJSON_GetObjectItemCaseSensitive(obj, key) || get_num(obj, key, out);
}

/* The spreads and the consistency of a document, which an older memsim's has not (checked
 * false). Returns NULL, or the key that is there but not of its type. */
static const char *
get_checks(const cJSON *obj, const cJSON *bw, const cJSON *fl, struct ceilings *out)
{
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(obj, "consistency");
	const cJSON *ok = cJSON_GetObjectItemCaseSensitive(k, "consistent");
	double rounds;

	if (!get_spread(bw, "one_core_spread", &out->bw_one_core_spread))
		return "bandwidth.one_core_spread";
	if (!get_spread(bw, "all_cores_spread", &out->bw_all_cores_spread))
		return "bandwidth.all_cores_spread";
	if (!get_spread(fl, "one_core_spread", &out->flops_one_core_spread))
		return "peak_flops.one_core_spread";
	if (!get_spread(fl, "all_cores_spread", &out->flops_all_cores_spread))
		return "peak_flops.all_cores_spread";
	if (!k)
		return NULL;
	if (!cJSON_IsObject(k) || !cJSON_IsBool(ok))
		return "consistency.consistent";
	if (!get_num(k, "rounds", &rounds) || rounds < 1)
		return "consistency.rounds";
	if (!get_str(k, "why", out->inconsistency, sizeof(out->inconsistency)))
		return "consistency.why";
	out->checked = true;
	out->consistent = cJSON_IsTrue(ok);
	out->rounds = (unsigned)rounds;
	return NULL;
}

int
ceilings_from_json(const cJSON *obj, struct ceilings *out, char *err, size_t errlen)
{
	const cJSON *bw = cJSON_GetObjectItemCaseSensitive(obj, "bandwidth");
	const cJSON *fl = cJSON_GetObjectItemCaseSensitive(obj, "peak_flops");
	const cJSON *quick = cJSON_GetObjectItemCaseSensitive(obj, "quick");
	double cores, bytes, reps, bwt, flt;
	const char *bad = NULL;

	memset(out, 0, sizeof(*out));
	if (!get_str(obj, "memsim_version", out->memsim_version, sizeof(out->memsim_version)))
		bad = "memsim_version";
	else if (!get_str(obj, "date", out->date, sizeof(out->date)))
		bad = "date";
	else if (!get_str(obj, "cpu", out->cpu, sizeof(out->cpu)))
		bad = "cpu";
	else if (!get_num(obj, "cores", &cores))
		bad = "cores";
	else if (!cJSON_IsBool(quick))
		bad = "quick";
	else if (!cJSON_IsObject(bw))
		bad = "bandwidth";
	else if (!get_str(bw, "method", out->bw_method, sizeof(out->bw_method)))
		bad = "bandwidth.method";
	else if (!get_num(bw, "array_bytes", &bytes))
		bad = "bandwidth.array_bytes";
	else if (!get_num(bw, "repetitions", &reps))
		bad = "bandwidth.repetitions";
	else if (!get_num(bw, "one_core_bytes_per_s", &out->one_core_bytes_per_s))
		bad = "bandwidth.one_core_bytes_per_s";
	else if (!get_num(bw, "all_cores_bytes_per_s", &out->all_cores_bytes_per_s))
		bad = "bandwidth.all_cores_bytes_per_s";
	else if (!get_num(bw, "threads", &bwt))
		bad = "bandwidth.threads";
	else if (!cJSON_IsObject(fl))
		bad = "peak_flops";
	else if (!get_str(fl, "method", out->flops_method, sizeof(out->flops_method)))
		bad = "peak_flops.method";
	else if (!get_str(fl, "isa", out->isa, sizeof(out->isa)))
		bad = "peak_flops.isa";
	else if (!get_num(fl, "one_core_flops_per_s", &out->one_core_flops_per_s))
		bad = "peak_flops.one_core_flops_per_s";
	else if (!get_num(fl, "all_cores_flops_per_s", &out->all_cores_flops_per_s))
		bad = "peak_flops.all_cores_flops_per_s";
	else if (!get_num(fl, "threads", &flt))
		bad = "peak_flops.threads";
	else
		bad = get_checks(obj, bw, fl, out);
	if (bad) {
		snprintf(err, errlen, "'%s' is missing or not of its type", bad);
		return -EINVAL;
	}
	out->cores = (unsigned)cores;
	out->quick = cJSON_IsTrue(quick);
	out->array_bytes = (uint64_t)bytes;
	out->bw_repetitions = (unsigned)reps;
	out->bw_threads = (unsigned)bwt;
	out->flops_threads = (unsigned)flt;
	return 0;
}

void
ceilings_add_hardware(cJSON *obj)
{
	cJSON *hw = cJSON_AddObjectToObject(obj, "hardware");
	char cpu[256], err[256], buf[1024];
	struct spec host;
	FILE *f;

	cJSON_AddStringToObject(hw, "cpu_model", ceilings_cpu_model(cpu, sizeof(cpu)));
	cJSON_AddNumberToObject(hw, "cores", ceilings_cores());
	if (spec_parse("host", &host, err, sizeof(err)) == 0)
		cJSON_AddStringToObject(hw, "caches", spec_format(&host, buf, sizeof(buf)));
	else
		cJSON_AddStringToObject(hw, "caches", err);
	snprintf(buf, sizeof(buf), "%s/devices/system/cpu/cpu0/cpufreq/scaling_governor",
		 spec_sysfs_root());
	f = fopen(buf, "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		snprintf(buf, sizeof(buf), "unavailable");
	buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
	cJSON_AddStringToObject(hw, "cpu_governor_at_run", buf);
}
