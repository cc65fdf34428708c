/*
 * The program the Cachegrind cross-check test traces: a 64 x 64 float matrix product (its
 * 48 KiB of matrices overflow a 32 KiB L1) and a 2 MiB stream written then read with a stride
 * (it overflows a 1 MiB LL). Deterministic, no input.
 */

#include <stdio.h>
#include <stdlib.h>

#define N 64

static float a[N][N], b[N][N], c[N][N];

int
main(void)
{
	size_t big = (size_t)2 << 20;
	double *s = malloc(big), sum = 0;

	if (!s)
		return 1;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			a[i][j] = (float)(i + j);
			b[i][j] = (float)(i - j);
		}
	for (int i = 0; i < N; i++)
		for (int k = 0; k < N; k++) {
			float aik = a[i][k];

			for (int j = 0; j < N; j++)
				c[i][j] += aik * b[k][j];
		}
	for (size_t i = 0; i < big / sizeof(double); i++)
		s[i] = (double)i;
	for (size_t i = 0; i < big / sizeof(double); i += 3)
		sum += s[i];
	printf("%f %f\n", sum, (double)c[3][5]);
	free(s);
	return 0;
}
