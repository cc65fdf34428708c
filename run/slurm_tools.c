#include "run/slurm_tools.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "measure/spawn.h"

static const char *const names[SLURM_TOOL_COUNT] = { "sbatch", "squeue", "sacct", "scancel",
						     "scontrol" };
static const char *const envs[SLURM_TOOL_COUNT] = { "MEMSIM_SBATCH", "MEMSIM_SQUEUE",
						    "MEMSIM_SACCT", "MEMSIM_SCANCEL",
						    "MEMSIM_SCONTROL" };
static struct sigaction old_pipe; /* SIGPIPE's handling before slurm_tools_init() */

const char *
slurm_tool_name(enum slurm_tool which)
{
	const char *e = getenv(envs[which]);

	return e && *e ? e : names[which];
}

void
slurm_tools_init(struct slurm_tools *t)
{
	struct sigaction ignore;

	memset(t, 0, sizeof(*t));
	for (int i = 0; i < SLURM_TOOL_COUNT; i++)
		if (!spawn_find(slurm_tool_name(i), t->path[i], sizeof(t->path[i])))
			t->path[i][0] = '\0';
	/* The temporary directory goes however the command ends, but for SIGKILL. */
	memset(&ignore, 0, sizeof(ignore));
	ignore.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ignore, &old_pipe);
	spawn_guard_begin();
}

int
slurm_tools_interrupted(void)
{
	return spawn_guard_signal();
}

/* path inside t->tmp. */
static void
tmp_path(const struct slurm_tools *t, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", t->tmp, name);
}

void
slurm_tools_finish(struct slurm_tools *t)
{
	char path[4200];

	if (t->tmp[0]) {
		tmp_path(t, "out", path, sizeof(path));
		unlink(path);
		tmp_path(t, "err", path, sizeof(path));
		unlink(path);
		rmdir(t->tmp);
		t->tmp[0] = '\0';
	}
	spawn_guard_end();
	sigaction(SIGPIPE, &old_pipe, NULL);
}

/* The whole file at path, or "" (caller frees with free()). */
static char *
read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t n = 0, cap = 4096, got;
	char *s = xzalloc(cap);

	while (f && (got = fread(s + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (cap - n < 2) {
			s = xrealloc(s, cap * 2);
			cap *= 2;
		}
	}
	s[n] = '\0';
	if (f)
		fclose(f);
	return s;
}

int
slurm_tool_run(struct slurm_tools *t, enum slurm_tool which, const char *const *args, char **out,
	       char *last, size_t lastlen)
{
	const char *argv[64];
	char opath[4200], epath[4200], err[512];
	const char *base = getenv("TMPDIR");
	int n = 0, rc;

	*out = NULL;
	last[0] = '\0';
	if (!t->path[which][0]) {
		snprintf(last, lastlen, "%s not found%s", slurm_tool_name(which),
			 getenv(envs[which]) ? "" : " on PATH");
		return -1;
	}
	if (!t->tmp[0] && make_private_dir(base && base[0] == '/' ? base : "/tmp", "memsim-slurm",
					   t->tmp, sizeof(t->tmp), err, sizeof(err))) {
		t->tmp[0] = '\0';
		snprintf(last, lastlen, "%s", err);
		return -1;
	}
	argv[n++] = t->path[which];
	for (; *args && n < 63; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	tmp_path(t, "out", opath, sizeof(opath));
	tmp_path(t, "err", epath, sizeof(epath));
	rc = spawn_wait((char *const *)argv, opath, epath, last, lastlen);
	if (rc >= 0) {
		spawn_last_line(epath, last, lastlen);
		*out = read_all(opath);
	}
	return rc;
}

bool
slurm_state_active(const char *state)
{
	static const char *const ended[] = { "COMPLETED", "CANCELLED",     "FAILED",
					     "TIMEOUT",   "NODE_FAIL",     "PREEMPTED",
					     "BOOT_FAIL", "OUT_OF_MEMORY", "DEADLINE",
					     "REVOKED",   "SPECIAL_EXIT",  NULL };

	if (!state[0])
		return false;
	for (int i = 0; ended[i]; i++)
		if (strncmp(state, ended[i], strlen(ended[i])) == 0)
			return false;
	return true;
}

/* Records what one line of squeue ("ID_i STATE", "ID STATE") or sacct ("ID_i|STATE by 0")
 * says of job id, where states[] knows nothing of that task yet. A pending array's
 * "ID_[2-5%4]" names every task in its range. */
static void
take_line(const char *line, const char *id, uint64_t n, char (*states)[SLURM_STATE_LEN])
{
	size_t idlen = strlen(id), k = strcspn(line, " |\t");
	const char *st = line + k + (line[k] != '\0');
	char state[SLURM_STATE_LEN];
	unsigned long lo, hi;
	char *end;

	snprintf(state, sizeof(state), "%.*s", (int)strcspn(st, " |\t\n"), st);
	if (!state[0] || strncmp(line, id, idlen) != 0)
		return;
	if (line[idlen] == ' ' || line[idlen] == '|' || line[idlen] == '\t') {
		if (!states[n][0])
			snprintf(states[n], SLURM_STATE_LEN, "%s", state);
		return;
	}
	if (line[idlen] != '_')
		return;
	line += idlen + 1;
	/* "3", or "[2-5]", "[1,3]", "[0-7%2]": each item a task or a range. */
	if (*line == '[')
		line++;
	while (*line >= '0' && *line <= '9') {
		lo = hi = strtoul(line, &end, 10);
		if (*end == '-')
			hi = strtoul(end + 1, &end, 10);
		for (unsigned long i = lo; i <= hi && i < n; i++)
			if (!states[i][0])
				snprintf(states[i], SLURM_STATE_LEN, "%s", state);
		line = *end == ',' ? end + 1 : end;
	}
}

/* Asks tool which (squeue or sacct) with args about job id; true when it answered. */
static bool
ask(struct slurm_tools *t, enum slurm_tool which, const char *const *args, const char *id,
    uint64_t n, char (*states)[SLURM_STATE_LEN], char *why, size_t whylen)
{
	char last[512], *out, *save = NULL;
	int rc = slurm_tool_run(t, which, args, &out, last, sizeof(last));

	if (rc != 0) {
		if (rc > 0)
			snprintf(why, whylen, "%s: %s", names[which], last[0] ? last : "failed");
		else
			snprintf(why, whylen, "%s", last);
		free(out);
		return false;
	}
	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		take_line(l + strspn(l, " "), id, n, states);
	free(out);
	return true;
}

bool
slurm_job_states(struct slurm_tools *t, const char *id, uint64_t n, char (*states)[SLURM_STATE_LEN],
		 char *from, size_t fromlen)
{
	const char *sq[] = { "-h", "-r", "-t", "all", "-j", id, "-o", "%i %T", NULL };
	const char *sa[] = { "-n", "-X", "-P", "-j", id, "-o", "JobID,State", NULL };
	char why_q[600] = "", why_a[600] = "";
	bool q, a = false, missing = false, gone;

	for (uint64_t i = 0; i <= n; i++)
		states[i][0] = '\0';
	/* squeue answers 1 for a job it no longer holds: no state, but an answer (it ended). */
	q = ask(t, SLURM_SQUEUE, sq, id, n, states, why_q, sizeof(why_q));
	gone = !q && strstr(why_q, "Invalid job id specified");
	missing = n == 0 && !states[0][0];
	for (uint64_t i = 0; i < n && !missing; i++)
		missing = !states[i][0];
	if (!q || missing)
		a = ask(t, SLURM_SACCT, sa, id, n, states, why_a, sizeof(why_a));
	if (q || a)
		snprintf(from, fromlen, "%s%s%s", q ? "squeue" : "", q && a ? ", " : "",
			 a ? "sacct" : "");
	else
		snprintf(from, fromlen, "%s; %s", why_q, why_a);
	return q || a || gone;
}

/* The number after "name" and blanks and "=" in line ("MaxArraySize            = 1001"), or
 * after "name=" inside it ("...,max_array_tasks=500,..."); false where line has none. */
static bool
config_value(const char *line, const char *name, bool inside, uint64_t *v)
{
	const char *at = inside ? strstr(line, name) : line;
	size_t len = strlen(name);
	char *end;

	if (!at || strncmp(at, name, len) != 0)
		return false;
	at += len;
	if (!inside && at[0] != ' ' && at[0] != '=')
		return false;
	at += strspn(at, " ");
	if (*at++ != '=')
		return false;
	at += strspn(at, " ");
	if (*at < '0' || *at > '9')
		return false;
	errno = 0;
	*v = strtoull(at, &end, 10);
	return errno == 0;
}

uint64_t
slurm_max_array(struct slurm_tools *t, char *what, size_t whatlen, char *why, size_t whylen)
{
	static const char *const args[] = { "show", "config", NULL };
	char last[512], *out = NULL, *save = NULL;
	uint64_t max = 0, tasks = 0, v;
	bool found = false, limited = false;
	int rc = slurm_tool_run(t, SLURM_SCONTROL, args, &out, last, sizeof(last));

	why[0] = '\0';
	for (char *l = rc == 0 ? strtok_r(out, "\n", &save) : NULL; l;
	     l = strtok_r(NULL, "\n", &save)) {
		if (config_value(l, "MaxArraySize", false, &v)) {
			found = true;
			max = v;
		} else if (strncmp(l, "SchedulerParameters", 19) == 0 &&
			   config_value(l, "max_array_tasks", true, &v)) {
			limited = true;
			tasks = v;
		}
	}
	free(out);
	if (found) {
		if (limited && tasks < max)
			max = tasks;
		snprintf(what, whatlen, "%s %llu",
			 max == tasks && limited ? "max_array_tasks" : "MaxArraySize",
			 (unsigned long long)max);
		return max;
	}
	if (rc < 0)
		snprintf(why, whylen, "%s", last);
	else if (rc > 0)
		snprintf(why, whylen, "%s show config: %s", slurm_tool_name(SLURM_SCONTROL),
			 last[0] ? last : "failed");
	else
		snprintf(why, whylen, "%s show config gives no MaxArraySize",
			 slurm_tool_name(SLURM_SCONTROL));
	snprintf(what, whatlen, "MaxArraySize %d (Slurm's default)", SLURM_DEFAULT_MAX_ARRAY);
	return SLURM_DEFAULT_MAX_ARRAY;
}
