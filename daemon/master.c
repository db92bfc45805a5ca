/*
 * The master's state, its epoll registration helpers, config reload and the
 * start of a shutdown.  daemon/main.c holds argv, daemonising and the loop.
 */
#include "daemon/master.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>

#include "daemon/auth.h"
#include "daemon/conf.h"
#include "daemon/ctl.h"
#include "daemon/listen.h"
#include "daemon/log.h"
#include "daemon/msg.h"
#include "daemon/passdb.h"
#include "daemon/spawn.h"

struct master master = { .debug_level = -1, .epfd = -1 };

int64_t
master_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
master_ev_add(int fd, enum master_ev kind, uint32_t idx, uint32_t events)
{
	struct epoll_event ev = { .events = events };

	ev.data.u64 = (uint64_t)kind << 32 | idx;
	if (epoll_ctl(master.epfd, EPOLL_CTL_ADD, fd, &ev) == -1)
		return -errno;
	return 0;
}

int
master_ev_mod(int fd, enum master_ev kind, uint32_t idx, uint32_t events)
{
	struct epoll_event ev = { .events = events };

	ev.data.u64 = (uint64_t)kind << 32 | idx;
	if (epoll_ctl(master.epfd, EPOLL_CTL_MOD, fd, &ev) == -1)
		return -errno;
	return 0;
}

void
master_ev_del(int fd)
{
	if (master.epfd >= 0)
		(void)epoll_ctl(master.epfd, EPOLL_CTL_DEL, fd, NULL);
}

/*
 * Loads path; every line conf_load writes (warnings too) goes to the log,
 * and the first one to err.
 */
static int
master_conf_load(const char *path, struct conf **out, char *err, size_t errlen)
{
	char *text = NULL, *line, *save = NULL;
	size_t sz = 0;
	FILE *mf;
	int rc;

	if (err != NULL && errlen > 0)
		*err = '\0';
	mf = open_memstream(&text, &sz);
	if (mf == NULL)
		return conf_load(path, out, stderr);
	rc = conf_load(path, out, mf);
	fclose(mf);
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		log_warnx("%s", line);
		if (err != NULL && errlen > 0 && *err == '\0')
			snprintf(err, errlen, "%s", line);
	}
	free(text);
	if (rc != 0 && err != NULL && errlen > 0 && *err == '\0')
		snprintf(err, errlen, "%s: cannot load the config", path);
	return rc;
}

void
master_apply_log_level(const struct conf *conf)
{
	log_level = master.debug_level >= 0 ? master.debug_level : conf->log_level;
}

struct master_user_find {
	const char	*unix_name;
	int		 enabled;	/* an enabled entry maps to it */
	int		 any;
};

static int
master_user_find_one(const struct passdb_entry *e, void *arg)
{
	struct master_user_find *uf = arg;

	if (strcmp(e->unix_name, uf->unix_name) != 0)
		return 0;
	uf->any = 1;
	if (!(e->flags & PASSDB_FLAG_DISABLED)) {
		uf->enabled = 1;
		return 1;
	}
	return 0;
}

/*
 * A worker serves one Unix account; when no enabled passdb user maps to it
 * any more (deleted or disabled), its sessions must go: the worker is told
 * to stop, which closes its connections and files.  The guest account is
 * not in the passdb and is left alone.
 */
static void
master_drop_revoked_users(const struct conf *nc)
{
	int i;

	if (master.passdb == NULL)
		return;
	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		struct child *c = &spawn_children[i];
		struct master_user_find uf = { c->user, 0, 0 };

		if (c->pid <= 0 || c->role != CHILD_WORKER || c->dying ||
		    c->user[0] == '\0' ||
		    (nc->guest_account != NULL &&
		    strcmp(c->user, nc->guest_account) == 0))
			continue;
		if (passdb_foreach(master.passdb, master_user_find_one, &uf) < 0)
			continue;
		if (uf.enabled)
			continue;
		log_info("user %s is %s in the passdb: stopping worker %d and "
		    "its sessions", c->user, uf.any ? "disabled" : "gone",
		    (int)c->pid);
		c->dying = 1;
		c->stopping = 1;
		(void)spawn_send(c, MSG_SHUTDOWN, 0, NULL, 0);
	}
}

int
master_reload(char *err, size_t errlen)
{
	struct conf *nc = NULL, *old = master.conf;

	if (master_conf_load(master.conf_path, &nc, err, errlen) != 0) {
		log_warnx("reload: keeping the old config (%s)", err);
		return 2;
	}
	master.conf = nc;
	master_apply_log_level(nc);
	if (!master.foreground && log_open(nc->log_file) != 0)
		log_warn("reload: cannot open log file %s", nc->log_file);
	if (!listen_same(old, nc)) {
		listen_close();
		if (listen_open(nc) != 0) {
			log_warnx("reload: new listeners failed, back to the old ones");
			if (listen_open(old) != 0)
				log_warnx("reload: cannot listen at all any more");
		}
	}
	if (strcmp(old->lock_dir, nc->lock_dir) != 0) {
		ctl_close();
		if (mkdir(nc->lock_dir, 0755) == -1 && errno != EEXIST)
			log_warn("reload: mkdir %s", nc->lock_dir);
		if (ctl_open(nc->lock_dir) != 0)
			log_warnx("reload: no control socket in %s", nc->lock_dir);
	}
	if (strcmp(old->pid_dir, nc->pid_dir) != 0)
		log_warnx("reload: `pid directory` changes take a restart");
	if (auth_passdb_open(nc) != 0)
		log_warnx("reload: passdb in %s unavailable, logons will fail",
		    nc->private_dir);
	master_drop_revoked_users(nc);
	conf_free(old);
	spawn_broadcast(MSG_RELOAD);
	log_info("reloaded %s", master.conf_path);
	return 0;
}

void
master_shutdown_begin(const char *why)
{
	if (master.shutting_down)
		return;
	log_info("shutting down (%s)", why);
	master.shutting_down = 1;
	master.shutdown_deadline = time(NULL) + MASTER_SHUTDOWN_GRACE;
	listen_close();
	spawn_broadcast(MSG_SHUTDOWN);
}
