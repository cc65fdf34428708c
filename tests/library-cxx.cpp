// A C++17 program against the installed headers (tests/test-library.sh builds it traced and
// with -DMEMSIM_NATIVE): a kernel over a std::vector through the TR_* macros.

#include <memsim/memsim.h>

#include <cstdio>
#include <vector>

static void
sum(memsim_trace *t, const std::vector<float> &v, float *out)
{
	float s = 0;

	TR_PHASE(t, "sum");
	for (const float &x : v) {
		TR_LOAD_ELEM(t, &x);
		s += x;
	}
	TR_STORE_ELEM(t, out);
	*out = s;
}

int
main()
{
	char err[256];
	memsim_hierarchy *h = memsim_hierarchy_create("none", err, sizeof(err));
	std::vector<float> v(256, 1.0f);
	alignas(64) static float out;

	if (!h) {
		std::fprintf(stderr, "cxx: %s\n", err);
		return 1;
	}
	memsim_trace *t = memsim_trace_create(h, nullptr, err, sizeof(err));
	if (!t || TR_ARRAY(t, "v", v.data(), v.size() * sizeof(float), MEMSIM_SPACE_DRAM) != 0) {
		std::fprintf(stderr, "cxx: cannot trace\n");
		return 1;
	}
	sum(t, v, &out);
	memsim_trace_destroy(t);
	memsim_stats s;
	memsim_stats_total(h, &s);
	// No cache: every access moves its own bytes (zero in the native build, which reports none).
	std::printf("sum %g levels %u dram read %llu write %llu\n", static_cast<double>(out), s.levels,
		    static_cast<unsigned long long>(s.dram.read_bytes),
		    static_cast<unsigned long long>(s.dram.write_bytes));
	memsim_hierarchy_destroy(h);
	return 0;
}
