/* Configure-time probe: does this clang link a libFuzzer harness with ASan and UBSan? */

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return 0;
}
