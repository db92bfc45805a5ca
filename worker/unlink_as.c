/*
 * Delete-on-close across users (worker/unlink_as.h).
 *
 * The asking side sends what identifies the file: the share name and the
 * share-relative path it was opened under, and its dev and ino.  The master
 * routes by the uid alone and adds the share's root from its config; it
 * never touches the file.  The answering side trusts nothing of the path:
 * it opens the root, resolves the parent beneath it (vfs openat2
 * RESOLVE_BENEATH, never a concatenated string), and unlinks the last name
 * only when it is still the same inode -- a file created in its place since
 * the close is left alone.  A replacement between that check and the
 * unlinkat(2) cannot be excluded (POSIX has no unlink-by-inode); the window
 * is one syscall wide.
 *
 * Nor does the answering side trust the asker's word that a delete is
 * due: the asker is another user's worker, and a compromised one must not
 * be able to make this user's worker delete what this user may delete
 * (DESIGN.md, security model).  So this worker acts only on a delete it
 * vouched for itself -- it made the file delete pending and closed its
 * handle while other opens remained -- recorded in its own memory, which
 * no other process can write (unlink_as_vouch).
 */

/*
 * The whole flow, and its limits.
 *
 * Delete-on-close across users.  Windows checks DELETE when
 * delete-on-close is asked for and deletes the file at the last close,
 * whoever closes it; usmbd never switches credentials (Samba does, to
 * the setter's), so the unlink is done by a process of the user who
 * asked.  Each delete-pending name in the file's opens value carries a
 * delete token: the euid of the worker that made it delete pending
 * (FileDispositionInformation, or the close of a FILE_DELETE_ON_CLOSE
 * open; shm/opens.c, v4), and the name's last close gets it back
 * (shm_close_result.delete_uid).  The closing worker unlinks as before;
 * when that fails with EACCES/EPERM (a sticky directory, a directory it
 * may not write) and the token is another uid, it sends MSG_UNLINK_AS
 * (uid, dev, ino, is_dir, its share name and share-relative path) to the
 * master and goes on: nothing waits for an answer (worker/unlink_as.c).
 * The master checks only what routing needs (not uid 0, not the sender's
 * uid, an enabled passdb user or the guest account, a disk share of its
 * config), adds the share's root path and forwards MSG_UNLINK_DO to
 * every live worker of that uid; it starts none (daemon/route.c).  The
 * receiving worker does not take the asker's word: it acts only on a
 * delete it vouched for itself.  A worker that made a file delete
 * pending and closes its handle while other opens remain (so the unlink
 * is some other worker's last close) records share, path, dev, ino in a
 * table in its own memory (UNLINK_AS_VOUCH_MAX = 256 entries, allocated
 * once; when full the oldest is dropped with a warning).  An
 * MSG_UNLINK_DO must match an entry on all of dev, ino, share and path,
 * and consumes it; anything else is refused and logged ("unvouched
 * request").  Entries also end after 24 h, or on the 1 s worker tick
 * (looked at every 10 s, the tick stays armed only while entries are
 * held) once the state env has shown no open of the file on two sweeps
 * in a row; a worker holding entries does not exit idle.  Then it opens
 * the root, resolves the parent beneath it (openat2 RESOLVE_BENEATH),
 * unlinks the name only if it is still the same dev/ino (a file that
 * took the name since is left, "not deleted" in the log) and logs the
 * outcome. The invariant kept (DESIGN.md, security model): a compromised
 * worker can make another user's worker delete only a file that user
 * himself left delete pending, through an open he himself made -- what
 * his client asked for anyway -- never an arbitrary file he could
 * delete.  This is the guarantee issue 19 asks of "forwarded only when
 * the state shows that uid's delete token", held in a place no other
 * process can write: the delete tokens in the state env are written by
 * workers, so a compromised one could forge a token and pass such a
 * check in the master or the state process; the vouch table is in the
 * receiving worker's own memory.  The master therefore forwards without
 * looking at the state (it maps none), rate-limited per sender
 * (Forwarding never kills, above).  Remaining gaps: if the vouching
 * worker is gone before the last close (killed, crashed, a restart: idle
 * exit is held off), the file stays, with "no live worker of USER ...
 * the file is left" in the master's log (t/integ/state_doc.sh tests
 * this); with several workers per user every one gets the request and
 * the ones that did not vouch log it as unvouched; a replacement in the
 * one-syscall window between the dev/ino check and unlinkat cannot be
 * excluded; named streams and durable opens closed by another open
 * (worker/durable.c) keep the old same-user unlink. Tests:
 * t/integ/state_doc.sh with t/integ/state_doc.py (bob's file in a 1777
 * directory, alice closes last: gone; bob's worker killed first: a new
 * one unlinks it; a replaced inode is not deleted).
 */
/*
 * A share with a recycle bin (worker/recycle.h) sends every delete another
 * user left pending here, not only one the closer may not do, so that the
 * file goes into the deleter's bin with his rights; this worker takes the
 * bin's settings from its own config by the share's name and resolves
 * every path itself, as for an unlink.
 */
#include "worker/unlink_as.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "daemon/msg.h"
#include "daemon/unlinkmsg.h"
#include "shm/shm.h"
#include "vfs/vfs.h"
#include "worker/conn.h"
#include "worker/file_open.h"
#include "worker/fruit.h"
#include "worker/recycle.h"
#include "worker/state.h"
#include "worker/worker.h"

/* One request at a time in a single-threaded worker: off the stack. */
static struct unlinkmsg	unlink_as_msg;
static uint8_t		unlink_as_buf[MSG_MAX_PAYLOAD];

/* A delete this worker vouches for (worker/unlink_as.h). */
struct unlink_as_vouch {
	int		 in_use;
	uint8_t		 is_dir;
	uint8_t		 idle;		/* sweeps that saw no open of it */
	uint64_t	 dev;
	uint64_t	 ino;
	int64_t		 since_s;	/* CLOCK_MONOTONIC */
	uint64_t	 seq;		/* order of vouching: the oldest goes */
	char		 share[256];
	char		 path[MSG_UNLINK_STR_MAX];
};

/*
 * Allocated once (zero-fill pages: an unused table costs no memory); no
 * other process writes it, which is the point.
 */
static struct unlink_as_vouch	unlink_as_vouches[UNLINK_AS_VOUCH_MAX];
static unsigned			unlink_as_nvouch;
static int64_t			unlink_as_swept_s;
static uint64_t			unlink_as_seq;

static int64_t
unlink_as_now_s(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec;
}

static void
unlink_as_vouch_drop(struct unlink_as_vouch *v)
{
	v->in_use = 0;
	v->share[0] = v->path[0] = '\0';
	if (unlink_as_nvouch > 0)
		unlink_as_nvouch--;
}

void
unlink_as_vouch_reset(void)
{
	unsigned i;

	for (i = 0; i < UNLINK_AS_VOUCH_MAX; i++)
		if (unlink_as_vouches[i].in_use)
			unlink_as_vouch_drop(&unlink_as_vouches[i]);
	unlink_as_nvouch = 0;
	unlink_as_swept_s = 0;
}

unsigned
unlink_as_held(void)
{
	return unlink_as_nvouch;
}

void
unlink_as_vouch(const struct tree *t, const struct file_open *f)
{
	struct unlink_as_vouch *v = NULL, *oldest = NULL, *e;
	unsigned i;

	if (t == NULL || t->share == NULL || f->path[0] == '\0' ||
	    f->stream[0] != '\0' ||
	    strlen(tree_name(t)) >= sizeof(v->share) ||
	    strlen(f->path) >= sizeof(v->path))
		return;
	for (i = 0; i < UNLINK_AS_VOUCH_MAX; i++) {
		e = &unlink_as_vouches[i];
		if (!e->in_use) {
			if (v == NULL)
				v = e;
			continue;
		}
		/* The same delete again (another handle of ours): refreshed. */
		if (e->dev == f->dev && e->ino == f->ino &&
		    strcmp(e->share, tree_name(t)) == 0 &&
		    strcmp(e->path, f->path) == 0) {
			e->since_s = unlink_as_now_s();
			e->seq = ++unlink_as_seq;
			e->idle = 0;
			return;
		}
		if (oldest == NULL || e->seq < oldest->seq)
			oldest = e;
	}
	if (v == NULL) {
		v = oldest;
		log_warnx("delete on close: %u vouched deletes held, the oldest "
		    "(%s\\%s) is forgotten: its last close by another user "
		    "will not delete it", UNLINK_AS_VOUCH_MAX, v->share, v->path);
		unlink_as_vouch_drop(v);
	}
	v->in_use = 1;
	v->is_dir = f->is_dir != 0;
	v->idle = 0;
	v->dev = f->dev;
	v->ino = f->ino;
	v->since_s = unlink_as_now_s();
	v->seq = ++unlink_as_seq;
	strcpy(v->share, tree_name(t));
	strcpy(v->path, f->path);
	unlink_as_nvouch++;
	log_debug(2, "delete on close of %s\\%s left to another open's last "
	    "close: vouched for", v->share, v->path);
	worker_tick_arm();
}

/* The entry u names, consumed: 0, or -1 when this worker never vouched. */
static int
unlink_as_vouch_take(const struct unlinkmsg *u)
{
	unsigned i;

	for (i = 0; i < UNLINK_AS_VOUCH_MAX; i++) {
		struct unlink_as_vouch *e = &unlink_as_vouches[i];

		if (e->in_use && e->dev == u->dev && e->ino == u->ino &&
		    e->is_dir == u->is_dir && strcmp(e->share, u->share) == 0 &&
		    strcmp(e->path, u->path) == 0) {
			unlink_as_vouch_drop(e);
			return 0;
		}
	}
	return -1;
}

int
unlink_as_tick(void)
{
	struct shm *s;
	int64_t now;
	unsigned i;
	int n, rc;

	if (unlink_as_nvouch == 0)
		return 0;
	now = unlink_as_now_s();
	if (now - unlink_as_swept_s < UNLINK_AS_SWEEP_S)
		return 1;
	unlink_as_swept_s = now;
	s = state_shm();
	for (i = 0; i < UNLINK_AS_VOUCH_MAX; i++) {
		struct unlink_as_vouch *e = &unlink_as_vouches[i];
		struct shm_file_id fid;

		if (!e->in_use)
			continue;
		if (now - e->since_s >= UNLINK_AS_VOUCH_TTL_S) {
			log_info("delete on close of %s\\%s: vouched for %d h "
			    "without a last close, forgotten", e->share, e->path,
			    UNLINK_AS_VOUCH_TTL_S / 3600);
			unlink_as_vouch_drop(e);
			continue;
		}
		if (s == NULL)
			continue;
		fid.dev = e->dev;
		fid.ino = e->ino;
		rc = shm_open_count(s, &fid, &n);
		if ((rc != 0 && rc != -ENOENT) || n > 0) {
			e->idle = 0;
			continue;
		}
		/*
		 * No open left: the last close happened (deleted, or the
		 * disposition was cleared).  Twice, so that an MSG_UNLINK_DO
		 * still on its way through the master is not refused.
		 */
		if (++e->idle >= 2) {
			log_debug(2, "delete on close of %s\\%s: no open left, "
			    "no longer vouched for", e->share, e->path);
			unlink_as_vouch_drop(e);
		}
	}
	return unlink_as_nvouch > 0;
}

int
unlink_as_request(const struct tree *t, const struct file_open *f,
    uint32_t uid)
{
	struct unlinkmsg *u = &unlink_as_msg;
	int n, rc;

	if (t == NULL || t->share == NULL || f->path[0] == '\0' || uid == 0)
		return -EINVAL;
	memset(u, 0, sizeof(*u));
	u->uid = uid;
	u->dev = f->dev;
	u->ino = f->ino;
	u->is_dir = f->is_dir != 0;
	if (strlen(tree_name(t)) >= sizeof(u->share) ||
	    strlen(f->path) >= sizeof(u->path))
		return -ENAMETOOLONG;
	strcpy(u->share, tree_name(t));
	strcpy(u->path, f->path);
	n = unlinkmsg_encode(u, 0, unlink_as_buf, sizeof(unlink_as_buf));
	if (n < 0)
		return -EMSGSIZE;
	rc = msg_send(MSG_CHILD_FD, MSG_UNLINK_AS, 0, unlink_as_buf, (size_t)n, -1);
	if (rc != 0)
		log_warnx("delete on close of \"%s\" as uid %u: cannot ask the "
		    "master: %s", f->path, uid, strerror(-rc));
	else
		log_debug(2, "delete on close of \"%s\": asked a worker of uid %u",
		    f->path, uid);
	return rc;
}

/* Unlinks u->path beneath root_fd if it still is dev/ino: 0 or -errno. */
static int
unlink_as_do(const struct unlinkmsg *u, int root_fd)
{
	const struct conf_share *sh;
	const char *last = strrchr(u->path, '/');
	int rc;

	last = last != NULL ? last + 1 : u->path;
	if (last[0] == '\0' || strcmp(last, ".") == 0 || strcmp(last, "..") == 0)
		return -EINVAL;
	sh = worker_conf() != NULL ? conf_share_find(worker_conf(), u->share) :
	    NULL;
	/* into this user's bin when the share has one (worker/recycle.h) */
	rc = recycle_unlink(sh, worker_user(), root_fd, u->path, u->is_dir,
	    u->dev, u->ino);
	/* its "._" file with it, as the closer's own delete does (fruit.h) */
	if (rc == 0 && !u->is_dir)
		(void)fruit_rsrc_unlinked(sh, worker_user(), root_fd, u->path);
	return rc;
}

void
unlink_as_handle(const struct msg *m)
{
	struct unlinkmsg *u = &unlink_as_msg;
	int root_fd, rc;

	if (unlinkmsg_decode(u, 1, m->payload, m->len) != 0) {
		log_warnx("malformed MSG_UNLINK_DO (%u bytes) ignored", m->len);
		return;
	}
	/* The master picked this worker by uid; a mismatch is its bug. */
	if (u->uid != (uint32_t)user_euid()) {
		log_warnx("delete on close of \"%s\" for uid %u sent to uid %u: "
		    "ignored", u->path, u->uid, (unsigned)user_euid());
		return;
	}
	if (u->path[0] == '\0' || u->path[0] == '/' || u->root[0] != '/') {
		log_warnx("delete on close: bad path \"%s\" or root \"%s\"",
		    u->path, u->root);
		return;
	}
	/* The asker's word is not enough: only a delete this worker set. */
	if (unlink_as_vouch_take(u) != 0) {
		log_warnx("delete on close of %s\\%s (dev %llx ino %llu): "
		    "unvouched request (this worker did not leave it delete "
		    "pending): refused", u->share, u->path,
		    (unsigned long long)u->dev, (unsigned long long)u->ino);
		return;
	}
	root_fd = open(u->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0) {
		rc = -errno;
		goto out;
	}
	rc = unlink_as_do(u, root_fd);
	close(root_fd);
out:
	if (rc == 0)
		log_info("delete on close of %s\\%s done for another user's "
		    "last close", u->share, u->path);
	else if (rc == -ESTALE)
		log_info("delete on close of %s\\%s: the name is now another "
		    "file (dev/ino changed): not deleted", u->share, u->path);
	else
		log_info("delete on close of %s\\%s as uid %u failed: %s",
		    u->share, u->path, u->uid, strerror(-rc));
}
