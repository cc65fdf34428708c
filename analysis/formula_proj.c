/* The exact formula of the projections (proj): see analysis/formulas.c for the method. */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "analysis/formula_kernels.h"
#include "sim/util.h"

/* One product C = A W per batch: A is N x K (row blocks of B_r rows, d-wide slices), W is
 * K x n (column blocks of B_c columns), C is N x n. The loop order is row block ib, column
 * block jb, slice k; C's block is stored after its last slice. */
struct product {
	const char *a, *w, *c;
	double K, n;
};

void
formula_proj(struct formula_result *r, const struct attn_config *c, const struct q *q)
{
	double Dm = q->H * q->d, Dkv = q->Hkv * q->d, s = q->s, L = q->L;
	double tiles_all = q->tq + q->tk + q->ts;
	double tile_lines[] = { q->tq, q->tk, q->ts };
	static const char *const tile_names[] = { "Q_tile", "K_tile", "S_tile" };
	const struct product prods[4] = {
		{ "x", "W_Q", "Q", Dm, Dm },
		{ "x", "W_K", "K", Dm, Dkv },
		{ "x", "W_V", "V", Dm, Dkv },
		{ "O", "W_O", "y", Dm, Dm },
	};
	double blocks = q->B * q->Tr; /* row blocks over all batches */

	for (int m = 0; m < 4; m++) {
		const struct product *p = &prods[m];
		double Tn = ceil(p->n / q->Bc), Ks = ceil(p->K / q->d);
		double a_block = q->Br * p->K * s / L, a_slice = q->Br * q->d * s / L;
		double w_all = p->K * p->n * s / L, w_slice = q->d * q->Bc * s / L;
		double c_row = q->Br * p->n * s / L; /* one row of C blocks */
		double a_lines = q->B * q->N * p->K * s / L;
		struct formula_array *A = arr(r, p->a), *W = arr(r, p->w);

		/* A: a line of block ib comes back at the next column block after the rest of the
		 * block, one column block of W (K B_c) and the C block stored. */
		{
			double G_A = a_block - 1 + p->K * q->Bc * s / L + q->Br * q->Bc * s / L +
				     tiles_all;
			bool shared = m > 0 && strcmp(prods[m - 1].a, p->a) == 0;

			/* First use in this product: new, or (x after the previous product) after
			 * the rest of that product and this one's start; averaged over blocks. */
			for (double ib = 0; ib < blocks; ib++) {
				double first = INFINITY;

				if (shared) {
					const struct product *pp = &prods[m - 1];
					double w_prev = pp->K * pp->n * s / L;
					double last = ib == blocks - 1;

					first = q->B * q->N * p->K * s / L - 1 +
						(last ? w_prev / 2 : w_prev) +
						(ib > 0 ? w_all : w_all / 2) +
						(blocks - 1 - ib) * q->Br * pp->n * s / L +
						ib * q->Br * p->n * s / L + tiles_all;
				}
				{
					struct step st[2] = { { LD, first, 1 },
							      { LD, G_A, Tn - 1 } };

					seq(A, q, a_lines / blocks, st, 2, INFINITY);
				}
			}
		}
		/* W: a line of column block jb, slice k comes back at the next row block after
		 * every other W line, the C blocks of one row, and the A lines between: the rest of
		 * block ib (all of it unless jb is the last column block) and of block ib + 1 the
		 * slices up to k (all of it unless jb is the first). */
		for (double jb = 0; jb < Tn; jb++) {
			for (double k = 0; k < Ks; k++) {
				double x_between =
					(jb < Tn - 1 ? a_block : (Ks - 1 - k) * a_slice) +
					(jb > 0 ? a_block : (k + 1) * a_slice);
				double G_W = w_all - 1 + x_between + c_row + tiles_all;
				struct step st[2] = { { LD, INFINITY, 1 },
						      { LD, G_W, blocks - 1 } };

				seq(W, q,
				    w_slice * (fmin(q->Bc, p->n - jb * q->Bc) / q->Bc) *
					    (fmin(q->d, p->K - k * q->d) / q->d),
				    st, 2, INFINITY);
			}
		}
		once(arr(r, p->c), q, q->B * q->N * p->n * s / L, ST,
		     q->B * q->N * p->n * s / L / 2);
	}
	(void)c;
	tiles(r, q, tile_names, tile_lines, 3,
	      q->tq + q->tk + q->ts + q->Br * q->d * s / L + q->d * q->Bc * s / L);
}
