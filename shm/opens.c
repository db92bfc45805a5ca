/*
 * Opens and share modes.  A file's opens sit under keys fid||persistent id
 * right after the file's header (key fid alone, present only while the file
 * is delete pending), so one cursor range visits everything about a file.
 * The share-mode check and the insert happen in one write transaction, so
 * two workers can never both get a conflicting open.
 */
#include <errno.h>
#include <time.h>

#include "shm/shm_priv.h"

#define SHM_HDR_DELETE_PENDING	0x1

/* Access that takes part in the sharing check, MS-FSA 2.1.5.1.2 */
#define SHM_DATA_ACCESS (SHM_FILE_READ_DATA | SHM_FILE_WRITE_DATA | \
	SHM_FILE_APPEND_DATA | SHM_FILE_EXECUTE | SHM_DELETE)

size_t
shm_open_encode(uint8_t *buf, size_t size, const struct shm_open_rec *r)
{
	struct wcur w;

	wcur_init(&w, buf, size);
	wcur_u8(&w, SHM_REC_V1);
	wcur_le64(&w, r->persistent_id);
	wcur_le32(&w, (uint32_t)r->pid);
	wcur_le64(&w, r->session_id);
	wcur_le32(&w, r->access);
	wcur_le32(&w, r->share_access);
	wcur_le32(&w, r->create_options);
	wcur_u8(&w, r->oplock_level);
	wcur_u8(&w, r->oplock_breaking_to);
	wcur_le32(&w, r->lease_state);
	wcur_bytes(&w, r->lease_key, SHM_GUID_LEN);
	wcur_bytes(&w, r->client_guid, SHM_GUID_LEN);
	wcur_le32(&w, r->flags);
	wcur_le64(&w, r->opened);
	return w.err ? 0 : wcur_off(&w);
}

int
shm_open_decode(const void *buf, size_t len, struct shm_open_rec *r)
{
	struct cur c;

	cur_init(&c, buf, len);
	if (cur_u8(&c) != SHM_REC_V1)
		return -EPROTO;
	r->persistent_id = cur_le64(&c);
	r->pid = (pid_t)cur_le32(&c);
	r->session_id = cur_le64(&c);
	r->access = cur_le32(&c);
	r->share_access = cur_le32(&c);
	r->create_options = cur_le32(&c);
	r->oplock_level = cur_u8(&c);
	r->oplock_breaking_to = cur_u8(&c);
	r->lease_state = cur_le32(&c);
	cur_bytes(&c, r->lease_key, SHM_GUID_LEN);
	cur_bytes(&c, r->client_guid, SHM_GUID_LEN);
	r->flags = cur_le32(&c);
	r->opened = cur_le64(&c);
	return c.err ? -EPROTO : 0;
}

int
shm_open_put_txn(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    const struct shm_open_rec *r)
{
	uint8_t key[SHM_OPEN_KEY_LEN], buf[SHM_OPEN_ENC_MAX];
	MDB_val k = { sizeof(key), key }, v = { 0, buf };

	shm_open_key(key, fid, r->persistent_id);
	if ((v.mv_size = shm_open_encode(buf, sizeof(buf), r)) == 0)
		return -EINVAL;
	return shm_err(mdb_put(txn, s->db_opens, &k, &v, 0));
}

static int
shm_hdr_get(MDB_val *v)
{
	struct cur c;
	uint32_t flags;

	cur_init(&c, v->mv_data, v->mv_size);
	if (cur_u8(&c) != SHM_REC_V1)
		return 0;
	flags = cur_le32(&c);
	return c.err ? 0 : (int)flags;
}

static int
shm_hdr_put_txn(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    uint32_t flags)
{
	uint8_t key[SHM_FID_KEY_LEN], buf[8];
	MDB_val k = { sizeof(key), key }, v = { 5, buf };
	int rc;

	shm_fid_key(key, fid);
	if (flags == 0) {
		rc = mdb_del(txn, s->db_opens, &k, NULL);
		return rc == MDB_NOTFOUND ? 0 : shm_err(rc);
	}
	buf[0] = SHM_REC_V1;
	le32_put(buf + 1, flags);
	return shm_err(mdb_put(txn, s->db_opens, &k, &v, 0));
}

/* MS-FSA 2.1.5.1.2: does an open (access, share) conflict with existing e? */
static int
shm_share_conflict(const struct shm_open_rec *e, uint32_t access, uint32_t share)
{
	/* Opens for attributes or synchronisation only never conflict. */
	if ((access & SHM_DATA_ACCESS) == 0 || (e->access & SHM_DATA_ACCESS) == 0)
		return 0;
	if ((access & (SHM_FILE_READ_DATA | SHM_FILE_EXECUTE)) &&
	    !(e->share_access & SHM_FILE_SHARE_READ))
		return 1;
	if ((access & (SHM_FILE_WRITE_DATA | SHM_FILE_APPEND_DATA)) &&
	    !(e->share_access & SHM_FILE_SHARE_WRITE))
		return 1;
	if ((access & SHM_DELETE) && !(e->share_access & SHM_FILE_SHARE_DELETE))
		return 1;
	if ((e->access & (SHM_FILE_READ_DATA | SHM_FILE_EXECUTE)) &&
	    !(share & SHM_FILE_SHARE_READ))
		return 1;
	if ((e->access & (SHM_FILE_WRITE_DATA | SHM_FILE_APPEND_DATA)) &&
	    !(share & SHM_FILE_SHARE_WRITE))
		return 1;
	if ((e->access & SHM_DELETE) && !(share & SHM_FILE_SHARE_DELETE))
		return 1;
	return 0;
}

/*
 * Walks the file's records: the header's delete-pending flag, and the first
 * open that conflicts with (access, share).  Returns 0, -EIDRM, -EBUSY.
 */
static int
shm_open_scan(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    uint32_t access, uint32_t share, int check, struct shm_open_conflict *cf,
    int *nopens)
{
	uint8_t fk[SHM_FID_KEY_LEN];
	MDB_cursor *cu;
	MDB_val k = { sizeof(fk), fk }, v;
	struct shm_open_rec e;
	int rc, op = MDB_SET_RANGE, ret = 0, n = 0;

	shm_fid_key(fk, fid);
	if ((rc = mdb_cursor_open(txn, s->db_opens, &cu)) != 0)
		return shm_err(rc);
	while ((rc = mdb_cursor_get(cu, &k, &v, op)) == 0) {
		op = MDB_NEXT;
		if (k.mv_size < SHM_FID_KEY_LEN || memcmp(k.mv_data, fk, sizeof(fk)) != 0)
			break;
		if (k.mv_size == SHM_FID_KEY_LEN) {
			if (check && (shm_hdr_get(&v) & SHM_HDR_DELETE_PENDING)) {
				if (cf != NULL) {
					memset(cf, 0, sizeof(*cf));
					cf->delete_pending = 1;
				}
				ret = -EIDRM;
				break;
			}
			continue;
		}
		n++;
		if (!check || ret != 0)
			continue;
		if (shm_open_decode(v.mv_data, v.mv_size, &e) != 0)
			continue;	/* unreadable: never block on it */
		if (shm_share_conflict(&e, access, share)) {
			if (cf != NULL) {
				cf->persistent_id = e.persistent_id;
				cf->pid = e.pid;
				cf->session_id = e.session_id;
				cf->access = e.access;
				cf->share_access = e.share_access;
				cf->delete_pending = 0;
			}
			ret = -EBUSY;
		}
	}
	mdb_cursor_close(cu);
	if (rc != 0 && rc != MDB_NOTFOUND)
		return shm_err(rc);
	if (nopens != NULL)
		*nopens = n;
	return ret;
}

int
shm_open_insert_ex(struct shm *s, const struct shm_file_id *fid,
    const struct shm_open_rec *new, const struct shm_durable_rec *durable,
    struct shm_open_grant *grant, struct shm_open_conflict *cf)
{
	struct shm_open_rec r = *new;
	struct shm_open_grant g;
	uint8_t key[SHM_OPEN_KEY_LEN], buf[SHM_OPEN_ENC_MAX];
	MDB_val k = { sizeof(key), key }, v = { 0, buf };
	MDB_txn *txn;
	int rc, n;

	if (new->persistent_id == 0)
		return -EINVAL;
	if ((rc = shm_wbegin(s, &txn)) != 0)
		return rc;
	rc = shm_open_scan(s, txn, fid, new->access, new->share_access, 1, cf, &n);
	if (rc != 0)
		goto out;
	memset(&g, 0, sizeof(g));
	if (r.opened == 0)
		r.opened = (uint64_t)time(NULL);
	if (durable != NULL)
		r.flags |= SHM_OPEN_DURABLE;
	if ((rc = shm_lease_grant_txn(s, txn, fid, &r, &g)) != 0)
		goto out;
	g.nopens = n + 1;
	shm_open_key(key, fid, r.persistent_id);
	if ((v.mv_size = shm_open_encode(buf, sizeof(buf), &r)) == 0) {
		rc = -EINVAL;
		goto out;
	}
	if ((rc = shm_err(mdb_put(txn, s->db_opens, &k, &v, MDB_NOOVERWRITE))) != 0)
		goto out;
	if (durable != NULL) {
		struct shm_durable_rec d = *durable;

		/* The durable record follows the open it belongs to. */
		d.persistent_id = r.persistent_id;
		d.pid = r.pid;
		d.fid = *fid;
		if ((rc = shm_durable_put_txn(s, txn, &d)) != 0)
			goto out;
	}
	rc = shm_wcommit(s, txn);
	txn = NULL;
	if (rc == 0 && grant != NULL)
		*grant = g;
out:
	if (txn != NULL)
		mdb_txn_abort(txn);
	return rc;
}

int
shm_open_insert(struct shm *s, const struct shm_file_id *fid,
    const struct shm_open_rec *new, struct shm_open_conflict *cf)
{
	return shm_open_insert_ex(s, fid, new, NULL, NULL, cf);
}

int
shm_open_file_tidy_txn(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    int *last, int *delete_pending)
{
	uint8_t fk[SHM_FID_KEY_LEN];
	MDB_val k = { sizeof(fk), fk }, v;
	MDB_cursor *cu;
	int rc, op = MDB_SET_RANGE, dp = 0, n = 0;

	shm_fid_key(fk, fid);
	if ((rc = mdb_cursor_open(txn, s->db_opens, &cu)) != 0)
		return shm_err(rc);
	while (n == 0 && (rc = mdb_cursor_get(cu, &k, &v, op)) == 0) {
		op = MDB_NEXT;
		if (k.mv_size < SHM_FID_KEY_LEN || memcmp(k.mv_data, fk, sizeof(fk)) != 0)
			break;
		if (k.mv_size == SHM_FID_KEY_LEN)
			dp = (shm_hdr_get(&v) & SHM_HDR_DELETE_PENDING) != 0;
		else
			n++;
	}
	mdb_cursor_close(cu);
	if (rc != 0 && rc != MDB_NOTFOUND)
		return shm_err(rc);
	*last = n == 0;
	*delete_pending = n == 0 && dp;
	/* The header only lives as long as the file has opens. */
	if (n == 0 && dp)
		return shm_hdr_put_txn(s, txn, fid, 0);
	return 0;
}

static int
shm_open_remove_once(struct shm *s, const struct shm_file_id *fid,
    uint64_t persistent_id, struct shm_close_result *res)
{
	struct shm_close_result local;
	struct shm_open_rec r;
	uint8_t key[SHM_OPEN_KEY_LEN], dk[8];
	MDB_val k = { sizeof(key), key }, v, dkv = { sizeof(dk), dk };
	MDB_txn *txn;
	int rc, last, dp;

	if (res == NULL)
		res = &local;
	memset(res, 0, sizeof(*res));
	if ((rc = shm_wbegin(s, &txn)) != 0)
		return rc;
	shm_open_key(key, fid, persistent_id);
	if ((rc = shm_err(mdb_get(txn, s->db_opens, &k, &v))) != 0)
		goto out;
	if ((rc = shm_open_decode(v.mv_data, v.mv_size, &r)) != 0)
		goto out;
	if ((rc = shm_err(mdb_del(txn, s->db_opens, &k, NULL))) != 0)
		goto out;
	/* MS-FSA: closing a delete-on-close open makes the file delete pending. */
	if ((r.create_options & SHM_FILE_DELETE_ON_CLOSE) &&
	    (rc = shm_hdr_put_txn(s, txn, fid, SHM_HDR_DELETE_PENDING)) != 0)
		goto out;
	if ((rc = shm_brlock_remove_open_txn(s, txn, fid, persistent_id, &res->wake)) != 0)
		goto out;
	shm_be64_put(dk, persistent_id);
	rc = mdb_del(txn, s->db_durable, &dkv, NULL);
	if (rc != 0 && rc != MDB_NOTFOUND) {
		rc = shm_err(rc);
		goto out;
	}
	if (r.oplock_level == SHM_OPLOCK_LEASE &&
	    (rc = shm_lease_release_txn(s, txn, fid, r.client_guid, r.lease_key)) != 0)
		goto out;
	if ((rc = shm_open_file_tidy_txn(s, txn, fid, &last, &dp)) != 0)
		goto out;
	res->last_close = last;
	res->delete_file = dp;
	rc = shm_wcommit(s, txn);
	txn = NULL;
out:
	if (txn != NULL)
		mdb_txn_abort(txn);
	if (rc != 0)
		memset(res, 0, sizeof(*res));
	return rc;
}

int
shm_open_remove(struct shm *s, const struct shm_file_id *fid,
    uint64_t persistent_id, struct shm_close_result *res)
{
	int rc;

	SHM_RETRY_FULL(s, rc, shm_open_remove_once(s, fid, persistent_id, res));
	return rc;
}

int
shm_open_get(struct shm *s, const struct shm_file_id *fid, uint64_t persistent_id,
    struct shm_open_rec *out)
{
	uint8_t key[SHM_OPEN_KEY_LEN];
	MDB_val k = { sizeof(key), key }, v;
	MDB_txn *txn;
	int rc;

	if ((rc = shm_rbegin(s, &txn)) != 0)
		return rc;
	shm_open_key(key, fid, persistent_id);
	if ((rc = shm_err(mdb_get(txn, s->db_opens, &k, &v))) == 0)
		rc = shm_open_decode(v.mv_data, v.mv_size, out);
	shm_rend(s, txn);
	return rc;
}

int
shm_open_set_delete_pending(struct shm *s, const struct shm_file_id *fid, int on)
{
	MDB_txn *txn;
	int rc;

	if ((rc = shm_wbegin(s, &txn)) != 0)
		return rc;
	rc = shm_hdr_put_txn(s, txn, fid, on ? SHM_HDR_DELETE_PENDING : 0);
	if (rc != 0) {
		mdb_txn_abort(txn);
		return rc;
	}
	return shm_wcommit(s, txn);
}

int
shm_open_get_delete_pending(struct shm *s, const struct shm_file_id *fid, int *on)
{
	uint8_t key[SHM_FID_KEY_LEN];
	MDB_val k = { sizeof(key), key }, v;
	MDB_txn *txn;
	int rc;

	*on = 0;
	if ((rc = shm_rbegin(s, &txn)) != 0)
		return rc;
	shm_fid_key(key, fid);
	rc = mdb_get(txn, s->db_opens, &k, &v);
	if (rc == 0)
		*on = (shm_hdr_get(&v) & SHM_HDR_DELETE_PENDING) != 0;
	shm_rend(s, txn);
	return rc == MDB_NOTFOUND ? 0 : shm_err(rc);
}

int
shm_open_count(struct shm *s, const struct shm_file_id *fid, int *n)
{
	MDB_txn *txn;
	int rc;

	if ((rc = shm_rbegin(s, &txn)) != 0)
		return rc;
	rc = shm_open_scan(s, txn, fid, 0, 0, 0, NULL, n);
	shm_rend(s, txn);
	return rc;
}

int
shm_foreach_open(struct shm *s, shm_open_fn fn, void *arg)
{
	MDB_cursor *cu;
	MDB_val k, v;
	MDB_txn *txn;
	struct shm_file_id fid;
	struct shm_open_rec r;
	int rc, op = MDB_FIRST;

	if ((rc = shm_rbegin(s, &txn)) != 0)
		return rc;
	if ((rc = mdb_cursor_open(txn, s->db_opens, &cu)) != 0) {
		shm_rend(s, txn);
		return shm_err(rc);
	}
	while ((rc = mdb_cursor_get(cu, &k, &v, op)) == 0) {
		op = MDB_NEXT;
		if (k.mv_size != SHM_OPEN_KEY_LEN ||
		    shm_open_decode(v.mv_data, v.mv_size, &r) != 0)
			continue;
		shm_fid_from_key(&fid, k.mv_data);
		if (fn(&fid, &r, arg) != 0)
			break;
	}
	mdb_cursor_close(cu);
	shm_rend(s, txn);
	return rc == 0 || rc == MDB_NOTFOUND ? 0 : shm_err(rc);
}
