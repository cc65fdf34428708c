/*
 * The progress line (issue 23 item 8) through the real binary, its stderr on a pseudo-terminal
 * (posix_openpt(), no tool needed): a long `run`, `sdpa` and a `replay` of a pipe show one line
 * rewritten in place ('\r', no newline) and erased at the end; with --quiet, or with stderr
 * not a terminal, there is none; a terminal that reports no width, or a narrow one, never gets
 * a line that wraps. stdout and the JSON (less the wall time) are byte for byte the same in
 * every case.
 */

#define _XOPEN_SOURCE 700 /* posix_openpt(), grantpt(), ptsname() */

#include "config.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/slurp.h"
#include "tests/unit.h"

#define TMPDIR_NAME "cli-progress"
#include "tests/tmpdir.h"

#include "tests/cli-run.h"

/* Long enough (a few seconds) to pass the line's half-second delay under any build. */
#define LONG_RUN                                                                                   \
	"run --kernel flash2 --N 8192 --d 128 --heads 16 --dtype fp16 --cache h100 --trace-only"

struct tty_result {
	int rc;
	char *tty; /* what memsim wrote to the terminal (its stderr) */
	size_t len;
};

/* Runs the shell line in tmpdir with stderr on a fresh pseudo-terminal of cols columns (0:
 * one that reports no width, as a new one does); stdout goes where the line sends it. */
static struct tty_result
on_tty(unsigned cols, const char *line)
{
	struct tty_result r = { 127, NULL, 0 };
	char cmd[4096], buf[4096];
	int master = posix_openpt(O_RDWR | O_NOCTTY), status = 0;
	pid_t pid;

	assert_true(master >= 0);
	assert_int_equal(grantpt(master), 0);
	assert_int_equal(unlockpt(master), 0);
#ifdef TIOCSWINSZ
	{
		struct winsize ws = { 0 };

		ws.ws_col = (unsigned short)cols;
		ws.ws_row = cols ? 24 : 0;
		assert_int_equal(ioctl(master, TIOCSWINSZ, &ws), 0);
	}
#else
	if (cols)
		skip();
#endif
	snprintf(cmd, sizeof(cmd), "cd %s && %s", tmpdir, line);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int slave;

		setsid();
		slave = open(ptsname(master), O_RDWR);
		if (slave < 0 || dup2(slave, STDERR_FILENO) < 0)
			_exit(126);
		close(master);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	/* Reading ends with EIO once every holder of the terminal's side has exited. */
	for (;;) {
		ssize_t n = read(master, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		r.tty = realloc(r.tty, r.len + (size_t)n + 1);
		memcpy(r.tty + r.len, buf, (size_t)n);
		r.len += (size_t)n;
	}
	if (!r.tty)
		r.tty = calloc(1, 1);
	r.tty[r.len] = '\0';
	close(master);
	if (waitpid(pid, &status, 0) == pid)
		r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return r;
}

/* tmpdir/dir/out.txt and out.json are those of tmpdir/p/ but for the wall time and the
 * peak memory, which vary from run to run. */
static void
expect_same_output(const char *dir)
{
	if (sh("grep -v '^traced ' %s/out.txt > %s/out.cmp && grep -v '^traced ' p/out.txt > "
	       "p/out.cmp && cmp %s/out.cmp p/out.cmp",
	       dir, dir, dir))
		fail_msg("%s/out.txt differs from the run off a terminal", dir);
	for (int k = 0; k < 2; k++) {
		char name[64], *text;
		cJSON *o;

		snprintf(name, sizeof(name), "%s/out.json", k ? dir : "p");
		o = read_json(name);
		assert_non_null(o);
		cJSON_DeleteItemFromObject(o, "traced_seconds");
		cJSON_DeleteItemFromObject(o, "peak_rss_bytes");
		text = cJSON_Print(o);
		snprintf(name, sizeof(name), "%s/out.json.cmp", k ? dir : "p");
		write_file(name, text);
		free(text);
		cJSON_Delete(o);
	}
	if (sh("cmp %s/out.json.cmp p/out.json.cmp", dir))
		fail_msg("%s/out.json differs from the run off a terminal", dir);
}

/* The terminal got progress lines of `what`: drawn with '\r', never a newline (one line
 * rewritten), each under cols columns (80 when the terminal reports none), and erased last. */
static void
expect_progress(const struct tty_result *r, const char *what, unsigned cols)
{
	const char *erase = "\r\033[K";
	size_t width = (cols ? cols : 80) - 1;

	if (!strstr(r->tty, what) || (!cols && !strstr(r->tty, "left")))
		fail_msg("no progress line with '%s' on the terminal: '%s'", what, r->tty);
	assert_null(strchr(r->tty, '\n'));
	assert_true(r->len >= strlen(erase));
	assert_string_equal(r->tty + r->len - strlen(erase), erase);
	for (const char *p = strchr(r->tty, '\r'); p; p = strchr(p + 1, '\r')) {
		const char *end = strstr(p, "\033[K");

		assert_non_null(end);
		if ((size_t)(end - p - 1) > width)
			fail_msg("a line of %zu columns on a terminal of %zu",
				 (size_t)(end - p - 1), width + 1);
	}
}

/* A long run shows progress on a terminal, none with --quiet or off a terminal, and prints
 * the same report and JSON in all three. */
static void
test_run_progress(void **state)
{
	struct tty_result t, q;
	struct result plain;

	(void)state;
	assert_int_equal(sh("mkdir t q p"), 0);
	t = on_tty(0, "cd t && " MEMSIM_BIN " " LONG_RUN " --json out.json > out.txt");
	assert_int_equal(t.rc, 0);
	expect_progress(&t, "memsim: flash2: ", 0);
	if (!strstr(t.tty, "query blocks"))
		fail_msg("no query blocks counted: '%s'", t.tty);

	q = on_tty(0, "cd q && " MEMSIM_BIN " " LONG_RUN " --quiet --json out.json > out.txt");
	assert_int_equal(q.rc, 0);
	assert_string_equal(q.tty, "");

	plain = shell("(cd p && " MEMSIM_BIN " " LONG_RUN " --json out.json > out.txt)");
	assert_int_equal(plain.rc, 0);
	assert_string_equal(plain.err, "");

	expect_same_output("t");
	expect_same_output("q");
	free(t.tty);
	free(q.tty);
	result_free(&plain);
}

/* A terminal of 30 columns gets lines of at most 29. */
static void
test_narrow_terminal(void **state)
{
	struct tty_result t;

	(void)state;
	t = on_tty(30, MEMSIM_BIN " " LONG_RUN " > narrow.txt");
	assert_int_equal(t.rc, 0);
	expect_progress(&t, "memsim: flash2: ", 30);
	free(t.tty);
}

/* A replay of a pipe counts the bytes read (no total: no fraction, no time left) and prints
 * what a replay off the terminal prints. */
static void
test_replay_pipe(void **state)
{
	const char *rec = MEMSIM_BIN " run --quiet --kernel flash2 --N 256 --d 64 --heads 2 "
				     "--record - 2>/dev/null";
	struct tty_result t;
	char line[2048];
	int rc;

	(void)state;
	snprintf(line, sizeof(line), "%s | %s replay - --cache lab > tty.txt", rec, MEMSIM_BIN);
	t = on_tty(0, line);
	assert_int_equal(t.rc, 0);
	if (!strstr(t.tty, "memsim: replay: ") || !strstr(t.tty, "MiB read"))
		fail_msg("no replay progress on the terminal: '%s'", t.tty);
	assert_null(strchr(t.tty, '\n'));
	rc = sh("%s | %s replay - --cache lab > plain.txt 2> plain.err", rec, MEMSIM_BIN);
	assert_int_equal(rc, 0);
	assert_int_equal(sh("cmp tty.txt plain.txt"), 0);
	assert_int_equal(sh("test ! -s plain.err"), 0);
	free(t.tty);
}

/* A long sdpa shows its block steps done of the whole, the rate and the time left (stopped
 * after a second: the line comes after half of one). */
static void
test_sdpa_progress(void **state)
{
	struct tty_result t;

	(void)state;
	t = on_tty(0, "timeout -s INT 1.2 " MEMSIM_BIN " sdpa --q 1,16,262144,64 --k "
		      "1,16,262144,64 > sdpa.txt");
	assert_int_equal(t.rc, 124);
	if (!strstr(t.tty, "memsim: sdpa: ") || !strstr(t.tty, "/67108864 block steps, ") ||
	    !strstr(t.tty, " left"))
		fail_msg("no sdpa progress on the terminal: '%s'", t.tty);
	assert_null(strchr(t.tty, '\n'));
	free(t.tty);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_progress),
		cmocka_unit_test(test_narrow_terminal),
		cmocka_unit_test(test_replay_pipe),
		cmocka_unit_test(test_sdpa_progress),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
