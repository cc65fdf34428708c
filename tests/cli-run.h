#pragma once

/*
 * Running the memsim binary and shell lines from a CLI test, in tmpdir (tests/tmpdir.h,
 * included first): memsim("ARGS", ...) runs "memsim ARGS", shell() any command line, both
 * capturing exit status, stdout and stderr; sh() only the exit status; run_line() under an
 * address-space limit. read_json() reads a JSON document written there, sorted_rows() a
 * results.json's rows in a comparable order.
 */

#include <cJSON.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/slurp.h"

/* Shell words put before memsim by memsim() and expect_error(): "VAR=value", "ulimit -v N &&". */
static const char *memsim_env = "";
/* The program memsim() and expect_error() run: memsim, or memsim-bench from bench_begin(). */
static const char *memsim_bin = MEMSIM_BIN;

struct result {
	int rc; /* the exit status, or 128 + the signal that ended it */
	char *out, *err;
};

/* Runs the shell command line in tmpdir, under an address-space limit of as_limit bytes (0:
 * none: RLIMIT_AS in the child); captures stdout and stderr. */
static inline struct result
run_line(unsigned long long as_limit, const char *line)
{
	char cmd[8192], out[700], err[700];
	struct result r = { 127, NULL, NULL };
	int status = 0;
	pid_t pid;

	snprintf(out, sizeof(out), "%s/stdout", tmpdir);
	snprintf(err, sizeof(err), "%s/stderr", tmpdir);
	snprintf(cmd, sizeof(cmd), "cd %s && %s >%s 2>%s", tmpdir, line, out, err);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { (rlim_t)as_limit, (rlim_t)as_limit };

		if (as_limit && setrlimit(RLIMIT_AS, &rl) != 0)
			_exit(126);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &status, 0) == pid)
		r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	r.out = slurp_text(out);
	r.err = slurp_text(err);
	return r;
}

/* Runs the shell command line fmt, ... in tmpdir; captures stdout and stderr. */
static inline struct result
shell(const char *fmt, ...)
{
	char line[6144];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	return run_line(0, line);
}

/* Runs "memsim ARGS" (after memsim_env) in tmpdir through the shell, so tests can pipe;
 * captures stdout and stderr. */
static inline struct result
memsim(const char *fmt, ...)
{
	char line[6144];
	int n = snprintf(line, sizeof(line), "%s %s ", memsim_env, memsim_bin);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	return run_line(0, line);
}

/* The bench command's cases: memsim() and expect_error() run memsim-bench (memsim with
 * `bench`, built with -Dbench=true) until bench_end(). False, after saying so, where it was not
 * built. memsim-bench runs every other command as memsim does, so a case that fails before
 * bench_end() leaves the next ones valid. */
static inline bool
bench_begin(void)
{
#ifdef MEMSIM_BENCH_BIN
	memsim_bin = MEMSIM_BENCH_BIN;
	return true;
#else
	printf("# not run: memsim-bench, built with -Dbench=true\n");
	return false;
#endif
}

static inline void
bench_end(void)
{
	memsim_bin = MEMSIM_BIN;
}

/* Runs a shell command line in tmpdir, its output where the test's goes; returns its exit
 * status (128 + the signal that ended it). */
static inline int
sh(const char *fmt, ...)
{
	char body[6144], cmd[8192];
	va_list ap;
	int status;

	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "cd %s && %s", tmpdir, body);
	status = system(cmd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static inline void
result_free(struct result *r)
{
	free(r->out);
	free(r->err);
}

/* True when s is exactly one line holding what. */
/* Text for the test log, every line a TAP comment ("# "), so meson reads no stray lines. */
static inline void
print_commented(const char *text)
{
	const char *s = text ? text : "";

	while (*s) {
		size_t n = strcspn(s, "\n");

		print_message("# %.*s\n", (int)n, s);
		s += n + (s[n] == '\n');
	}
}

static inline bool
one_line_with(const char *s, const char *what)
{
	const char *nl = strchr(s, '\n');

	return strstr(s, what) && nl && nl[1] == '\0';
}

/* The JSON document in tmpdir/name (caller frees with cJSON_Delete()), or NULL. */
static inline cJSON *
read_json(const char *name)
{
	char path[700], *text;
	cJSON *o;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	text = slurp(path, NULL);
	o = text ? cJSON_Parse(text) : NULL;
	free(text);
	return o;
}

/* "memsim ARGS" exits rc with exactly one stderr line containing msg. */
static inline void
expect_error(const char *args, int rc, const char *msg)
{
	struct result r = memsim("%s", args);
	char *nl = strchr(r.err, '\n');

	if (r.rc != rc)
		fail_msg("memsim %s: exit %d, expected %d (stderr: %s)", args, r.rc, rc, r.err);
	if (!strstr(r.err, msg))
		fail_msg("memsim %s: stderr '%s' lacks '%s'", args, r.err, msg);
	if (!nl || nl[1] != '\0')
		fail_msg("memsim %s: stderr is not one line: '%s'", args, r.err);
	result_free(&r);
}

static inline int
sorted_rows_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The rows of tmpdir/dir/results.json, each made a line by line_of (a malloc'd string; it may
 * change the row), sorted and joined with newlines, as one string (caller frees): sweep
 * directories compared whatever order their rows were written in. */
static inline char *
sorted_rows(const char *dir, char *(*line_of)(cJSON *row))
{
	char path[700], *text, *save = NULL, **lines = NULL, *out;
	size_t n = 0, len = 1;

	snprintf(path, sizeof(path), "%s/%s/results.json", tmpdir, dir);
	text = slurp_text(path);
	assert_non_null(text);
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		cJSON *row = cJSON_Parse(l);

		assert_non_null(row);
		lines = realloc(lines, (n + 1) * sizeof(*lines));
		lines[n] = line_of(row);
		assert_non_null(lines[n]);
		len += strlen(lines[n++]) + 1;
		cJSON_Delete(row);
	}
	if (n)
		qsort(lines, n, sizeof(*lines), sorted_rows_cmp);
	out = calloc(1, len);
	for (size_t i = 0; i < n; i++) {
		strcat(strcat(out, lines[i]), "\n");
		free(lines[i]);
	}
	free(lines);
	free(text);
	return out;
}

/* Writes text into tmpdir/name. */
static inline void
write_file(const char *name, const char *text)
{
	char path[1200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* "memsim ARGS" exits 0. */
static inline void
expect_ok(const char *fmt, ...)
{
	char args[2048];
	struct result r;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	r = memsim("%s", args);
	if (r.rc != 0)
		fail_msg("memsim %s: exit %d (stderr: %s)", args, r.rc, r.err);
	result_free(&r);
}

/* The cells of the line of `memsim table` output out for kernel at N, split at blanks (cache,
 * kernel, dtype, N, the five numbers, then the verdict's words), up to max cells of 63 bytes.
 * Returns how many; 0 when no line is of that kernel and N. */
static inline int
table_cells(const char *out, const char *kernel, double N, char cells[][64], int max)
{
	char *text = strdup(out), *save = NULL;
	int n = 0;

	assert_non_null(text);
	for (char *l = strtok_r(text, "\n", &save); l && !n; l = strtok_r(NULL, "\n", &save)) {
		char *w, *wsave = NULL;

		for (w = strtok_r(l, " ", &wsave); w && n < max; w = strtok_r(NULL, " ", &wsave))
			snprintf(cells[n++], 64, "%s", w);
		if (n < 4 || strcmp(cells[1], kernel) != 0 || strtod(cells[3], NULL) != N)
			n = 0;
	}
	free(text);
	return n;
}
