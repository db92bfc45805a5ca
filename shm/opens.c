/*
 * Opens and share modes.  All opens of a file are one value under the file
 * id (DESIGN.md: "opens: file id -> open records"), behind a small header
 * that lists the names (links) of the file that are delete pending.  The share-mode check and the
 * insert, and likewise a close, are one mdb_get and one mdb_put in one write
 * transaction: no cursor (LMDB allocates every cursor of a write
 * transaction), and two workers can never both get a conflicting open.
 *
 * Value v4: u8 version, u32 n, u8 ndel, then ndel delete-pending names
 * (u64 link, u32 delete token: the uid that made the name delete pending,
 * so that its last close can unlink it with that user's rights:
 * worker/unlink_as.c), then n records of SHM_OREC_LEN:
 *   u64 persistent id, u32 pid, u64 session id, u32 access, u32 share,
 *   u32 create options, u8 oplock, u8 breaking to, u32 lease state,
 *   16 lease key, 16 client guid, u32 flags, u64 opened, u64 link
 * Delete pending is a name's (MS-FSA's Link), not the file's: with two
 * hard links, a delete of one never takes the other, and only the opens of
 * a name hold back its unlink (as in Samba, whose share entries carry a
 * name hash).
 * A file's stream list (the copies of its named streams' opens, see
 * slist_key) is such a value too, under the file's key plus one byte.
 */

/*
 * Delete pending belongs to a name.
 *
 * - Delete pending belongs to a name, not to the file (MS-FSA's Link;
 *   Samba keys it by a name hash too).  Each open record carries the
 *   identity of the name it was opened by (link: a hash of the share's
 *   path and the path below it, worker/state.c state_link_id), and the
 *   file's opens value lists the names that are delete pending, each
 *   with its delete token (shm/opens.c, v4, at most 8 at once).  A new
 *   open of a delete-pending name gets DELETE_PENDING; the close of the
 *   last open of that name says to unlink it
 *   (shm_close_result.delete_file) -- opens of the file's other hard
 *   links neither hold it back nor get deleted.  The closer unlinks its
 *   own path only while it still names the same inode
 *   (vfs->unlink_same): a rename made in another worker cannot make it
 *   delete the file that took the old name.  A rename moves the opens of
 *   the old name to the new one (shm_open_relink) and this worker's
 *   other handles of that name follow it (file_open_renamed); another
 *   worker's handles keep the old path, so a delete through them after a
 *   rename is refused by the inode check and the file stays.  A CREATE
 *   that waits for a break (or fails) withdraws its record without its
 *   delete-on-close taking effect (shm_open_withdraw): the Linux
 *   client's unlink of a file it holds open with a lease, a
 *   CREATE(DELETE_ON_CLOSE)+CLOSE compound, would otherwise meet its own
 *   delete pending when it runs again. Tests: t/unit/check_shm.c
 *   (test_delete_pending_links), t/integ/links.sh.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "shm/shm_priv.h"

/* Access that takes part in the sharing check, MS-FSA 2.1.5.1.2 */
#define SHM_DATA_ACCESS (SHM_FILE_READ_DATA | SHM_FILE_WRITE_DATA | \
	SHM_FILE_APPEND_DATA | SHM_FILE_EXECUTE | SHM_DELETE)

/* The index of link in the delete-pending list, or -1. */
static int
ofile_del_find(const struct shm_ofile *of, uint64_t link)
{
	for (uint32_t i = 0; i < of->ndel; i++)
		if (of->del[i].link == link)
			return (int)i;
	return -1;
}

/* link becomes delete pending with token uid (kept if it already is). */
static int
ofile_del_add(struct shm_ofile *of, uint64_t link, uint32_t uid)
{
	int i = ofile_del_find(of, link);

	if (i >= 0) {
		of->del[i].uid = uid;
		return 0;
	}
	if (of->ndel >= SHM_ODEL_MAX)
		return -ENOSPC;
	of->del[of->ndel].link = link;
	of->del[of->ndel].uid = uid;
	of->ndel++;
	return 0;
}

static void
ofile_del_drop(struct shm_ofile *of, uint32_t i)
{
	of->del[i] = of->del[--of->ndel];
}

/*
 * Does an open of the loaded file use name link?  held: one that is not a
 * POSIX open.  POSIX opens never hold back the unlink of a delete-pending
 * name: it goes at the close that leaves only them, as Linux's unlink, and
 * they go on with the unlinked file (Samba 4.22's has_other_nonposix_opens).
 */
static int
ofile_link_used(const struct shm_ofile *of, uint64_t link, int held)
{
	const uint8_t *p;

	for (uint32_t i = 0; i < of->n; i++) {
		p = of->rec + (size_t)i * SHM_OREC_LEN;
		if (le64_get(p + OR_LINK) == link &&
		    !(held && (le32_get(p + OR_FLAGS) & SHM_OPEN_POSIX)))
			return 1;
	}
	return 0;
}

/* The opens value under a key: a file id's, or a stream list's. */
static int
ofile_view_key(struct shm *s, MDB_txn *txn, uint8_t *key, size_t klen,
    struct shm_ofile *of)
{
	MDB_val k = { klen, key }, v;
	int rc;

	memset(of, 0, sizeof(*of));
	rc = mdb_get(txn, s->db_opens, &k, &v);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc != 0)
		return shm_err(rc);
	/* Read only: nothing writes through a view. */
	return shm_ofile_parse(v.mv_data, v.mv_size, of);
}

int
shm_ofile_view(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    struct shm_ofile *of)
{
	uint8_t key[SHM_FID_KEY_LEN];

	shm_fid_key(key, fid);
	return ofile_view_key(s, txn, key, sizeof(key), of);
}

static int
ofile_load_key(struct shm *s, MDB_txn *txn, uint8_t *key, size_t klen,
    struct shm_ofile *of)
{
	MDB_val k = { klen, key }, v = { 0, NULL };
	size_t need;
	int rc;

	memset(of, 0, sizeof(*of));
	rc = mdb_get(txn, s->db_opens, &k, &v);
	if (rc != 0 && rc != MDB_NOTFOUND)
		return shm_err(rc);
	if (rc == 0 && (rc = shm_ofile_parse(v.mv_data, v.mv_size, of)) != 0)
		return rc;
	/*
	 * A copy: the value may sit on a page this transaction rewrites in
	 * place, and the edit must not read what it is writing.  The records
	 * go at a fixed offset with the delete-pending list's whole room
	 * before them (the store writes the header just in front), and room
	 * for one more record after (an insert adds one at most).
	 */
	need = SHM_OFILE_REC_OFF + ((size_t)of->n + 1) * SHM_OREC_LEN;
	if (need > s->of_cap) {
		size_t cap = need * 2;
		void *p = realloc(s->of_buf, cap);

		if (p == NULL)
			return -ENOMEM;
		s->of_buf = p;
		s->of_cap = cap;
	}
	if (of->n > 0)
		memcpy(s->of_buf + SHM_OFILE_REC_OFF, of->rec,
		    (size_t)of->n * SHM_OREC_LEN);
	of->rec = s->of_buf + SHM_OFILE_REC_OFF;
	of->ncache0 = shm_ofile_ncaching(of);
	return 0;
}

int
shm_ofile_load(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    struct shm_ofile *of)
{
	uint8_t key[SHM_FID_KEY_LEN];

	shm_fid_key(key, fid);
	return ofile_load_key(s, txn, key, sizeof(key), of);
}

int
shm_ofile_find(const struct shm_ofile *of, uint64_t persistent_id)
{
	for (uint32_t i = 0; i < of->n; i++)
		if (shm_orec_id(of, i) == persistent_id)
			return (int)i;
	return -1;
}

void
shm_ofile_del(struct shm_ofile *of, uint32_t i)
{
	memmove(of->rec + (size_t)i * SHM_OREC_LEN, of->rec + (size_t)(i + 1) * SHM_OREC_LEN,
	    (size_t)(of->n - i - 1) * SHM_OREC_LEN);
	of->n--;
}

/* Stores a loaded value (from s->of_buf); an empty one goes. */
static int
ofile_store_key(struct shm *s, MDB_txn *txn, uint8_t *key, size_t klen,
    const struct shm_ofile *of)
{
	MDB_val k = { klen, key }, v;
	size_t hlen = SHM_OFILE_HDR + (size_t)of->ndel * SHM_ODEL_LEN;
	uint8_t *h = s->of_buf + SHM_OFILE_REC_OFF - hlen;
	int rc;

	if (of->n == 0 && of->ndel == 0) {
		rc = mdb_del(txn, s->db_opens, &k, NULL);
		return rc == MDB_NOTFOUND ? 0 : shm_err(rc);
	}
	h[0] = SHM_OFILE_V4;
	le32_put(h + 1, of->n);
	h[5] = (uint8_t)of->ndel;
	for (uint32_t i = 0; i < of->ndel; i++) {
		le64_put(h + SHM_OFILE_HDR + i * SHM_ODEL_LEN, of->del[i].link);
		le32_put(h + SHM_OFILE_HDR + i * SHM_ODEL_LEN + 8, of->del[i].uid);
	}
	v.mv_size = hlen + (size_t)of->n * SHM_OREC_LEN;
	v.mv_data = h;
	return shm_err(mdb_put(txn, s->db_opens, &k, &v, 0));
}

int
shm_ofile_store(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    struct shm_ofile *of)
{
	uint8_t key[SHM_FID_KEY_LEN];
	uint32_t ncache = shm_ofile_ncaching(of);
	int rc;

	shm_fid_key(key, fid);
	rc = ofile_store_key(s, txn, key, sizeof(key), of);
	if (rc == 0) {
		shm_hint_add(s, SHM_HINT_CACHING, fid, (int)ncache - (int)of->ncache0);
		of->ncache0 = ncache;
	}
	return rc;
}

/* MS-FSA 2.1.5.1.2: does an open (access, share) conflict with existing e? */
static int
shm_share_conflict(uint32_t e_access, uint32_t e_share, uint32_t access, uint32_t share)
{
	/* Opens for attributes or synchronisation only never conflict. */
	if ((access & SHM_DATA_ACCESS) == 0 || (e_access & SHM_DATA_ACCESS) == 0)
		return 0;
	if ((access & (SHM_FILE_READ_DATA | SHM_FILE_EXECUTE)) &&
	    !(e_share & SHM_FILE_SHARE_READ))
		return 1;
	if ((access & (SHM_FILE_WRITE_DATA | SHM_FILE_APPEND_DATA)) &&
	    !(e_share & SHM_FILE_SHARE_WRITE))
		return 1;
	if ((access & SHM_DELETE) && !(e_share & SHM_FILE_SHARE_DELETE))
		return 1;
	if ((e_access & (SHM_FILE_READ_DATA | SHM_FILE_EXECUTE)) &&
	    !(share & SHM_FILE_SHARE_READ))
		return 1;
	if ((e_access & (SHM_FILE_WRITE_DATA | SHM_FILE_APPEND_DATA)) &&
	    !(share & SHM_FILE_SHARE_WRITE))
		return 1;
	if ((e_access & SHM_DELETE) && !(share & SHM_FILE_SHARE_DELETE))
		return 1;
	return 0;
}

/*
 * The share-mode check against every open of the file: 0, -EIDRM (the
 * name `link` is delete pending; link NULL: not checked), -EBUSY.
 */
static int
shm_open_check(const struct shm_ofile *of, uint32_t access, uint32_t share,
    const uint64_t *link, struct shm_open_conflict *cf)
{
	struct shm_open_rec e;
	uint32_t i;

	if (link != NULL && ofile_del_find(of, *link) >= 0) {
		if (cf != NULL) {
			memset(cf, 0, sizeof(*cf));
			cf->delete_pending = 1;
		}
		return -EIDRM;
	}
	for (i = 0; i < of->n; i++) {
		const uint8_t *p = of->rec + (size_t)i * SHM_OREC_LEN;

		if (!shm_share_conflict(le32_get(p + OR_ACCESS), le32_get(p + OR_SHARE),
		    access, share))
			continue;
		if (cf != NULL) {
			shm_orec_get(p, &e);
			cf->persistent_id = e.persistent_id;
			cf->pid = e.pid;
			cf->session_id = e.session_id;
			cf->access = e.access;
			cf->share_access = e.share_access;
			cf->delete_pending = 0;
		}
		return -EBUSY;
	}
	return 0;
}

/*
 * The stream list of a file (shm.h, shm_open_remove_stream): a copy of
 * each open of any of its named streams, in an opens value under the
 * file's key plus one tag byte -- 17 bytes, never a file id, so the walks
 * over file ids (purge, status) pass it by.  A copy's lease_key field
 * holds its stream's key: a copy whose open is gone from its stream (its
 * worker died and was purged) is stale, ignored and dropped at the next
 * edit, so the list never needs the purge.
 */
#define SLIST_KEY_LEN	(SHM_FID_KEY_LEN + 1)
#define SLIST_TAG	'S'
#define OR_LEASE_KEY	38

static void
slist_key(uint8_t *k, const struct shm_file_id *base)
{
	shm_fid_key(k, base);
	k[SHM_FID_KEY_LEN] = SLIST_TAG;
}

/* Is the open a copy stands for still in its stream's value? */
static int
slist_copy_live(struct shm *s, MDB_txn *txn, const uint8_t *copy)
{
	uint8_t key[SHM_FID_KEY_LEN];
	struct shm_ofile of;

	memcpy(key, copy + OR_LEASE_KEY, sizeof(key));
	if (ofile_view_key(s, txn, key, sizeof(key), &of) != 0)
		return 1;	/* unknown: keep counting it */
	return shm_ofile_find(&of, le64_get(copy)) >= 0;
}

/*
 * The live stream opens of base (those opened by name *link only, when
 * link is not NULL): how many (0 or more, or -errno); with a DELETE open
 * to check (del), -EBUSY at the first that does not share delete, cf
 * filled in.
 */
static int
slist_scan(struct shm *s, MDB_txn *txn, const struct shm_file_id *base,
    const uint64_t *link, int del, struct shm_open_conflict *cf)
{
	uint8_t key[SLIST_KEY_LEN];
	struct shm_ofile of;
	struct shm_open_rec e;
	uint32_t i;
	int rc, n = 0;

	slist_key(key, base);
	if ((rc = ofile_view_key(s, txn, key, sizeof(key), &of)) != 0)
		return rc;
	for (i = 0; i < of.n; i++) {
		const uint8_t *p = of.rec + (size_t)i * SHM_OREC_LEN;

		if ((link != NULL && le64_get(p + OR_LINK) != *link) ||
		    !slist_copy_live(s, txn, p))
			continue;
		n++;
		/* Samba opens each stream for DELETE, sharing all */
		if (!del || !shm_share_conflict(le32_get(p + OR_ACCESS),
		    le32_get(p + OR_SHARE), SHM_DELETE, SHM_FILE_SHARE_READ |
		    SHM_FILE_SHARE_WRITE | SHM_FILE_SHARE_DELETE))
			continue;
		if (cf != NULL) {
			shm_orec_get(p, &e);
			memset(cf, 0, sizeof(*cf));
			cf->persistent_id = e.persistent_id;
			cf->pid = e.pid;
			cf->session_id = e.session_id;
			cf->access = e.access;
			cf->share_access = e.share_access;
		}
		return -EBUSY;
	}
	return n;
}

/*
 * Adds the copy of a new stream open (r, of stream fid) to base's list,
 * or removes the copy of persistent_id (r NULL); stale copies go too.
 * Uses s->of_buf: the caller is done with its own loaded value.
 */
static int
slist_edit(struct shm *s, MDB_txn *txn, const struct shm_file_id *base,
    const struct shm_file_id *fid, uint64_t persistent_id,
    const struct shm_open_rec *r)
{
	uint8_t key[SLIST_KEY_LEN], skey[SHM_FID_KEY_LEN];
	struct shm_open_rec c;
	struct shm_ofile of;
	uint32_t i;
	int rc;

	slist_key(key, base);
	shm_fid_key(skey, fid);
	if ((rc = ofile_load_key(s, txn, key, sizeof(key), &of)) != 0)
		return rc;
	for (i = of.n; i-- > 0;) {
		const uint8_t *p = of.rec + (size_t)i * SHM_OREC_LEN;

		if ((r == NULL && le64_get(p) == persistent_id &&
		    memcmp(p + OR_LEASE_KEY, skey, sizeof(skey)) == 0) ||
		    !slist_copy_live(s, txn, p))
			shm_ofile_del(&of, i);
	}
	if (r != NULL) {
		/* the share mode is what counts; a copy caches nothing */
		c = *r;
		c.oplock_level = SHM_OPLOCK_NONE;
		c.oplock_breaking_to = 0;
		c.lease_state = 0;
		c.flags = 0;
		memcpy(c.lease_key, skey, sizeof(skey));
		/* ofile_load_key left room for this one */
		shm_orec_put(of.rec + (size_t)of.n * SHM_OREC_LEN, &c);
		of.n++;
	}
	of.ndel = 0;
	return ofile_store_key(s, txn, key, sizeof(key), &of);
}

/*
 * A name left delete pending with no open of it in base's own value:
 * held for the stream opens made by that name (1), or left behind by
 * opens that are gone without a close (a dead worker's, purged; 0): then
 * nobody is left to unlink it and it is a name like any other again.
 */
static int
ofile_del_held(struct shm *s, MDB_txn *txn, const struct shm_file_id *base,
    const struct shm_ofile *of, uint64_t link)
{
	if (ofile_link_used(of, link, 0))
		return 1;
	return slist_scan(s, txn, base, &link, 0, NULL);
}

/*
 * A new stream open by name link: -EIDRM when that name of its file is
 * delete pending (unless nothing holds it any more: ofile_del_held).
 */
static int
slist_base_check(struct shm *s, MDB_txn *txn, const struct shm_file_id *base,
    uint64_t link, struct shm_open_conflict *cf)
{
	struct shm_ofile of;
	int rc, i;

	if ((rc = shm_ofile_view(s, txn, base, &of)) != 0)
		return rc;
	if (ofile_del_find(&of, link) < 0)
		return 0;
	if ((rc = ofile_del_held(s, txn, base, &of, link)) <= 0) {
		if (rc < 0 || (rc = shm_ofile_load(s, txn, base, &of)) != 0)
			return rc;
		if ((i = ofile_del_find(&of, link)) >= 0)
			ofile_del_drop(&of, (uint32_t)i);
		return shm_ofile_store(s, txn, base, &of);
	}
	if (cf != NULL) {
		memset(cf, 0, sizeof(*cf));
		cf->delete_pending = 1;
	}
	return -EIDRM;
}

/* The open's name (shm/oname.c), in the transaction that inserts it. */
static int
open_name_put(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    const struct shm_open_rec *r)
{
	uint8_t key[SHM_FID_KEY_LEN];

	shm_fid_key(key, fid);
	return shm_oname_put_txn(s, txn, key, r->persistent_id, r->name_share,
	    r->name_path, r->name_stream);
}

/*
 * The share-mode check and insert, in one write transaction of the file's
 * env; with claim (a new lease whose key is claimed in another env,
 * shm/claim.c), that env's writer lock is held too, taken in env index
 * order and committed after the file's env.
 */
static int
open_insert_once(struct shm *s, const struct shm_file_id *fid,
    const struct shm_open_rec *new, const struct shm_durable_rec *durable,
    struct shm_open_grant *grant, struct shm_open_conflict *cf,
    struct shm_env *claim)
{
	struct shm_env *fe = shm_env_fid(s, fid);
	struct shm_open_rec r = *new;
	struct shm_open_grant g;
	struct shm_ofile of;
	MDB_txn *txn;
	int rc, i;

	if ((rc = shm_claim_begin(s, claim, fe, 1)) != 0)
		return rc;
	if ((rc = shm_wbegin_kind(s, fe, &txn, SHM_TXN_CREATE)) != 0) {
		(void)shm_claim_end(s, 0);
		return rc;
	}
	if ((rc = shm_claim_begin(s, claim, fe, 0)) != 0)
		goto out;
	if (new->has_base && (rc = slist_base_check(s, txn, &new->stream_base,
	    new->link, cf)) != 0)
		goto out;
	if ((rc = shm_ofile_load(s, txn, fid, &of)) != 0)
		goto out;
	if (shm_ofile_find(&of, new->persistent_id) >= 0) {
		rc = -EEXIST;
		goto out;
	}
	if (!new->has_base && (i = ofile_del_find(&of, new->link)) >= 0) {
		if ((rc = ofile_del_held(s, txn, fid, &of, new->link)) < 0)
			goto out;
		if (rc == 0)
			ofile_del_drop(&of, (uint32_t)i);
	}
	if ((rc = shm_open_check(&of, new->access | new->check_access,
	    new->share_access, &new->link, cf)) != 0)
		goto out;
	if (!new->has_base && (new->access & SHM_DELETE) &&
	    (rc = slist_scan(s, txn, fid, NULL, 1, cf)) < 0)
		goto out;
	memset(&g, 0, sizeof(g));
	if (r.opened == 0)
		r.opened = (uint64_t)time(NULL);
	if (durable != NULL)
		r.flags |= SHM_OPEN_DURABLE;
	if ((rc = shm_lease_grant_txn(s, txn, fid, &of, &r, &g)) != 0)
		goto out;
	g.nopens = (int)of.n + 1;
	/* shm_ofile_load left room for this one. */
	shm_orec_put(of.rec + (size_t)of.n * SHM_OREC_LEN, &r);
	of.n++;
	if ((rc = shm_ofile_store(s, txn, fid, &of)) != 0)
		goto out;
	if (new->name_path != NULL && (rc = open_name_put(s, txn, fid, &r)) != 0)
		goto out;
	if (new->has_base && (rc = slist_edit(s, txn, &new->stream_base, fid,
	    r.persistent_id, &r)) != 0)
		goto out;
	if (durable != NULL) {
		struct shm_durable_rec *d = &s->dscratch;

		/* The durable record follows the open it belongs to. */
		*d = *durable;
		d->persistent_id = r.persistent_id;
		d->pid = r.pid;
		d->fid = *fid;
		if ((rc = shm_durable_put_txn(s, txn, d)) != 0)
			goto out;
	}
	if (s->test_claim_hook != NULL && new->oplock_level == SHM_OPLOCK_LEASE)
		s->test_claim_hook(s);
	rc = shm_wcommit(s, txn);
	txn = NULL;
	/* the claim after the lease: see shm/claim.c */
	(void)shm_claim_end(s, rc == 0);
	if (rc == 0 && grant != NULL)
		*grant = g;
out:
	if (txn != NULL) {
		shm_wabort(s, txn);
		(void)shm_claim_end(s, 0);
	}
	return rc;
}

int
shm_open_insert_ex(struct shm *s, const struct shm_file_id *fid,
    const struct shm_open_rec *new, const struct shm_durable_rec *durable,
    struct shm_open_grant *grant, struct shm_open_conflict *cf)
{
	struct shm_env *claim = NULL;
	int rc;

	if (new->persistent_id == 0)
		return -EINVAL;
	/* a stream and its file share an env: their ino is the same */
	if (new->has_base && shm_env_fid(s, &new->stream_base) != shm_env_fid(s, fid))
		return -EXDEV;
	if (new->oplock_level == SHM_OPLOCK_LEASE)
		claim = shm_claim_plan(s, fid, new->client_guid, new->lease_key);
	rc = open_insert_once(s, fid, new, durable, grant, cf, claim);
	/* the lease was gone by the time of the write: again, claiming it */
	if (rc == -EDEADLK)
		rc = open_insert_once(s, fid, new, durable, grant, cf,
		    shm_env_claim(s, new->client_guid, new->lease_key));
	return rc;
}

int
shm_open_insert(struct shm *s, const struct shm_file_id *fid,
    const struct shm_open_rec *new, struct shm_open_conflict *cf)
{
	return shm_open_insert_ex(s, fid, new, NULL, NULL, cf);
}

int
shm_open_share_check(struct shm *s, const struct shm_file_id *fid,
    uint32_t access, uint32_t share, struct shm_open_conflict *cf)
{
	struct shm_ofile of;
	MDB_txn *txn;
	int rc;

	if ((rc = shm_rbegin(s, shm_env_fid(s, fid), &txn)) != 0)
		return rc;
	if ((rc = shm_ofile_view(s, txn, fid, &of)) != 0 || of.n == 0)
		goto out;
	rc = shm_open_check(&of, access, share, NULL, cf);
out:
	shm_rend(s, txn);
	return rc;
}

int
shm_open_drop_txn(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    uint64_t persistent_id, unsigned flags, struct shm_open_rec *out,
    int *last, int *dp)
{
	uint8_t key[SHM_FID_KEY_LEN];
	struct shm_open_rec r;
	struct shm_ofile of;
	int rc, i, d;

	*last = *dp = 0;
	s->drop_del_uid = 0;
	shm_fid_key(key, fid);
	if ((rc = shm_ofile_load(s, txn, fid, &of)) != 0)
		return rc;
	if ((i = shm_ofile_find(&of, persistent_id)) < 0)
		return -ENOENT;
	shm_orec_get(of.rec + (size_t)i * SHM_OREC_LEN, &r);
	shm_ofile_del(&of, (uint32_t)i);
	/*
	 * MS-FSA: closing a delete-on-close open makes its name delete
	 * pending.  SHM_DROP_DOC comes from the open's own worker: its user
	 * is the token.  A full list (8 names pending) cannot take it: the
	 * name is deleted now if no other open holds it, else it stays (that
	 * delete is dropped).
	 */
	if ((flags & SHM_DROP_DOC) && (r.create_options & SHM_FILE_DELETE_ON_CLOSE) &&
	    ofile_del_add(&of, r.link, s->euid) != 0 && !ofile_link_used(&of, r.link, 1)) {
		*dp = 1;
		s->drop_del_uid = s->euid;
	}
	if (r.oplock_level == SHM_OPLOCK_LEASE &&
	    (rc = shm_lease_release_txn(s, txn, fid, &of, r.client_guid,
	    r.lease_key)) != 0)
		return rc;
	*last = of.n == 0;
	/*
	 * The name delete pending and no open of it left but POSIX ones (they
	 * keep the unlinked file): unlink it, unless its streams' opens hold it.
	 */
	if ((d = ofile_del_find(&of, r.link)) >= 0) {
		rc = ofile_link_used(&of, r.link, 1) ? 1 :
		    slist_scan(s, txn, fid, &r.link, 0, NULL);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			*dp = 1;
			s->drop_del_uid = of.del[d].uid;
			ofile_del_drop(&of, (uint32_t)d);
		} else
			*last = 0;	/* its streams' opens hold it */
	}
	if ((rc = shm_ofile_store(s, txn, fid, &of)) != 0)
		return rc;
	/* its name goes with it (the key sorts beside the value just stored) */
	if ((rc = shm_oname_del_txn(s, txn, key, persistent_id)) != 0)
		return rc;
	if (out != NULL)
		*out = r;
	return 0;
}

/*
 * After a stream open's close: its copy leaves the file's list; when it was
 * the last open of any kind by its name (link) and that name of the file
 * is delete pending, the name's entry goes and the caller unlinks it.
 */
static int
shm_open_drop_stream_txn(struct shm *s, MDB_txn *txn,
    const struct shm_file_id *fid, const struct shm_file_id *base,
    uint64_t persistent_id, uint64_t link, struct shm_close_result *res)
{
	struct shm_ofile of;
	int rc, i;

	if ((rc = slist_edit(s, txn, base, fid, persistent_id, NULL)) != 0)
		return rc;
	if ((rc = shm_ofile_view(s, txn, base, &of)) != 0)
		return rc;
	if (ofile_del_find(&of, link) < 0)
		return 0;
	if ((rc = ofile_del_held(s, txn, base, &of, link)) != 0)
		return rc < 0 ? rc : 0;
	if ((rc = shm_ofile_load(s, txn, base, &of)) != 0)
		return rc;
	if ((i = ofile_del_find(&of, link)) < 0)
		return 0;
	res->delete_base = 1;
	res->delete_uid = of.del[i].uid;
	ofile_del_drop(&of, (uint32_t)i);
	return shm_ofile_store(s, txn, base, &of);
}

static int
shm_open_remove_once(struct shm *s, const struct shm_file_id *fid,
    const struct shm_file_id *base, uint64_t persistent_id, unsigned flags,
    struct shm_close_result *res)
{
	struct shm_close_result local;
	struct shm_open_rec r;
	uint8_t dk[8];
	MDB_val dkv = { sizeof(dk), dk };
	MDB_txn *txn;
	int rc, last, dp;

	if (res == NULL)
		res = &local;
	memset(res, 0, sizeof(*res));
	/* a withdrawal belongs to a CREATE that did not complete */
	if ((rc = shm_wbegin_kind(s, shm_env_fid(s, fid), &txn, (flags & SHM_DROP_DOC) ?
	    SHM_TXN_CLOSE : SHM_TXN_OTHER)) != 0)
		return rc;
	rc = shm_open_drop_txn(s, txn, fid, persistent_id, flags, &r,
	    &last, &dp);
	if (rc != 0)
		goto out;
	if ((rc = shm_brlock_remove_open_txn(s, txn, fid, persistent_id, &res->wake)) != 0)
		goto out;
	/*
	 * Only a durable open has a durable record (shm_open_insert_ex and
	 * shm_durable_put flag it): for the others the lookup would be a
	 * second database searched with the writer lock held, for nothing.
	 */
	shm_be64_put(dk, persistent_id);
	rc = (r.flags & SHM_OPEN_DURABLE) ? mdb_del(txn, s->db_durable, &dkv,
	    NULL) : MDB_NOTFOUND;
	if (rc != 0 && rc != MDB_NOTFOUND) {
		rc = shm_err(rc);
		goto out;
	}
	res->last_close = last;
	res->delete_file = dp;
	res->delete_uid = dp ? s->drop_del_uid : 0;
	if (base != NULL &&
	    (rc = shm_open_drop_stream_txn(s, txn, fid, base, persistent_id,
	    r.link, res)) != 0)
		goto out;
	rc = shm_wcommit(s, txn);
	txn = NULL;
out:
	if (txn != NULL)
		shm_wabort(s, txn);
	if (rc != 0)
		memset(res, 0, sizeof(*res));
	return rc;
}

int
shm_open_remove(struct shm *s, const struct shm_file_id *fid,
    uint64_t persistent_id, struct shm_close_result *res)
{
	int rc;

	SHM_RETRY_FULL(s, rc, shm_open_remove_once(s, fid, NULL, persistent_id,
	    SHM_DROP_DOC, res));
	return rc;
}

int
shm_open_withdraw(struct shm *s, const struct shm_file_id *fid,
    const struct shm_file_id *base, uint64_t persistent_id)
{
	int rc;

	SHM_RETRY_FULL(s, rc, shm_open_remove_once(s, fid, base, persistent_id,
	    0, NULL));
	return rc;
}

int
shm_open_remove_stream(struct shm *s, const struct shm_file_id *fid,
    const struct shm_file_id *base, uint64_t persistent_id,
    struct shm_close_result *res)
{
	int rc;

	SHM_RETRY_FULL(s, rc, shm_open_remove_once(s, fid, base, persistent_id,
	    SHM_DROP_DOC, res));
	return rc;
}

int
shm_open_get(struct shm *s, const struct shm_file_id *fid, uint64_t persistent_id,
    struct shm_open_rec *out)
{
	struct shm_ofile of;
	MDB_txn *txn;
	int rc, i;

	if ((rc = shm_rbegin(s, shm_env_fid(s, fid), &txn)) != 0)
		return rc;
	if ((rc = shm_ofile_view(s, txn, fid, &of)) == 0) {
		if ((i = shm_ofile_find(&of, persistent_id)) >= 0)
			shm_orec_get(of.rec + (size_t)i * SHM_OREC_LEN, out);
		else
			rc = -ENOENT;
	}
	shm_rend(s, txn);
	return rc;
}

int
shm_open_set_delete_pending(struct shm *s, const struct shm_file_id *fid,
    uint64_t persistent_id, int on)
{
	struct shm_ofile of;
	MDB_txn *txn;
	uint64_t link;
	int rc, i;

	if ((rc = shm_wbegin(s, shm_env_fid(s, fid), &txn)) != 0)
		return rc;
	if ((rc = shm_ofile_load(s, txn, fid, &of)) != 0)
		goto out;
	if ((i = shm_ofile_find(&of, persistent_id)) < 0) {
		rc = -ENOENT;
		goto out;
	}
	link = le64_get(of.rec + (size_t)i * SHM_OREC_LEN + OR_LINK);
	/* Only a worker sets it, for its own user: the delete token. */
	if (on)
		rc = ofile_del_add(&of, link, s->euid);
	else if ((i = ofile_del_find(&of, link)) >= 0)
		ofile_del_drop(&of, (uint32_t)i);
	if (rc == 0)
		rc = shm_ofile_store(s, txn, fid, &of);
out:
	return shm_wend(s, txn, rc);
}

int
shm_open_get_delete_pending(struct shm *s, const struct shm_file_id *fid,
    uint64_t persistent_id, int *on)
{
	struct shm_ofile of;
	MDB_txn *txn;
	int rc, i;

	*on = 0;
	if ((rc = shm_rbegin(s, shm_env_fid(s, fid), &txn)) != 0)
		return rc;
	if ((rc = shm_ofile_view(s, txn, fid, &of)) == 0) {
		if ((i = shm_ofile_find(&of, persistent_id)) >= 0)
			*on = ofile_del_find(&of, le64_get(of.rec +
			    (size_t)i * SHM_OREC_LEN + OR_LINK)) >= 0;
		else
			rc = -ENOENT;
	}
	shm_rend(s, txn);
	return rc;
}

int
shm_open_count(struct shm *s, const struct shm_file_id *fid, int *n)
{
	struct shm_ofile of;
	MDB_txn *txn;
	int rc;

	*n = 0;
	if ((rc = shm_rbegin(s, shm_env_fid(s, fid), &txn)) != 0)
		return rc;
	if ((rc = shm_ofile_view(s, txn, fid, &of)) == 0)
		*n = (int)of.n;
	shm_rend(s, txn);
	return rc;
}

/*
 * Renames name from to name to in the opens value under key; the opens
 * moved get path as their name when made through share (path NULL: no
 * name changes).  A stream list's copy names its stream's key.
 */
static int
ofile_relink_key(struct shm *s, MDB_txn *txn, uint8_t *key, size_t klen,
    uint64_t from, uint64_t to, const char *share, const char *path)
{
	struct shm_ofile of;
	uint8_t *p;
	int rc, i, edited = 0;

	if ((rc = ofile_load_key(s, txn, key, klen, &of)) != 0)
		return rc;
	for (uint32_t j = 0; j < of.n; j++) {
		p = of.rec + (size_t)j * SHM_OREC_LEN;
		if (le64_get(p + OR_LINK) != from)
			continue;
		le64_put(p + OR_LINK, to);
		edited = 1;
		if (path != NULL && (rc = shm_oname_rename_txn(s, txn,
		    klen == SLIST_KEY_LEN ? p + OR_LEASE_KEY : key, le64_get(p),
		    share, path)) != 0)
			return rc;
	}
	if ((i = ofile_del_find(&of, from)) >= 0) {
		of.del[i].link = to;
		edited = 1;
	}
	return edited ? ofile_store_key(s, txn, key, klen, &of) : 0;
}

int
shm_open_relink(struct shm *s, const struct shm_file_id *fid, uint64_t from,
    uint64_t to, const char *share, const char *path)
{
	uint8_t key[SLIST_KEY_LEN];
	MDB_txn *txn;
	int rc;

	if (from == to)
		return 0;
	if ((rc = shm_wbegin(s, shm_env_fid(s, fid), &txn)) != 0)
		return rc;
	slist_key(key, fid);
	/* One scratch buffer: each value is loaded and stored in turn. */
	if (share == NULL)
		path = NULL;
	if ((rc = ofile_relink_key(s, txn, key, SLIST_KEY_LEN, from, to, share,
	    path)) == 0)
		rc = ofile_relink_key(s, txn, key, SHM_FID_KEY_LEN, from, to,
		    share, path);
	return shm_wend(s, txn, rc);
}

struct open_walk {
	shm_open_fn		 fn;
	void			*arg;
	struct shm_open_rec	 r;
};

static int
open_visit(const MDB_val *k, const MDB_val *v, void *arg)
{
	struct open_walk *w = arg;
	struct shm_file_id fid;
	struct shm_ofile of;

	if (k->mv_size != SHM_FID_KEY_LEN ||
	    shm_ofile_parse(v->mv_data, v->mv_size, &of) != 0)
		return 0;
	shm_fid_from_key(&fid, k->mv_data);
	for (uint32_t i = 0; i < of.n; i++) {
		shm_orec_get(of.rec + (size_t)i * SHM_OREC_LEN, &w->r);
		if (w->fn(&fid, &w->r, w->arg) != 0)
			return 1;
	}
	return 0;
}

int
shm_foreach_open(struct shm *s, shm_open_fn fn, void *arg)
{
	struct open_walk w = { .fn = fn, .arg = arg };

	return shm_rec_walk_data(s, s->db_opens, open_visit, &w);
}
