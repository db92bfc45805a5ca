/*
 * The name each open was made by, for the administrator's listing of open
 * files (srvsvc NetrFileEnum / NetrFileGetInfo level 3: fi3_pathname).
 *
 * A record per open in the opens database of the file's data env, under
 * the file's key, a tag byte and the persistent id (25 bytes: never a
 * file id, so the walks over file ids pass it by).  Its key sorts right
 * after the file's opens value, so the CREATE that puts it and the CLOSE
 * that deletes it mostly touch the leaf page their transaction rewrites
 * anyway: one more put or delete in it, no second tree.
 *
 * Value v1: u8 version, u8 flags (SHM_ONAME_TRUNC), u16 share length,
 * the share name, u16 path length, the path below the share's root
 * (UTF-8, '/'-separated, a named stream as ":name" after it); exact
 * length.  A path is kept to SHM_ONAME_PATH_MAX bytes (its tail: the
 * file's name is what tells an administrator which file), so that a
 * record stays well inside one LMDB node (about 2 KiB on 4 KiB pages:
 * a larger value goes to overflow pages of its own, a page allocation
 * per CREATE).
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "shm/shm_priv.h"

#define ONAME_V1	1
#define ONAME_TAG	'N'

static void
oname_key(uint8_t *k, const uint8_t *fidkey, uint64_t persistent_id)
{
	memcpy(k, fidkey, SHM_FID_KEY_LEN);
	k[SHM_FID_KEY_LEN] = ONAME_TAG;
	shm_be64_put(k + SHM_FID_KEY_LEN + 1, persistent_id);
}

/* The bytes of a ++ ":" ++ b (b empty: a alone) from index skip on. */
static size_t
oname_copy_from(uint8_t *dst, const char *a, size_t alen, const char *b,
    size_t blen, size_t skip)
{
	const char *part[3] = { a, ":", b };
	size_t len[3] = { alen, blen > 0, blen }, n = 0;

	for (int i = 0; i < 3; i++) {
		if (skip >= len[i]) {
			skip -= len[i];
			continue;
		}
		memcpy(dst + n, part[i] + skip, len[i] - skip);
		n += len[i] - skip;
		skip = 0;
	}
	return n;
}

/* The byte at index i of a ++ ":" ++ b. */
static uint8_t
oname_byte_at(const char *a, size_t alen, const char *b, size_t i)
{
	if (i < alen)
		return (uint8_t)a[i];
	return i == alen ? ':' : (uint8_t)b[i - alen - 1];
}

size_t
shm_open_name_encode(uint8_t *buf, const char *share, const char *path,
    const char *stream)
{
	size_t sl = share != NULL ? strnlen(share, SHM_NAME_MAX - 1) : 0;
	size_t pl = strlen(path), tl = stream != NULL ? strlen(stream) : 0;
	size_t total = pl + (tl > 0 ? 1 + tl : 0), skip = 0, n;

	buf[0] = ONAME_V1;
	buf[1] = 0;
	if (total > SHM_ONAME_PATH_MAX) {
		/* the tail, from the start of a UTF-8 character */
		skip = total - SHM_ONAME_PATH_MAX;
		while (skip < total &&
		    (oname_byte_at(path, pl, stream, skip) & 0xc0) == 0x80)
			skip++;
		buf[1] = SHM_ONAME_TRUNC;
	}
	le16_put(buf + 2, (uint16_t)sl);
	if (sl > 0)
		memcpy(buf + 4, share, sl);
	n = oname_copy_from(buf + 6 + sl, path, pl, stream, tl, skip);
	le16_put(buf + 4 + sl, (uint16_t)n);
	return 6 + sl + n;
}

/* A string of the record: len bytes, no NUL among them, into dst. */
static int
oname_str(struct cur *c, char *dst, size_t cap)
{
	size_t len = cur_le16(c);

	if (c->err || len >= cap || (size_t)(c->end - c->p) < len ||
	    memchr(c->p, '\0', len) != NULL)
		return -EPROTO;
	memcpy(dst, c->p, len);
	dst[len] = '\0';
	cur_skip(c, len);
	return 0;
}

int
shm_open_name_decode(const void *val, size_t len, struct shm_open_name *out)
{
	struct cur c;

	memset(out, 0, sizeof(*out));
	cur_init(&c, val, len);
	if (cur_u8(&c) != ONAME_V1)
		return -EPROTO;
	out->flags = cur_u8(&c);
	if (c.err || (out->flags & ~SHM_ONAME_TRUNC) != 0 ||
	    oname_str(&c, out->share, sizeof(out->share)) != 0 ||
	    oname_str(&c, out->path, sizeof(out->path)) != 0 ||
	    c.p != c.end) {
		memset(out, 0, sizeof(*out));
		return -EPROTO;
	}
	return 0;
}

int
shm_oname_put_txn(struct shm *s, MDB_txn *txn, const uint8_t *fidkey,
    uint64_t persistent_id, const char *share, const char *path,
    const char *stream)
{
	uint8_t k[SHM_ONAME_KEY_LEN];
	MDB_val kv = { sizeof(k), k }, v;

	oname_key(k, fidkey, persistent_id);
	v.mv_size = shm_open_name_encode(s->oname_buf, share, path, stream);
	v.mv_data = s->oname_buf;
	return shm_err(mdb_put(txn, s->db_opens, &kv, &v, 0));
}

int
shm_oname_del_txn(struct shm *s, MDB_txn *txn, const uint8_t *fidkey,
    uint64_t persistent_id)
{
	uint8_t k[SHM_ONAME_KEY_LEN];
	MDB_val kv = { sizeof(k), k };
	int rc;

	oname_key(k, fidkey, persistent_id);
	rc = mdb_del(txn, s->db_opens, &kv, NULL);
	return rc == MDB_NOTFOUND ? 0 : shm_err(rc);
}

/*
 * A rename: the open's recorded name, when made through share, becomes
 * path, with the named stream it had (the ":name" of its last component).
 */
int
shm_oname_rename_txn(struct shm *s, MDB_txn *txn, const uint8_t *fidkey,
    uint64_t persistent_id, const char *share, const char *path)
{
	static struct shm_open_name old;	/* 1.3 KiB: off the stack */
	uint8_t k[SHM_ONAME_KEY_LEN];
	MDB_val kv = { sizeof(k), k }, v;
	const char *slash, *colon;
	int rc;

	oname_key(k, fidkey, persistent_id);
	rc = mdb_get(txn, s->db_opens, &kv, &v);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc != 0)
		return shm_err(rc);
	/* a malformed record, or another share's view of the file: left */
	if (shm_open_name_decode(v.mv_data, v.mv_size, &old) != 0 ||
	    strcasecmp(old.share, share) != 0)
		return 0;
	/* a stream's id has the top bit of its device set (its key's first) */
	slash = strrchr(old.path, '/');
	colon = (fidkey[0] & 0x80) ? strchr(slash != NULL ? slash : old.path,
	    ':') : NULL;
	return shm_oname_put_txn(s, txn, fidkey, persistent_id, share, path,
	    colon != NULL ? colon + 1 : NULL);
}

int
shm_open_name_get(struct shm *s, const struct shm_file_id *fid,
    uint64_t persistent_id, struct shm_open_name *out)
{
	uint8_t fk[SHM_FID_KEY_LEN], k[SHM_ONAME_KEY_LEN];
	MDB_val kv = { sizeof(k), k }, v;
	MDB_txn *txn;
	int rc;

	memset(out, 0, sizeof(*out));
	shm_fid_key(fk, fid);
	oname_key(k, fk, persistent_id);
	if ((rc = shm_rbegin(s, shm_env_fid(s, fid), &txn)) != 0)
		return rc;
	if ((rc = shm_err(mdb_get(txn, s->db_opens, &kv, &v))) == 0)
		rc = shm_open_name_decode(v.mv_data, v.mv_size, out);
	shm_rend(s, txn);
	return rc;
}
