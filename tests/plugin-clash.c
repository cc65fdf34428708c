/* tests/plugin-stream.c with its helper named as one of memsim's own functions: Cachegrind's
 * counts of the two cannot be told apart, and `memsim xcheck --with cachegrind` refuses it. */
#define STREAM_STEP now_seconds
#include "plugin-stream.c"
