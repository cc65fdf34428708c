// A C++17 program against the installed headers (tests/test-library.sh builds it traced and
// with -DMEMSIM_NATIVE): a kernel over a std::vector through the TR_* macros.

#include <cstdio>
#include <memsim/memsim.h>
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
	// Past the last array ("other", "v") and phase ("(none)", "sum", "flush"): -1 and NULL. The
	// native build declares neither array nor phase; the final flush is one.
	unsigned na = memsim_stats_arrays(h), np = memsim_stats_phases(h);
	memsim_stats past;
	if (memsim_stats_array(h, na, &past) != -1 || memsim_stats_array_name(h, na) != nullptr ||
	    memsim_stats_phase(h, np, &past) != -1 || memsim_stats_phase_name(h, np) != nullptr)
		std::printf("out of range answered\n");
	std::printf("arrays %u phases %u\n", na, np);
	// No cache: every access moves its own bytes (zero in the native build, which reports
	// none).
	std::printf("sum %g levels %u dram read %llu write %llu\n", static_cast<double>(out),
		    s.levels, static_cast<unsigned long long>(s.dram.read_bytes),
		    static_cast<unsigned long long>(s.dram.write_bytes));
	memsim_hierarchy_destroy(h);
	return 0;
}
