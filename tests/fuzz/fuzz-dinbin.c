/* libFuzzer harness: Dinero IV's binary format (traces/dinbin.c), see fuzz-reader.c. */

#include <stddef.h>
#include <stdint.h>

#include "tests/fuzz/fuzz-reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_reader_run(data, size, TRACE_FORMAT_DINBIN);
}
