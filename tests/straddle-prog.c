/*
 * The program the straddle cross-check traces: unaligned 8- and 16-byte loads and stores at
 * pseudo-random offsets of a 4 MiB buffer (as a sort's vector loads land), so that many
 * accesses span two 64-byte lines that both miss. Deterministic, no input.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main(void)
{
	size_t n = (size_t)4 << 20;
	unsigned char *buf = calloc(1, n + 32);
	uint64_t sum = 0, x = 12345;

	if (!buf)
		return 1;
	for (int i = 0; i < 400000; i++) {
		size_t at;
		uint64_t w[2];

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		at = (size_t)(x >> 33) % n;
		/* Half the accesses start in a line's last 15 bytes: they span two lines. */
		if (i & 1)
			at = (at | 63) - (x >> 60);
		memcpy(w, buf + at, 16); /* an unaligned 16-byte load */
		sum += w[0] ^ w[1];
		memcpy(buf + (at ^ 4096), &sum, 8); /* an unaligned 8-byte store */
	}
	printf("%llu\n", (unsigned long long)sum);
	free(buf);
	return 0;
}
