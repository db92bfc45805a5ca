/*
 * FSCTL_LMR_REQUEST_RESILIENCY (worker/resilient.h): the open's durable
 * record, made or updated, is what keeps it after a disconnect.
 */
#include "worker/worker.h"
#include "worker/resilient.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/cur.h"
#include "proto/fscc.h"
#include "shm/shm.h"
#include "worker/conn.h"
#include "worker/durable.h"
#include "worker/file_open.h"
#include "worker/open.h"
#include "worker/smb2.h"
#include "worker/state.h"

/*
 * The record a reconnect needs, from the open and its shared record: the
 * same fields a durable CREATE records (worker/state_open.c), with the
 * oplock or lease the open holds now.
 */
static int
resilient_rec_fill(struct shm *s, const struct open *op,
    struct shm_durable_rec *d)
{
	const struct file_open *f = op->u.file;
	const struct conf_share *sh = op->tree->share;
	struct shm_open_rec o;
	int rc;

	memset(d, 0, sizeof(*d));
	d->persistent_id = op->fid_persistent;
	d->fid.dev = op->state_dev;
	d->fid.ino = op->state_ino;
	if ((rc = shm_open_get(s, &d->fid, op->fid_persistent, &o)) != 0)
		return rc;
	if ((size_t)snprintf(d->path, sizeof(d->path), "%s", f->path) >=
	    sizeof(d->path) ||
	    (size_t)snprintf(d->share, sizeof(d->share), "%s", sh->name) >=
	    sizeof(d->share) ||
	    (size_t)snprintf(d->user, sizeof(d->user), "%s", op->sess->user) >=
	    sizeof(d->user))
		return -ENAMETOOLONG;
	d->access = op->access;
	d->share_access = f->share_access;
	d->oplock_level = o.oplock_level;
	memcpy(d->lease_key, o.lease_key, 16);
	d->lease_state = o.lease_state;
	memcpy(d->client_guid, o.client_guid, 16);
	d->pid = shm_self(s);
	return 0;
}

/*
 * The grants of the last DURABLE_TIMEOUT_MAX_MS, oldest first (a ring):
 * an open kept after a disconnect was either live (resilient) one timeout
 * ago, so within `max open files`, or granted since, so within
 * RESILIENT_GRANTS_MAX.  A user who opens, asks and drops the connection
 * in a loop pins at most that many opens per worker.
 */
static uint64_t grants[RESILIENT_GRANTS_MAX];
static unsigned grant_next;
static uint64_t grant_logged;

static int
resilient_grant_take(const struct session *sess)
{
	uint64_t now = shm_now_ms();
	uint64_t *g = &grants[grant_next];

	if (*g != 0 && now - *g < DURABLE_TIMEOUT_MAX_MS) {
		if (now - grant_logged >= 1000) {
			grant_logged = now;
			log_warnx("%s: %u resilient handles granted in %u s: "
			    "refused", sess->user, RESILIENT_GRANTS_MAX,
			    DURABLE_TIMEOUT_MAX_MS / 1000);
		}
		return -EDQUOT;
	}
	*g = now != 0 ? now : 1;
	grant_next = (grant_next + 1) % RESILIENT_GRANTS_MAX;
	return 0;
}

ntstatus_t
resilient_request(struct smb2_req *req, struct open *op, struct cur *in)
{
	/* ~5 KiB: off the event loop's stack */
	static struct shm_durable_rec rec;
	struct shm *s = state_shm();
	struct session *sess = op->sess;
	uint32_t t;
	int rc;

	/* MS-SMB2 3.3.5.15.9: not on 2.0.2 (Windows answers this) */
	if (req->conn->dialect < 0x0210)
		return STATUS_INVALID_DEVICE_REQUEST;
	if (fscc_resiliency_decode(in, &t) != 0 ||
	    t / 1000 > DURABLE_TIMEOUT_MAX_MS / 1000)
		return STATUS_INVALID_PARAMETER;
	if (t == 0)
		t = RESILIENT_TIMEOUT_DEFAULT_MS;
	/*
	 * Open.DurableOwner is the session's user: an anonymous or guest
	 * session has nobody of its own, and any other such session could
	 * take the open over after a disconnect.  A session re-authenticated
	 * as another identity (worker/smb2_reauth.c) would make that
	 * identity the owner, which this worker cannot act as: refused like
	 * the other new authority.
	 */
	if (sess == NULL || sess->anonymous || sess->guest ||
	    sess->reauth_other || sess->user[0] == '\0')
		return STATUS_ACCESS_DENIED;
	/* What a reconnect reopens by path: a file's unnamed stream. */
	if (op->kind != OPEN_FILE || op->u.file == NULL ||
	    op->u.file->is_dir || op->u.file->stream[0] != '\0' ||
	    op->u.file->prev_version || op->tree == NULL ||
	    op->tree->share == NULL)
		return STATUS_NOT_SUPPORTED;
	if (s == NULL || !op->state_in)
		return STATUS_NOT_SUPPORTED;	/* no shared state to keep it */
	if (resilient_grant_take(sess) != 0)
		return STATUS_INSUFF_SERVER_RESOURCES;
	/* A durable open's record is reused: it becomes resilient. */
	if (shm_durable_get(s, op->fid_persistent, &rec) != 0 &&
	    (rc = resilient_rec_fill(s, op, &rec)) != 0)
		goto fail;
	rec.persistent_id = op->fid_persistent;
	rec.timeout_ms = t;
	/* Open.IsDurable is FALSE now: DHnC reclaims it, not DH2C. */
	rec.flags = (rec.flags & ~SHM_DURABLE_V2) | SHM_DURABLE_RESILIENT;
	memset(rec.create_guid, 0, sizeof(rec.create_guid));
	if ((rc = shm_durable_put(s, &rec)) != 0)
		goto fail;
	op->durable = 0;
	op->resilient = 1;
	op->durable_timeout_ms = t;
	log_debug(2, "open %llx of \"%s\" resilient for %u ms",
	    (unsigned long long)op->fid_persistent, op->u.file->path, t);
	return STATUS_SUCCESS;
fail:
	errno = -rc;
	log_warn("open %llx: resiliency not recorded",
	    (unsigned long long)op->fid_persistent);
	return rc == -ENOSPC ? STATUS_INSUFF_SERVER_RESOURCES :
	    STATUS_UNSUCCESSFUL;
}
