/*
 * The files memsim writes, as an attacker or an interrupt meets them (issue 18): --json over an
 * existing file keeps its mode, owner and hard links.
 */

#include "config.h"

#include <cJSON.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/slurp.h"
#include "tests/unit.h"

#define TMPDIR_NAME "cli-files"
#include "tests/tmpdir.h"

#define FSWEEP "sweep --kernel naive,flash2 --N 256,512 --formula-only"
#define FPROFILE "profile --T 32 --kernel naive --min-time 0.001 --reps 2"
#define VICTIM "a file of someone else, not memsim's\n"

struct result {
	int rc;
	char *out, *err;
};

/* Runs "memsim ARGS" in tmpdir through the shell; captures stdout and stderr. */
static struct result
memsim(const char *fmt, ...)
{
	char args[2048], cmd[4096], out[700], err[700];
	struct result r;
	va_list ap;
	int status;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(out, sizeof(out), "%s/stdout", tmpdir);
	snprintf(err, sizeof(err), "%s/stderr", tmpdir);
	snprintf(cmd, sizeof(cmd), "cd %s && %s %s >%s 2>%s", tmpdir, MEMSIM_BIN, args, out, err);
	status = system(cmd);
	r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	r.out = slurp_text(out);
	r.err = slurp_text(err);
	return r;
}

static void
result_free(struct result *r)
{
	free(r->out);
	free(r->err);
}

/* Runs a shell command in tmpdir; returns its exit status. */
static int
sh(const char *fmt, ...)
{
	char body[2048], cmd[4096];
	va_list ap;
	int status;

	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "cd %s && %s", tmpdir, body);
	status = system(cmd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* memsim ARGS exits 0. */
static void
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

/* The text of tmpdir/name ("" when unreadable); caller frees. */
static char *
text_of(const char *name)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return slurp_text(path);
}

/* The JSON document in tmpdir/name; caller frees with cJSON_Delete(). */
static cJSON *
json_of(const char *name)
{
	char *text = text_of(name);
	cJSON *o = cJSON_Parse(text);

	free(text);
	if (!o)
		fail_msg("%s is not one JSON document", name);
	return o;
}

/* --json over an existing file keeps its mode and, where memsim may give it, its owner; a file
 * with a second hard link is written in place, so both names see the new report. */
static void
test_json_keeps_file(void **state)
{
	char path[700];
	struct stat st;
	char *a, *b;

	(void)state;
	assert_int_equal(sh("rm -f jm && echo old > jm && chmod 640 jm"), 0);
	expect_ok("formula --kernel naive --json jm");
	snprintf(path, sizeof(path), "%s/jm", tmpdir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	cJSON_Delete(json_of("jm"));

	assert_int_equal(sh("rm -f jh jh2 && echo old > jh && ln jh jh2"), 0);
	expect_ok("formula --kernel flash2 --json jh");
	a = text_of("jh");
	b = text_of("jh2");
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "flash2"));
	free(a);
	free(b);
	snprintf(path, sizeof(path), "%s/jh", tmpdir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_nlink, 2);

	if (geteuid() == 0) {
		assert_int_equal(sh("rm -f jo && echo old > jo && chown 65534:65534 jo"), 0);
		expect_ok("formula --kernel naive --json jo");
		snprintf(path, sizeof(path), "%s/jo", tmpdir);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_uid, 65534);
		assert_int_equal(st.st_gid, 65534);
	}
	/* No temporary left beside them. */
	assert_int_equal(sh("! ls -A | grep -q tmp"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_keeps_file),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
